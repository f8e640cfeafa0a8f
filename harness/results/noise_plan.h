/* plan --noise FILE.csv: the effective batch of each series of a run
 * against the gradient noise scale it measured (docs/noise-scale.md). */
#ifndef ACCUBENCH_NOISE_PLAN_H
#define ACCUBENCH_NOISE_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "csv_read.h"
#include "noise_pool.h"

/* Prints one line per series with a noise scale and the paper's caveat
 * once. 0; 1 when no row has one; 2 with a one-line reason on stderr when
 * the file cannot be read. */
int noise_plan_main(FILE *out, const char *csv_path);

/* A series of the noise scale: the rows of one model, effective batch,
 * mode, reduction, backend and device count (the figure does not depend
 * on the split, the sync, the shard or the recompute; docs/noise-scale.md).
 * Its estimate is its rows' that a report may use (ran ok, an exact
 * reduction, an estimate noise_pool_takes) pooled by noise_pool.h's rule,
 * the one the time-to-target table pools B_simple by. The splits of one E
 * read the same windows from the same weights: one figure measured
 * several times, whose least stated error is no fair pick (of several
 * errors the least tends to be one that came out too small).
 * Sets head[i] to the first such row of row i's series in the file (n
 * where the series has none) and pool[h] of each head h to its series'
 * pool (pool[] of n entries; the others zero). Linear in n. 0, or -1 out
 * of memory. plan --noise and the report print one line per series, at
 * its head. */
int noise_series_pools(const csv_row *rows, size_t n, size_t *head, noise_pool *pool);

/* "pooled from 3 rows" into out, and out, where a series pooled more
 * than one row; NULL where it took one (plan --noise and the report then
 * name that row's split). */
const char *noise_pooled_text(const noise_pool *p, char *out, size_t len);

/* The errors either side of a noise scale from `windows` windows that
 * make its 95% interval: Student's t at windows - 1 degrees of freedom
 * (a jackknife error over few windows is itself uncertain: two errors
 * held the truth in 72% of simulated runs at 2 windows, 86% at 4, 93% at
 * 16), 2 where the count is unknown (a file from before the column). */
double noise_interval_errors(long windows);

/* What E against a noise scale of b +- err (one jackknife error, over
 * `windows` windows) says, where its 95% interval
 * (noise_interval_errors) leaves E on one side; else that the estimate
 * cannot tell (the report and plan --noise both say this). */
const char *noise_scale_verdict(double effective, double b, double err, long windows);

#endif
