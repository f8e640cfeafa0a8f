/* How a config's row is named for people (row_label.h). */
#include "row_label.h"

#include <stdio.h>
#include <string.h>

#include "grad_dtype.h"
#include "recompute.h"
#include "shard_modes.h"
#include "split_text.h"

void row_label_levers(const result_row *r, char *out, size_t len)
{
    /* each lever, its default as its table names it, and its word */
    const struct {
        const char *value, *fallback, *word;
    } levers[] = {{r->recompute, recompute_name(RECOMPUTE_NONE), "recompute"},
                  {r->shard, shard_name(SHARD_NONE), "shard"},
                  {r->grad_dtype, grad_dtype_name(GRAD_DTYPE_FP32), "grad"}};
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (size_t i = 0; i < sizeof levers / sizeof levers[0] && used < len; i++)
        if (levers[i].value[0] && strcmp(levers[i].value, levers[i].fallback))
            used += (size_t)snprintf(out + used, len - used, "%s%s %s", used ? " " : "",
                                     levers[i].word, levers[i].value);
}

void row_label_named(const result_row *r, const char *model, char *out, size_t len)
{
    char split[64], levers[RESULT_TEXT_LEN];
    split_arm_text(split, sizeof split, (long long)r->micro_batch, (long long)r->accum_steps,
                   (long long)r->last_micro_batch, (long long)r->arm);
    row_label_levers(r, levers, sizeof levers);
    snprintf(out, len, "%s %s %s %s %s%s%s%s%s", model, r->dtype, split, r->mode,
             r->reduction, r->sync[0] ? " sync " : "", r->sync, levers[0] ? " " : "", levers);
}

void row_label_of(const result_row *r, char *out, size_t len)
{
    row_label_named(r, r->model, out, len);
}
