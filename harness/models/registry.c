/* The one table of model kinds, and the names of models: presets and
 * shapes written out. */
#include "registry.h"

#include <stdio.h>
#include <string.h>

#include "parse.h"

/* Every model kind, one row each: harness/models/NAME.c defines
 * `const model_kind NAME_kind`, and X(NAME) here declares it and puts it
 * in the table. Adding a kind is its file and its row; the contract test
 * (tests/models/test_model_contract.c) then checks it at its test_shape. */
#define MODEL_KINDS(X) \
    X(mlp)             \
    X(gpt)             \
    X(llama)           \
    X(linear)

#define DECLARE_KIND(name) extern const model_kind name##_kind;
MODEL_KINDS(DECLARE_KIND)
#define KIND_ROW(name) &name##_kind,
static const model_kind *const KINDS[] = {MODEL_KINDS(KIND_ROW)};
#define N_KINDS ((int)(sizeof KINDS / sizeof KINDS[0]))

const model_kind *const *model_kinds(int *count)
{
    *count = N_KINDS;
    return KINDS;
}

const model_kind *model_kind_find(const char *name)
{
    for (int i = 0; i < N_KINDS; i++)
        if (strcmp(KINDS[i]->name, name) == 0)
            return KINDS[i];
    return NULL;
}

/* "mlp:hidden=N,layers=N,classes=N": how a custom shape is written. */
static void form_of(const model_kind *k, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "%s:", k->name);
    for (int i = 0; i < k->n_dims && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s=N", i ? "," : "", k->dims[i].key);
}

const char *model_names(void)
{
    static char names[512];
    size_t used = 0;
    names[0] = '\0';
    for (int i = 0; i < N_KINDS; i++)
        for (int p = 0; p < KINDS[i]->n_presets && used < sizeof names; p++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                     used ? ", " : "", KINDS[i]->presets[p].name);
    for (int i = 0; i < N_KINDS && used < sizeof names; i++) {
        char form[200];
        form_of(KINDS[i], form, sizeof form);
        used += (size_t)snprintf(names + used, sizeof names - used, "; or %s", form);
    }
    return names;
}

static int find_preset(const char *name, model_spec *out)
{
    for (int i = 0; i < N_KINDS; i++)
        for (int p = 0; p < KINDS[i]->n_presets; p++) {
            const model_preset *pr = &KINDS[i]->presets[p];
            if (strcmp(pr->name, name) == 0) {
                out->kind = KINDS[i];
                memcpy(out->dims, pr->dims, sizeof out->dims);
                snprintf(out->name, sizeof out->name, "%s", pr->name);
                return 0;
            }
        }
    return -1;
}

static int find_dim(const model_kind *k, const char *key)
{
    for (int i = 0; i < k->n_dims; i++)
        if (strcmp(k->dims[i].key, key) == 0)
            return i;
    return -1;
}

/* One `key=value` item of model text's shape (item changed in place):
 * a key of kind k, not given before, with a value in its range, into
 * out->dims and given. Returns 0, or -1 with the reason in why. */
static int parse_shape_item(const model_kind *k, const char *text, char *item,
                            const char *form, int *given, model_spec *out, char *why,
                            size_t n)
{
    char reason[200];
    char *eq = strchr(item, '=');
    if (!*item) {
        snprintf(why, n, "model '%s' has an empty item", text);
        return -1;
    }
    if (!eq) {
        snprintf(why, n, "model '%s': '%s' is not key=value (%s)", text, item, form);
        return -1;
    }
    *eq = '\0';
    int d = find_dim(k, item);
    if (d < 0) {
        snprintf(why, n, "model '%s': unknown key '%s' (%s)", text, item, form);
        return -1;
    }
    if (given[d]) {
        snprintf(why, n, "model '%s' gives %s twice", text, item);
        return -1;
    }
    long long v;
    if (parse_int(k->dims[d].key, eq + 1, k->dims[d].min, k->dims[d].max, &v, reason,
                  sizeof reason)) {
        snprintf(why, n, "model '%s': %s", text, reason);
        return -1;
    }
    out->dims[d] = (int)v;
    given[d] = 1;
    return 0;
}

/* The name: the keys in the kind's order, so the same shape is always
 * written the same way. Returns 0, or -1 when it does not fit. */
static int name_shape(const model_kind *k, const char *text, model_spec *out, char *why,
                      size_t n)
{
    size_t used = (size_t)snprintf(out->name, sizeof out->name, "%s:", k->name);
    for (int d = 0; d < k->n_dims && used < sizeof out->name; d++)
        used += (size_t)snprintf(out->name + used, sizeof out->name - used, "%s%s=%d",
                                 d ? "," : "", k->dims[d].key, out->dims[d]);
    if (used >= sizeof out->name) {
        snprintf(why, n, "model '%s': its name is longer than %zu characters", text,
                 sizeof out->name - 1);
        return -1;
    }
    return 0;
}

/* `body` is what follows "kind:" in `text`. */
static int parse_shape(const model_kind *k, const char *text, const char *body,
                       model_spec *out, char *why, size_t n)
{
    char copy[256], reason[200], form[200];
    int given[MODEL_MAX_DIMS] = {0};
    form_of(k, form, sizeof form);
    if (strlen(body) >= sizeof copy) {
        snprintf(why, n, "model '%.40s...' is too long", text);
        return -1;
    }
    if (!*body) {
        snprintf(why, n, "model '%s' gives no shape (%s)", text, form);
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", body);
    for (char *item = copy, *next; item; item = next) {
        next = strpbrk(item, ",;");
        if (next)
            *next++ = '\0';
        if (parse_shape_item(k, text, item, form, given, out, why, n))
            return -1;
    }
    for (int d = 0; d < k->n_dims; d++)
        if (!given[d]) {
            snprintf(why, n, "model '%s' gives no %s (%s)", text, k->dims[d].key, form);
            return -1;
        }
    out->kind = k;
    if (k->check && k->check(out, reason, sizeof reason)) {
        snprintf(why, n, "model '%s': %s", text, reason);
        return -1;
    }
    return name_shape(k, text, out, why, n);
}

int model_spec_parse(const char *text, model_spec *out, char *why, size_t n)
{
    memset(out, 0, sizeof *out);
    const char *colon = strchr(text, ':');
    if (!colon) {
        if (find_preset(text, out) == 0)
            return 0;
        const model_kind *k = model_kind_find(text);
        if (k) {
            char form[200];
            form_of(k, form, sizeof form);
            snprintf(why, n, "model '%s' needs a shape: %s", text, form);
        } else {
            snprintf(why, n, "unknown model '%s' (known: %s)", text, model_names());
        }
        return -1;
    }
    size_t len = (size_t)(colon - text);
    for (int i = 0; i < N_KINDS; i++)
        if (strlen(KINDS[i]->name) == len && strncmp(KINDS[i]->name, text, len) == 0)
            return parse_shape(KINDS[i], text, colon + 1, out, why, n);
    char kinds[200];
    size_t used = 0;
    kinds[0] = '\0';
    for (int i = 0; i < N_KINDS && used < sizeof kinds; i++)
        used += (size_t)snprintf(kinds + used, sizeof kinds - used, "%s%s", i ? ", " : "",
                                 KINDS[i]->name);
    snprintf(why, n, "unknown model kind '%.*s' in '%s' (known: %s)", (int)len, text, text,
             kinds);
    return -1;
}

/* Whether a piece of a --model list begins a shape ("gpt:d=128"): a colon
 * before any '='. "layers=1:" (a stray colon in a value) goes on the
 * shape before it, whose value it then fails as. */
static int starts_shape(const char *item)
{
    const char *colon = strchr(item, ':'), *eq = strchr(item, '=');
    return colon && (!eq || colon < eq);
}

int model_spec_list_parse(const char *list, model_spec *out, int max, char *why, size_t n)
{
    /* As many pieces as the text can hold (each a character and a comma):
     * a shape is up to MODEL_MAX_DIMS pieces, so the limits are the text's
     * length and `max` models, never a count of pieces (nine llama: shapes
     * are 72 of them). */
    char copy[1024], *items[sizeof copy / 2];
    if (strlen(list) >= sizeof copy) {
        snprintf(why, n, "model list is longer than %zu characters", sizeof copy - 1);
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", list);
    int count = split_list("model", copy, items, (int)(sizeof items / sizeof items[0]), why, n);
    if (count < 0)
        return -1;
    int specs = 0;
    for (int i = 0; i < count;) {
        /* A shape's own commas: the key=value items after "kind:..." are
         * part of it. Joined, they are a piece of the list: they fit. */
        char text[sizeof copy];
        size_t used = (size_t)snprintf(text, sizeof text, "%s", items[i]);
        int j = i + 1;
        if (starts_shape(items[i]))
            for (; j < count && strchr(items[j], '=') && !starts_shape(items[j]); j++)
                used += (size_t)snprintf(text + used, sizeof text - used, ",%s", items[j]);
        if (specs == max) {
            snprintf(why, n, "more than %d models", max);
            return -1;
        }
        if (model_spec_parse(text, &out[specs], why, n))
            return -1;
        specs++;
        i = j;
    }
    return specs;
}
