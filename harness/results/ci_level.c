#include "ci_level.h"

#include <math.h>
#include <stdio.h>

#include "stats.h"

double row_ci_coverage(long long rounds, long long samples)
{
    long long n = rounds > 0 ? rounds : samples;
    return n > 0 ? median_ci_coverage((size_t)n, MEDIAN_CI_LEVEL) : NAN;
}

/* Whether the coverage is short of the level (less a rounding: 95%
 * itself is not short of it; NAN, unknown, claims nothing less). */
static int short_of_level(double cover)
{
    return cover < MEDIAN_CI_LEVEL - 1e-9;
}

const char *row_ci_level_text(long long rounds, long long samples, char *out, size_t len)
{
    double cover = row_ci_coverage(rounds, samples);
    snprintf(out, len, "%.3g%%", 100 * (short_of_level(cover) ? cover : MEDIAN_CI_LEVEL));
    return out;
}

const char *row_ci_short_text(long long rounds, long long samples, char *out, size_t len)
{
    double cover = row_ci_coverage(rounds, samples);
    out[0] = '\0';
    if (short_of_level(cover))
        snprintf(out, len, " (%.3g%%)", 100 * cover);
    return out;
}
