/* Which numbers a results CSV can hold (see csv_values.h). */
#include "csv_values.h"

#include <math.h>
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
    return NULL;
}
