/* plan --noise FILE.csv: the effective batch of each series of a run
 * against the gradient noise scale it measured (docs/noise-scale.md). */
#ifndef ACCUBENCH_NOISE_PLAN_H
#define ACCUBENCH_NOISE_PLAN_H

#include <stdio.h>

/* Prints one line per series with a noise scale and the paper's caveat
 * once. 0; 1 when no row has one; 2 with a one-line reason on stderr when
 * the file cannot be read. */
int noise_plan_main(FILE *out, const char *csv_path);

/* What E against a noise scale of b +- err (one jackknife error) says,
 * where two errors either way leave it on one side; else that the
 * estimate cannot tell (the report and plan --noise both say this). */
const char *noise_scale_verdict(double effective, double b, double err);

#endif
