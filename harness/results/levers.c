/* The levers a row is labelled by (levers.h). */
#include "levers.h"

#include <stdio.h>
#include <string.h>

#include "grad_dtype.h"
#include "recompute.h"
#include "shard.h"

/* In the order every label names them. */
const lever levers[LEVER_COUNT] = {
    [LEVER_RECOMPUTE] = {.column = "recompute", .ax = &recompute_axis, .off = RECOMPUTE_NONE,
                         .keyed = 1, .word = "recompute", .phrase = "recompute",
                         .title = "recompute", .option = "--recompute"},
    [LEVER_SHARD] = {.column = "shard", .ax = &shard_axis, .off = SHARD_NONE, .ranks_only = 1,
                     .keyed = 1, .word = "shard", .phrase = "shard", .title = "shard",
                     .option = "--shard"},
    [LEVER_GRAD_DTYPE] = {.column = "grad_dtype", .ax = &grad_dtype_axis, .off = GRAD_DTYPE_FP32,
                          .word = "grad", .phrase = "gradient accumulated in",
                          .title = "gradient in", .option = "--grad-dtype"},
};

const char *lever_off_name(const lever *l)
{
    return axis_name(l->ax, l->off);
}

int lever_set(const lever *l, const char *value)
{
    return value && *value && strcmp(value, lever_off_name(l)) != 0;
}

const char *lever_or_off(const lever *l, const char *value)
{
    return value && *value ? value : lever_off_name(l);
}

/* Its column's place in RESULT_COLUMNS: every lever is one (levers.h). */
static size_t column_index(const lever *l)
{
    return (size_t)(result_column_find(l->column) - result_columns);
}

const char *lever_in_result(const lever *l, const result_row *r)
{
    return (const char *)r + result_columns[column_index(l)].offset;
}

const char *lever_in_csv(const lever *l, const csv_row *r)
{
    return *(const char *const *)(const void *)((const char *)r + csv_row_offset[column_index(l)]);
}

lever_values lever_values_of_csv(const csv_row *r)
{
    lever_values lv;
    for (int i = 0; i < LEVER_COUNT; i++)
        lv.v[i] = lever_in_csv(&levers[i], r);
    return lv;
}

void levers_meta(char *out, size_t len)
{
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < LEVER_COUNT && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s=%s \"%s\"%s", i ? "; " : "",
                                 levers[i].column, lever_off_name(&levers[i]), levers[i].title,
                                 levers[i].keyed ? " keyed" : "");
}
