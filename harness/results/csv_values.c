/* Which numbers a results CSV can hold (see csv_values.h). */
#include "csv_values.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sizes of the config and times of a step: a split of "-4x0" or a step of
 * 0 ms is no measurement. */
const char *const csv_positive_columns[] = {
    "params",        "effective_batch", "micro_batch",   "accum_steps",
    "last_micro_batch", "devices",      "step_ms_median", "step_ms_p10",
    "step_ms_p90",   "pass_ms",         "samples_per_s", "tokens_per_s",
    "flops_per_step", NULL,
};

static int must_be_positive(const char *name)
{
    for (const char *const *p = csv_positive_columns; *p; p++)
        if (!strcmp(*p, name))
            return 1;
    return 0;
}

/* A time in ms (step_ms_median, pass_ms, comm_ms, ...): past 1e15 ms,
 * 31,700 years, it is no step any run timed, and K of them overflow. */
#define CSV_MAX_MS 1e15

static int is_time_ms(const char *name)
{
    size_t n = strlen(name);
    return strstr(name, "_ms_") || (n > 3 && !strcmp(name + n - 3, "_ms"));
}

const char *csv_value_check(const result_column *c, double v)
{
    if (c->type == RESULT_IS_TEXT)
        return NULL;
    if (isnan(v))
        return "is not a number (NaN)";
    if (isinf(v))
        return "cannot be infinite";
    if (v < 0)
        return "cannot be negative";
    if (v == 0 && must_be_positive(c->name))
        return "cannot be zero";
    if (v > CSV_MAX_MS && is_time_ms(c->name))
        return "is past any time a run measures (over 1e15 ms, 31,700 years)";
    return NULL;
}

const char *csv_value_parse(const result_column *c, const char *s, double *real,
                            int64_t *whole)
{
    char *end;
    errno = 0;
    if (c->type == RESULT_IS_INT) {
        long long x = strtoll(s, &end, 10);
        if (*end || end == s)
            return "is not a number";
        if (errno)
            return "is out of range (past a 64-bit integer)";
        if (whole)
            *whole = x;
        *real = (double)x;
    } else {
        *real = strtod(s, &end);
        if (*end || end == s)
            return "is not a number";
        if (errno == ERANGE) /* 1e-320 is a number, but not a double's */
            return "is out of range (too large or too small for a double)";
    }
    return csv_value_check(c, *real);
}

void csv_value_say(char *why, size_t why_len, const char *path, int line, const char *column,
                   const char *text, const char *what, size_t field)
{
    snprintf(why, why_len, "%s:%d: column %s: '%s' %s (field %zu of the row)", path, line,
             column, text, what, field);
}
