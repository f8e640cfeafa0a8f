#include "ratio_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

/* A figure as the results CSV writes it (vs_ref..vs_ref_hi: 6 digits),
 * which is what a chart or any reader of the file formats: on full
 * precision an upper bound of 1.3949991 printed "1.393x [1.392..1.395]"
 * in the report while its cell, 1.395, printed "1.39x [1.39..1.40]" on the
 * chart. The rule judges the written figure too (paired_judge). */
static double written(double v)
{
    return isfinite(v) ? stats_as_written(v, STATS_CSV_DIGITS) : v;
}

/* The decimals that give a ratio of this size about three digits; within
 * 10% of 1, a tenth of a percent: the rule's threshold is 2%, and a ratio
 * near it is read against it (1.015 is not 1.02). */
static int base_decimals(double r)
{
    if (r > 0.9 && r < 1.1)
        return 3;
    if (r >= 100)
        return 0;
    if (r >= 10)
        return 1;
    if (r >= 0.1 || !(r > 0))
        return 2;
    return (int)fmin(6, 1 - floor(log10(r)));
}

/* v prints as 1 at these decimals although it is not 1. */
static int reads_one(double v, int decimals)
{
    char a[64], one[64];
    if (isnan(v) || v == 1)
        return 0;
    snprintf(a, sizeof a, "%.*f", decimals, v);
    snprintf(one, sizeof one, "%.*f", decimals, 1.0);
    return !strcmp(a, one);
}

static int reads_same(double a, double b, int decimals)
{
    char x[64], y[64];
    if (isnan(a) || isnan(b) || a == b)
        return 0;
    snprintf(x, sizeof x, "%.*f", decimals, a);
    snprintf(y, sizeof y, "%.*f", decimals, b);
    return !strcmp(x, y);
}

/* The interval spans under ten units of the last decimal: a decimal more
 * still says something about where it lies. A wider one would only print
 * noise ("0.99998x [0.97763..1.02285]" for an A/A pair). */
static int resolves_more(double lo, double hi, int decimals)
{
    return (hi - lo) * pow(10, decimals) < 10;
}

int ratio_decimals(double ratio, double lo, double hi)
{
    ratio = written(ratio), lo = written(lo), hi = written(hi);
    int interval = !isnan(lo) && !isnan(hi);
    int base = base_decimals(ratio), d = base;
    while (d < base + 2 && (!interval || resolves_more(lo, hi, d)) &&
           (reads_one(ratio, d) ||
            (interval && (reads_one(lo, d) || reads_one(hi, d) || reads_same(lo, hi, d)))))
        d++;
    return d;
}

void ratio_text(char *out, size_t len, double ratio, double lo, double hi)
{
    if (!len)
        return;
    /* no figure, or one past what a double holds (two times of 1e300 and
     * 1e-300 ms): "-", never "infx" */
    if (!isfinite(ratio)) {
        snprintf(out, len, "-");
        return;
    }
    int interval = isfinite(lo) && isfinite(hi);
    if (ratio >= 1e6 || ratio < 1e-6) { /* no fixed point past a million: 6.29e+298x */
        if (interval)
            snprintf(out, len, "%.3gx [%.3g..%.3g]", ratio, lo, hi);
        else
            snprintf(out, len, "%.3gx", ratio);
        return;
    }
    int d = ratio_decimals(ratio, lo, hi);
    ratio = written(ratio), lo = written(lo), hi = written(hi);
    if (interval)
        snprintf(out, len, "%.*fx [%.*f..%.*f]", d, ratio, d, lo, d, hi);
    else
        snprintf(out, len, "%.*fx", d, ratio);
}
