/* How a split is written (see split_text.h). */
#include <math.h>
#include "split_text.h"

#include <stdio.h>
#include <string.h>

int split_is_ragged(long long micro, long long last)
{
    return last > 0 && last != micro;
}

double split_naive_ms(long long micro, long long accum, long long last, double pass_ms)
{
    return split_is_ragged(micro, last) ? NAN : (double)accum * pass_ms;
}

void split_text(char *out, size_t len, long long micro, long long accum, long long last)
{
    if (!len)
        return;
    if (!split_is_ragged(micro, last) || accum < 2) {
        snprintf(out, len, "%lldx%lld", micro, accum);
        return;
    }
    char listed[SPLIT_TEXT_WIDTH + 1];
    size_t at = (size_t)snprintf(listed, sizeof listed, "K=%lld: ", accum);
    for (long long k = 0; k < accum && at < sizeof listed; k++)
        at += (size_t)snprintf(listed + at, sizeof listed - at, "%lld%s",
                               k == accum - 1 ? last : micro, k == accum - 1 ? "" : "+");
    if (accum <= SPLIT_TEXT_LISTED && at <= SPLIT_TEXT_WIDTH)
        snprintf(out, len, "%s", listed);
    else
        snprintf(out, len, "K=%lld: %lldx%lld+%lld", accum, micro, accum - 1, last);
}

void split_arm_text(char *out, size_t len, long long micro, long long accum, long long last,
                    long long arm)
{
    split_text(out, len, micro, accum, last);
    size_t at = strlen(out);
    if (arm > 1 && at < len)
        snprintf(out + at, len - at, " (arm %lld)", arm);
}
