#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int stats_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double percentile_sorted(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n)
        return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* The rank k (from 1) of the median's interval [x(k), x(n-k+1)] over n
 * sorted samples at `level`, and the coverage that interval has. */
static size_t median_ci_rank(size_t n, double level, double *coverage)
{
    /* the interval [x(k), x(n-k+1)] misses the median with probability
     * 2 P(X <= k-1), X ~ binomial(n, 1/2). The largest k that keeps that
     * under 1 - level is the narrowest interval at that level.
     * P(X <= k) is built term by term, each probability from the one
     * before in log space (n may be the thousands of samples of a fast
     * config, where 0.5^n underflows): the stopping rule computes this
     * after every sample, and with each sum started afresh through lgamma
     * (a quadratic count of terms) it took 2 ms a sample at 1000 samples,
     * five times the tiny model's step. */
    double log_p = (double)n * log(0.5), below = exp(log_p); /* P(X <= 0) */
    size_t k = 1;
    double miss = 2 * below;
    while (k + 1 <= (n + 1) / 2) {
        log_p += log((double)(n - k + 1) / (double)k); /* P(X = k) */
        double next_below = fmin(1, below + exp(log_p));
        if (2 * next_below > 1 - level)
            break;
        k++;
        below = next_below;
        miss = 2 * below;
    }
    *coverage = n == 1 ? 0 : 1 - miss;
    return k;
}

void median_ci_sorted(const double *sorted, size_t n, double level, double *lo, double *hi,
                      double *coverage)
{
    if (n == 0) {
        *lo = *hi = *coverage = NAN;
        return;
    }
    size_t k = median_ci_rank(n, level, coverage);
    *lo = sorted[k - 1];
    *hi = sorted[n - k];
}

double median_ci_coverage(size_t n, double level)
{
    double coverage = NAN;
    if (n > 0)
        median_ci_rank(n, level, &coverage);
    return coverage;
}

int timing_stats_of(const double *values, size_t n, timing_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return -1;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return -1;
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, stats_compare_doubles);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    out->samples = n;
    out->mean = sum / (double)n;
    out->median = percentile_sorted(sorted, n, 50);
    out->p10 = percentile_sorted(sorted, n, 10);
    out->p90 = percentile_sorted(sorted, n, 90);
    median_ci_sorted(sorted, n, MEDIAN_CI_LEVEL, &out->ci_lo, &out->ci_hi, &out->ci_coverage);
    /* the absolute deviations from the median, sorted in place */
    for (size_t i = 0; i < n; i++)
        sorted[i] = fabs(sorted[i] - out->median);
    qsort(sorted, n, sizeof *sorted, stats_compare_doubles);
    double mad = percentile_sorted(sorted, n, 50);
    /* one sample has no spread to measure: its 0 would read as a quiet
     * step and meet any noise target (unmeasured, as NAN, instead) */
    out->noise_pct = n < 2 ? NAN : out->median > 0 ? 100.0 * 1.4826 * mad / out->median : 0.0;
    free(sorted);
    return 0;
}

double stats_median(const double *v, size_t n)
{
    timing_stats st;
    return timing_stats_of(v, n, &st) == 0 ? st.median : NAN;
}

double stats_as_written(double v, int digits)
{
    char text[64];
    snprintf(text, sizeof text, "%.*g", digits, v);
    return strtod(text, NULL);
}

/* z + (z^3 + z) / 4df + (5z^5 + 16z^3 + 3z) / 96df^2 past the table (the
 * first term alone was 0.003 low). */
double stats_t_975(int df)
{
    static const double table[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                   2.306,  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                   2.120,  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                   2.064,  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    return df <= 30 ? table[df] : 1.959964 + 2.372271 / df + 2.822499 / ((double)df * df);
}
