/* plan --time-to-target FILE.csv: per effective batch the steps and
 * examples to a target loss from FILE's curves file, the fitted critical
 * batch beside the measured noise scale, and the time to target with the
 * fastest split within the cap (goodput_table.h; docs/noise-scale.md). */
#ifndef ACCUBENCH_GOODPUT_PLAN_H
#define ACCUBENCH_GOODPUT_PLAN_H

#include <stdint.h>
#include <stdio.h>

typedef struct goodput_plan_args {
    const char *csv_path;
    double target;   /* NAN: the highest final loss among the E */
    int64_t mem_cap; /* -1: none */
    int table;       /* the chart's table (CSV) instead of the text */
    int curve_table; /* the loss chart's table: each E's kept curve (CSV) */
    int rank;        /* plan --recommend --goal time: the E ranked by time to target */
} goodput_plan_args;

/* 0; 1 when FILE has no curves (with rank: or no E reaches the target
 * with a timed split within the cap) of the correct reduction (a run without
 * --train-steps); 2 with one line on stderr when it cannot be read. */
int goodput_plan_main(FILE *out, const goodput_plan_args *a);

/* The text, a block per series: what the report's section says too. */
struct goodput_series;
void goodput_print(FILE *out, const struct goodput_series *s, size_t n);

#endif
