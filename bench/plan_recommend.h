/* accubench plan --recommend --effective E --mem-cap BYTES [--devices N]
 * [--from FILE.csv]: the fastest configuration that reaches E within the
 * cap, from measured rows (--from) or from a brief measuring run of the
 * candidates here and now (docs/planner.md). */
#ifndef ACCUBENCH_PLAN_RECOMMEND_H
#define ACCUBENCH_PLAN_RECOMMEND_H

#include "options.h"

/* The measuring run's --budget-s where none is given, in seconds. */
#define MEASURE_BUDGET_DEFAULT "0.5"

typedef struct recommend_args {
    int effective, devices;
    const run_options *shared; /* model, dtype, optimizer, backend, mem-cap, buffers */
    int model_given, dtype_given;
    int budget_given;          /* --budget-s given: the measuring run keeps it */
    const char *from;          /* FILE.csv; NULL: measure */
    const char *out_csv;       /* where the measuring run writes its rows */
} recommend_args;

/* Returns the exit status: 0 a recommendation, 1 none fits, 2 bad input
 * (one line on stderr). */
int plan_recommend(const recommend_args *a);

#endif
