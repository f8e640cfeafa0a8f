/* libFuzzer target: any bytes as the text of --model (and a profile's
 * `model =`): a list of presets and custom shapes, model_spec_list_parse
 * as set_model calls it, then the whole text as one model_spec_parse.
 * Every outcome is a count or a -1 with a reason; a crash, a hang, a
 * sanitizer report, or a model accepted outside its kind's ranges or under
 * a name that does not read back as the same shape is the bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_kind.h"
#include "registry.h"

#define MAX_MODELS 32

/* An accepted spec: a kind, every dimension in its range, a name that is
 * terminated and parses back to the same kind and shape. */
static void check_spec(const model_spec *s)
{
    if (!s->kind || !memchr(s->name, '\0', sizeof s->name) || !s->name[0])
        abort();
    for (int d = 0; d < s->kind->n_dims; d++)
        if (s->dims[d] < s->kind->dims[d].min || s->dims[d] > s->kind->dims[d].max)
            abort();
    model_spec again;
    char why[600];
    if (model_spec_parse(s->name, &again, why, sizeof why) != 0 || again.kind != s->kind ||
        memcmp(again.dims, s->dims, sizeof s->dims) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    model_spec specs[MAX_MODELS];
    char why[600];
    why[0] = '\0';
    int n = model_spec_list_parse(text, specs, MAX_MODELS, why, sizeof why);
    if (n < 0) {
        if (!why[0] || !memchr(why, '\0', sizeof why))
            abort(); /* a refusal always says why */
    } else {
        if (n == 0 || n > MAX_MODELS)
            abort();
        for (int i = 0; i < n; i++)
            check_spec(&specs[i]);
    }
    model_spec one;
    why[0] = '\0';
    if (model_spec_parse(text, &one, why, sizeof why) == 0)
        check_spec(&one);
    else if (!why[0])
        abort();
    free(text);
    return 0;
}
