#include "row_flags.h"

#include <math.h>
#include <string.h>

int flags_have(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = flags ? strstr(flags, flag) : NULL; p; p = strstr(p + 1, flag))
        if ((p == flags || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

int result_clean(const csv_row *r)
{
    return result_ran(r) && !(r->flags && *r->flags);
}

/* The row's interval of its median, or its p10..p90 band; 0 when neither. */
static int band(const csv_row *r, double *lo, double *hi)
{
    if (r->step_ms_ci_hi > 0 && r->step_ms_ci_lo <= r->step_ms_ci_hi) {
        *lo = r->step_ms_ci_lo;
        *hi = r->step_ms_ci_hi;
        return 1;
    }
    if (!isnan(r->step_ms_p10) && !isnan(r->step_ms_p90)) {
        *lo = r->step_ms_p10;
        *hi = r->step_ms_p90;
        return 1;
    }
    return 0;
}

int result_times_differ(const csv_row *a, const csv_row *b)
{
    double alo, ahi, blo, bhi;
    if (!band(a, &alo, &ahi) || !band(b, &blo, &bhi))
        return -1;
    return ahi < blo || bhi < alo;
}
