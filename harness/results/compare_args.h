/* compare's command line (compare.h): the two sides, each a CSV or a
 * comma-separated list of runs (compare_runs.h), and what may differ
 * between them. */
#ifndef ACCUBENCH_COMPARE_ARGS_H
#define ACCUBENCH_COMPARE_ARGS_H

#include "compare_runs.h"

/* What the command line asks: the two sides (each its run of record,
 * paths[k], and the runs after it), and what may differ. */
typedef struct compare_options {
    const char *paths[2];
    compare_side side[2];
    int ignore_device, ignore_optimizer;
    double min_diff; /* a fraction: --min-diff PCT / 100 */
    /* --dtypes BASE,NEW: BASE's rows in the first dtype against NEW's in
     * the second, each config matched with its twin but for the dtype
     * (one file may be both sides); "" and "": every row, dtype matched */
    char dtypes[2][16];
} compare_options;

/* -1 and *c filled (its sides to free with compare_side_free), or the exit
 * code: 0 after --help, 2 after a usage error or a bad value (one line on
 * stderr). */
int parse_compare_args(int argc, char **argv, compare_options *c);

#endif
