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
     * well-behaved config from ever meeting its noise target. NAN from one
     * sample, which has no spread to measure. */
    double noise_pct;
    /* A distribution-free confidence interval of the median (order
     * statistics; median_ci_sorted), at MEDIAN_CI_LEVEL where the samples
     * allow it: ci_coverage is the level it actually has (below the target
     * with 5 samples or fewer, where [min, max] is the widest there is). */
    double ci_lo, ci_hi, ci_coverage;
} timing_stats;

/* qsort's comparator of doubles, ascending (NaN compares equal to all:
 * callers sort measured values). The one every sort of doubles uses. */
int stats_compare_doubles(const void *a, const void *b);

/* The median of n values (timing_stats_of's), NAN where there are none. */
double stats_median(const double *v, size_t n);

/* The confidence the median's interval aims for. */
#define MEDIAN_CI_LEVEL 0.95

/* The distribution-free interval of the median of n sorted values: the
 * order statistics x(k) and x(n-k+1) with the largest k for which the
 * binomial(n, 1/2) tails put at least `level` between them (Conover,
 * Practical Nonparametric Statistics, the sign-test interval). It assumes
 * nothing about the shape of the timings, only that they are independent
 * draws. Fills *lo, *hi and *coverage (the interval's exact level); when no
 * k reaches `level` (n <= 5 at 95%), [x(1), x(n)] and its coverage. NAN
 * everywhere when n is 0. */
void median_ci_sorted(const double *sorted, size_t n, double level, double *lo, double *hi,
                      double *coverage);

/* The coverage median_ci_sorted's interval has over n samples at `level`
 * (below it for n <= 5 at 95%: 1 - 2^(1-n)); NAN for n 0. For a reader
 * that has the interval and the count but not the samples. */
double median_ci_coverage(size_t n, double level);

/* v as "%.*g" writes it with `digits` significant digits and strtod reads
 * it back: what a file holds of a figure. A figure that decides something
 * is judged as written, so that the program and every reader of its file
 * decide alike. */
double stats_as_written(double v, int digits);

/* Student's t at 97.5% (a two-sided 95% interval) for df >= 1 degrees of
 * freedom: the table to 30, then the first two terms of its expansion in
 * 1 / df about z = 1.959964 (within 1e-4 from 31 on). */
double stats_t_975(int df);

/* The significant digits of a real in the results CSV (csv_writer.c). */
#define STATS_CSV_DIGITS 6

/* Percentile p (0..100) of sorted values, linearly interpolated. */
double percentile_sorted(const double *sorted, size_t n, double p);

/* Computes the stats of n values (the array is not modified). Returns 0, or
 * -1 when n is 0 or memory ran out. */
int timing_stats_of(const double *values, size_t n, timing_stats *out);

#endif
