/* The steps of interleaved rounds, pooled (see round_steps.h). */
#include "round_steps.h"

#include <math.h>

#include "stats.h"

size_t round_steps_pool(const double *v, const size_t *at, int rounds, const int *kept,
                        double *pool)
{
    size_t n = 0;
    for (int k = 0; v && pool && k < rounds; k++)
        if (kept[k])
            for (size_t j = at[k]; j < at[k + 1]; j++)
                pool[n++] = v[j];
    return n;
}

double round_steps_median(const double *v, const size_t *at, int rounds, const int *kept,
                          double *pool)
{
    size_t n = round_steps_pool(v, at, rounds, kept, pool);
    for (size_t j = 0; j < n; j++)
        if (isnan(pool[j]))
            return NAN;
    return stats_median(pool, n);
}
