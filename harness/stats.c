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
    double mean = sum / (double)n, var = 0;
    for (size_t i = 0; i < n; i++)
        var += (sorted[i] - mean) * (sorted[i] - mean);
    out->samples = n;
    out->mean = mean;
    out->median = percentile_sorted(sorted, n, 50);
    out->p10 = percentile_sorted(sorted, n, 10);
    out->p90 = percentile_sorted(sorted, n, 90);
    out->noise_pct = n > 1 && mean > 0 ? 100.0 * sqrt(var / (double)(n - 1)) / mean : 0.0;
    free(sorted);
    return 0;
}
