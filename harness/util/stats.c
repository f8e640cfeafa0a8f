#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
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

int timing_stats_of(const double *values, size_t n, timing_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return -1;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return -1;
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    out->samples = n;
    out->mean = sum / (double)n;
    out->median = percentile_sorted(sorted, n, 50);
    out->p10 = percentile_sorted(sorted, n, 10);
    out->p90 = percentile_sorted(sorted, n, 90);
    /* the absolute deviations from the median, sorted in place */
    for (size_t i = 0; i < n; i++)
        sorted[i] = fabs(sorted[i] - out->median);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double mad = percentile_sorted(sorted, n, 50);
    out->noise_pct = out->median > 0 ? 100.0 * 1.4826 * mad / out->median : 0.0;
    free(sorted);
    return 0;
}
