#include "row_flags.h"

#include <math.h>
#include <string.h>

const char *const row_flag_names[ROW_FLAG_COUNT] = {FLAG_NOISY, FLAG_DISTURBED};

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
