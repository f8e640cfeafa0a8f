/* The steps of interleaved rounds, by round (see round_steps.h). */
#include "round_steps.h"

#include <math.h>
#include <stdio.h>

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

size_t round_steps_medians(const double *v, const size_t *at, int rounds, const int *kept,
                           double *medians)
{
    size_t n = 0;
    for (int k = 0; v && medians && k < rounds; k++) {
        if (!kept[k] || at[k + 1] <= at[k])
            continue;
        double m = stats_median(v + at[k], at[k + 1] - at[k]);
        for (size_t j = at[k]; j < at[k + 1]; j++)
            if (isnan(v[j]))
                m = NAN;
        medians[n++] = m;
    }
    return n;
}

double round_steps_median(const double *v, const size_t *at, int rounds, const int *kept,
                          double *medians)
{
    size_t n = round_steps_medians(v, at, rounds, kept, medians);
    for (size_t j = 0; j < n; j++)
        if (isnan(medians[j]))
            return NAN;
    return stats_median(medians, n);
}

/* The significant digits of a round's figure in round_ms (round_text,
 * round_as_written). */
#define ROUND_FIGURE_DIGITS 5

void round_text(const double *per_round, int rounds, const int *kept, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < rounds && used < len; k++)
        if (kept[k])
            used += (size_t)snprintf(out + used, len - used, "%s%.*g", used ? " " : "",
                                     ROUND_FIGURE_DIGITS, per_round[k]);
}

double round_as_written(double v) { return stats_as_written(v, ROUND_FIGURE_DIGITS); }
