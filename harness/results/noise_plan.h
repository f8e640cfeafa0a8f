/* plan --noise FILE.csv: the effective batch of each series of a run
 * against the gradient noise scale it measured (docs/noise-scale.md). */
#ifndef ACCUBENCH_NOISE_PLAN_H
#define ACCUBENCH_NOISE_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "csv_read.h"

/* Prints one line per series with a noise scale and the paper's caveat
 * once. 0; 1 when no row has one; 2 with a one-line reason on stderr when
 * the file cannot be read. */
int noise_plan_main(FILE *out, const char *csv_path);

/* A series of the noise scale: the rows of one model, effective batch,
 * mode, reduction, backend and device count (the figure does not depend
 * on the split, the sync, the shard or the recompute; docs/noise-scale.md).
 * Sets out[i] to the index of the row in row i's series whose estimate is
 * tightest (the least relative error; the first of equals), among those a
 * report may use (ran ok, an exact reduction, a noise scale with a finite
 * error); n where row i's series has none. Linear in n. 0, or -1 out of
 * memory. plan --noise and the report print one line per series, from
 * that row. */
int noise_tightest(const csv_row *rows, size_t n, size_t *out);

/* What E against a noise scale of b +- err (one jackknife error) says,
 * where two errors either way leave it on one side; else that the
 * estimate cannot tell (the report and plan --noise both say this). */
const char *noise_scale_verdict(double effective, double b, double err);

#endif
