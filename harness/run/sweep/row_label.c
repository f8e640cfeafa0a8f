/* How a config's row is named for people (row_label.h). */
#include "row_label.h"

#include <stdio.h>

#include "levers.h"
#include "split_text.h"

void row_label_levers(const result_row *r, char *out, size_t len)
{
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < LEVER_COUNT && used < len; i++) {
        const char *v = lever_in_result(&levers[i], r);
        if (lever_set(&levers[i], v))
            used += (size_t)snprintf(out + used, len - used, "%s%s %s", used ? " " : "",
                                     levers[i].word, v);
    }
}

void row_label_named(const result_row *r, const char *model, char *out, size_t len)
{
    char split[64], set[RESULT_TEXT_LEN];
    split_arm_text(split, sizeof split, (long long)r->micro_batch, (long long)r->accum_steps,
                   (long long)r->last_micro_batch, (long long)r->arm);
    row_label_levers(r, set, sizeof set);
    snprintf(out, len, "%s %s %s %s %s%s%s%s%s", model, r->dtype, split, r->mode,
             r->reduction, r->sync[0] ? " sync " : "", r->sync, set[0] ? " " : "", set);
}

void row_label_of(const result_row *r, char *out, size_t len)
{
    row_label_named(r, r->model, out, len);
}
