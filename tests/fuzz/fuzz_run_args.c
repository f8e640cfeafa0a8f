/* libFuzzer target: any bytes as the command line of `accubench run`, one
 * argument a line: read with args_next over run's option table and each
 * option set with options_set, as bench/main.c does (a profile aside: the
 * profile target reads those), then validated and the micro-batches
 * listed. After every option, taken or refused, each setting is checked
 * against its row: a number in its bounds, a list within its length and
 * its table, a model inside its kind's ranges. Every outcome is taken or
 * refused with a reason; a crash, a hang, a sanitizer report or a setting
 * out of its row's range is the bug. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "options.h"

#define MAX_ARGS 64

#define FIELD(o, d, type) (*(const type *)(const void *)((const char *)(o) + (d)->offset))

static void check_int_list(const int *v, int n, long long max)
{
    if (n < 0 || n > OPT_MAX_LIST)
        abort();
    for (int i = 0; i < n; i++)
        if (v[i] < 1 || v[i] > max)
            abort();
}

static void check_axis(const run_options *o, const axis_option *ax, int auto_ok)
{
    const int *v = (const int *)(const void *)((const char *)o + ax->list);
    int n = *(const int *)(const void *)((const char *)o + ax->count);
    if (n < 1 || n > ax->cap)
        abort();
    for (int i = 0; i < n; i++)
        if (!(v[i] >= 0 && v[i] < ax->ax->count) && !(auto_ok && n == 1 && v[i] == DTYPE_AUTO))
            abort();
}

/* The table's defaults, which may lie outside a row's bounds (--steps:
 * 0, adaptive, until a count is given). */
static run_options defaults;

/* Every setting within what its row allows, or still its default. */
static void check_options(const run_options *o)
{
    for (int r = 0; r < run_option_table.count; r++) {
        const option_def *d = &run_option_table.defs[r];
        switch (d->type) {
        case OPTION_FLAG:
            if (FIELD(o, d, int) != 0 && FIELD(o, d, int) != 1)
                abort();
            break;
        case OPTION_INT:
            if ((FIELD(o, d, int) < d->min || FIELD(o, d, int) > d->max) &&
                FIELD(o, d, int) != FIELD(&defaults, d, int))
                abort();
            break;
        case OPTION_U64:
            if (FIELD(o, d, uint64_t) > (uint64_t)d->max)
                abort();
            break;
        case OPTION_REAL:
            if (!(FIELD(o, d, double) >= d->lo && FIELD(o, d, double) <= d->hi))
                abort();
            break;
        case OPTION_FLOAT:
            if (!(FIELD(o, d, float) >= d->lo && FIELD(o, d, float) <= d->hi))
                abort();
            break;
        case OPTION_BYTES:
            if (FIELD(o, d, uint64_t) > (uint64_t)INT64_MAX)
                abort();
            break;
        case OPTION_PATH:
            if (!memchr((const char *)o + d->offset, '\0', d->size))
                abort();
            break;
        case OPTION_CUSTOM:
            break;
        }
    }
    check_int_list(o->effective, o->n_effective, 1 << 20);
    check_int_list(o->micro, o->n_micro, 1 << 20);
    check_int_list(o->devices, o->n_devices, 4096);
    check_axis(o, &options_dtypes, 1);
    check_axis(o, &options_modes, 0);
    check_axis(o, &options_reductions, 0);
    check_axis(o, &options_syncs, 0);
    check_axis(o, &options_shards, 0);
    check_axis(o, &options_recomputes, 0);
    check_axis(o, &options_grad_dtypes, 0);
    if (o->n_models < 1 || o->n_models > OPT_MAX_LIST)
        abort();
    for (int i = 0; i < o->n_models; i++) {
        const model_spec *s = &o->models[i];
        if (!s->kind || !memchr(s->name, '\0', sizeof s->name))
            abort();
        for (int k = 0; k < s->kind->n_dims; k++)
            if (s->dims[k] < s->kind->dims[k].min || s->dims[k] > s->kind->dims[k].max)
                abort();
    }
    if (!(o->rounds == ROUNDS_AUTO || o->rounds == 0 || (o->rounds >= 2 && o->rounds <= ROUNDS_MAX)))
        abort();
    if (o->lr_grid.n < 0 || o->lr_grid.n > LR_GRID_MAX)
        abort();
    for (int i = 0; i < o->lr_grid.n; i++)
        if (!((float)o->lr_grid.lr[i] > 0) || !isfinite((float)o->lr_grid.lr[i]))
            abort();
    if ((int)o->optimizer.kind < 0 || (int)o->optimizer.kind >= optimizer_axis.count ||
        (int)o->optimizer.at < 0 || (int)o->optimizer.at >= optimizer_at_axis.count)
        abort();
    if (!memchr(o->backend, '\0', sizeof o->backend) || !memchr(o->note, '\0', sizeof o->note))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *argv[MAX_ARGS + 1];
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = 0;
    argv[argc++] = "run";
    for (char *p = text, *nl; p && argc < MAX_ARGS; p = nl) {
        nl = strchr(p, '\n');
        if (nl)
            *nl++ = '\0';
        argv[argc++] = p;
    }
    argv[argc] = NULL;

    static run_options o; /* 100 KB: off the fuzzer's stack */
    static int have_defaults;
    if (!have_defaults) {
        options_defaults(&defaults);
        have_defaults = 1;
    }
    o = defaults;
    check_options(&o);
    args a;
    arg_kind k;
    char why[600];
    args_init_table(&a, argc, argv, &run_option_table);
    while ((k = args_next(&a, why, sizeof why)) != ARG_END) {
        if (k == ARG_ERROR && (!why[0] || !memchr(why, '\0', sizeof why)))
            abort();
        if (k != ARG_OPTION || strcmp(a.key, "profile") == 0)
            continue;
        why[0] = '\0';
        if (options_set(&o, a.key, a.value, why, sizeof why) != 0 &&
            (!why[0] || !memchr(why, '\0', sizeof why)))
            abort(); /* a refusal always says why */
        check_options(&o);
    }
    options_note_unused(&o);
    if (options_validate(&o, why, sizeof why) == 0) {
        int micros[64];
        for (int e = 0; e < o.n_effective; e++) {
            int n = options_micro_list(&o, o.effective[e], o.effective[e], micros, 64);
            for (int i = 0; i < n; i++)
                if (micros[i] < 1 || micros[i] > o.effective[e])
                    abort();
        }
        char left[600];
        options_micro_left_out(&o, left, sizeof left);
    }
    free(text);
    return 0;
}
