/* Statistics of repeated timings. */
#ifndef ACCUBENCH_STATS_H
#define ACCUBENCH_STATS_H

#include <stddef.h>

typedef struct timing_stats {
    size_t samples;
    double median, p10, p90, mean;
    /* Relative noise in percent: 1.4826 x the median absolute deviation over
     * the median, the standard deviation's robust estimate. A shared machine
     * preempts a step now and then; one such outlier should not keep a
     * well-behaved config from ever meeting its noise target. */
    double noise_pct;
} timing_stats;

/* Percentile p (0..100) of sorted values, linearly interpolated. */
double percentile_sorted(const double *sorted, size_t n, double p);

/* Computes the stats of n values (the array is not modified). Returns 0, or
 * -1 when n is 0 or memory ran out. */
int timing_stats_of(const double *values, size_t n, timing_stats *out);

#endif
