/* The attention arrangements, one row each, and the one parser of a
 * backend's variable that picks one (see attention_kind.h). */
#include "attention_kind.h"

#include <stdio.h>
#include <stdlib.h>

/* The descriptions are what the CSV's `# attention:` line says after the
 * name: what a reader of the file needs to tell the two apart. */
static const axis_row ATTENTIONS[] = {
    [ATTENTION_FUSED] = {"fused", "one op a pass, no scores stored"},
    [ATTENTION_UNFUSED] = {"unfused", "permutes, strided-batched GEMMs, causal softmax"},
};
_Static_assert(sizeof ATTENTIONS / sizeof ATTENTIONS[0] == ATTENTION_ROWS, "a row each");

const axis attention_axis = AXIS_OF("attention", ATTENTIONS);

int attention_from_env(const char *var, attention_kind dflt, attention_kind *out, char *why,
                       size_t len)
{
    const char *value = getenv(var);
    if (!value) {
        *out = dflt;
        return 0;
    }
    int row = axis_find(&attention_axis, value);
    if (row >= 0) {
        *out = row;
        return 0;
    }
    if (why) {
        char known[128];
        axis_names(&attention_axis, known, sizeof known, " or ");
        snprintf(why, len, "%s='%s': needs %s (unset it for %s, this backend's default)", var,
                 value, known, attention_name(dflt));
    }
    return -1;
}
