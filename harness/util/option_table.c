#include "option_table.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "nearest.h"
#include "parse.h"

/* The usage's columns: the option in 2..23, its help from 24, lines kept
 * under 80 characters where words allow. */
#define HELP_COLUMN 24
#define LINE_WIDTH 79

const option_def *option_find(const option_table *t, const char *key)
{
    for (int i = 0; i < t->count; i++)
        if (strcmp(t->defs[i].key, key) == 0)
            return &t->defs[i];
    return NULL;
}

int option_is_flag(const option_table *t, const char *key)
{
    const option_def *d = option_find(t, key);
    return d && d->type == OPTION_FLAG;
}

int option_takes_list(const option_table *t, const char *key)
{
    const option_def *d = option_find(t, key);
    const char *arg = d ? d->arg : NULL;
    while (arg) {
        const char *bar = strchr(arg, '|');
        size_t len = bar ? (size_t)(bar - arg) : strlen(arg);
        if (len == 4 && strncmp(arg, "LIST", 4) == 0)
            return 1;
        arg = bar ? bar + 1 : NULL;
    }
    return 0;
}

static int set_flag(const option_def *d, int *out, const char *v, char *why, size_t n)
{
    const char *yes[] = {"1", "yes", "true"}, *no[] = {"0", "no", "false"};
    for (int i = 0; i < 3; i++)
        if (!v || strcmp(v, yes[i]) == 0) {
            *out = 1;
            return 0;
        } else if (strcmp(v, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    snprintf(why, n, "%s takes yes or no, got '%s'", d->key, v);
    return -1;
}

static int set_path(const option_def *d, char *out, const char *v, char *why, size_t n)
{
    if (!*v || strlen(v) >= d->size) {
        snprintf(why, n, "%s needs a path of 1 to %zu characters, got '%s'", d->key,
                 d->size - 1, v);
        return -1;
    }
    snprintf(out, d->size, "%s", v);
    return 0;
}

int option_set_row(const option_def *d, void *target, const char *v, char *why, size_t n)
{
    char *at = (char *)target + d->offset;
    long long i;
    double x;
    if (d->type == OPTION_FLAG)
        return set_flag(d, (int *)(void *)at, v, why, n);
    if (!v) {
        snprintf(why, n, "--%s needs a value", d->key);
        return -1;
    }
    switch (d->type) {
    case OPTION_INT:
        if (parse_int(d->key, v, d->min, d->max, &i, why, n))
            return -1;
        *(int *)(void *)at = (int)i;
        return 0;
    case OPTION_U64:
        if (parse_int(d->key, v, d->min, d->max, &i, why, n))
            return -1;
        *(uint64_t *)(void *)at = (uint64_t)i;
        return 0;
    case OPTION_REAL:
        return parse_real(d->key, v, d->lo, d->hi, (double *)(void *)at, why, n);
    case OPTION_FLOAT:
        if (parse_real(d->key, v, d->lo, d->hi, &x, why, n))
            return -1;
        *(float *)(void *)at = (float)x;
        return 0;
    case OPTION_BYTES:
        return parse_bytes(d->key, v, (uint64_t *)(void *)at, why, n);
    case OPTION_PATH:
        return set_path(d, at, v, why, n);
    case OPTION_CUSTOM:
        return d->set(target, d, v, why, n);
    case OPTION_FLAG:
        break;
    }
    snprintf(why, n, "%s: no parser for its type", d->key);
    return -1;
}

void option_suggest_key(const option_table *t, const char *key, char *why, size_t n)
{
    const char *best = NULL;
    int best_d = INT_MAX;
    for (int i = 0; i < t->count; i++)
        nearest_consider(key, t->defs[i].key, &best, &best_d);
    size_t used = strlen(why);
    if (best && used + 1 < n)
        snprintf(why + used, n - used, "; did you mean '%s'?", best);
}

int option_set(const option_table *t, void *target, const char *key, const char *value,
               char *why, size_t n)
{
    const option_def *d = option_find(t, key);
    if (d)
        return option_set_row(d, target, value, why, n);
    snprintf(why, n, "unknown option '%s'", key);
    option_suggest_key(t, key, why, n);
    return -1;
}

int option_set_with(const option_table *own, void *own_target, const option_shared *shared,
                    const char *prefix, const char *key, const char *value, char *why, size_t n)
{
    const option_def *d = option_find(own, key);
    if (d)
        return option_set_row(d, own_target, value, why, n);
    for (int i = 0; i < shared->count; i++)
        if (strcmp(key, shared->keys[i]) == 0 && (d = option_find(shared->table, key)))
            return option_set_row(d, shared->target, value, why, n);
    const char *best = NULL;
    int best_d = INT_MAX;
    for (int i = 0; i < own->count; i++)
        nearest_consider(key, own->defs[i].key, &best, &best_d);
    for (int i = 0; i < shared->count; i++)
        nearest_consider(key, shared->keys[i], &best, &best_d);
    snprintf(why, n, "unknown %s%soption '--%s'", prefix ? prefix : "", prefix ? " " : "", key);
    size_t used = strlen(why);
    if (best && used + 1 < n)
        snprintf(why + used, n - used, "; did you mean '--%s'?", best);
    return -1;
}

int option_defaults(const option_table *t, void *target, char *why, size_t n)
{
    char reason[300];
    for (int i = 0; i < t->count; i++) {
        const option_def *d = &t->defs[i];
        if (d->def && option_set_row(d, target, d->def, reason, sizeof reason)) {
            snprintf(why, n, "the default of --%s refused: %s", d->key, reason);
            return -1;
        }
    }
    return 0;
}

const char *option_help_text(const option_def *d, option_usage_edit edit, char *out,
                             size_t len)
{
    char help[600] = "", table[512], shown[300];
    const char *from_table = d->help_fn ? d->help_fn(d, table, sizeof table) : NULL;
    snprintf(help, sizeof help, "%s%s%s", from_table ? from_table : "",
             from_table && d->help ? ": " : "", d->help ? d->help : "");
    snprintf(shown, sizeof shown, "%s", d->shown ? d->shown : d->def ? d->def : "");
    if (edit)
        edit(d, help, sizeof help, shown, sizeof shown);
    if (shown[0])
        snprintf(out, len, "%s (default %s)", help, shown);
    else
        snprintf(out, len, "%s", help);
    return out;
}

/* Writes text from column `col` on, wrapped at spaces under LINE_WIDTH. */
static void print_wrapped(FILE *f, const char *text, int col)
{
    int at = col;
    while (*text) {
        size_t word = strcspn(text, " ");
        if (at > col && at + 1 + (int)word > LINE_WIDTH) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fwrite(text, 1, word, f);
        at += (int)word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', f);
}

void option_usage_row(FILE *f, const option_def *d, option_usage_edit edit)
{
    char left[96], text[1200];
    snprintf(left, sizeof left, "--%s%s%s", d->key, d->arg ? " " : "", d->arg ? d->arg : "");
    if ((int)strlen(left) > HELP_COLUMN - 3)
        fprintf(f, "  %s\n%*s", left, HELP_COLUMN, "");
    else
        fprintf(f, "  %-*s ", HELP_COLUMN - 3, left);
    print_wrapped(f, option_help_text(d, edit, text, sizeof text), HELP_COLUMN);
}

void option_usage(FILE *f, const option_table *t, option_usage_edit edit)
{
    for (int i = 0; i < t->count; i++)
        option_usage_row(f, &t->defs[i], edit);
}

void option_usage_shared(FILE *f, const option_shared *s, option_usage_edit edit)
{
    for (int i = 0; i < s->count; i++) {
        const option_def *d = option_find(s->table, s->keys[i]);
        if (d)
            option_usage_row(f, d, edit);
    }
}
