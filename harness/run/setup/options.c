#include "options.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dedupe.h"
#include "nearest.h"
#include "noise_pass.h"
#include "parse.h"
#include "registry.h"

/* The largest batch anyone should ask of one device; also keeps every
 * product of sizes inside an int. */
#define MAX_BATCH (1 << 20)
/* The most ranks one run may span. */
#define MAX_DEVICES 4096

/* A list option's entries named twice run once (dedupe.h); the note says
 * so, once per option. */
static void dedupe_list(run_options *o, const char *key, const char *value, void *items,
                        int *count, size_t size, int (*same)(const void *, const void *))
{
    int kept = dedupe_keep_first(items, *count, size, same);
    if (kept < *count) {
        size_t used = strlen(o->note);
        snprintf(o->note + used, sizeof o->note - used, "%s--%s '%s' names an entry more than "
                 "once: each runs once", used ? "; " : "", key, value);
    }
    *count = kept;
}

static int same_bytes4(const void *a, const void *b)
{
    return memcmp(a, b, 4) == 0;
}

/* One learning rate as the curves file names it (lr_grid.h) */
static int same_rate(const void *a, const void *b)
{
    return lr_grid_same_rate(*(const double *)a, *(const double *)b);
}

/* The same model is the same kind and shape, however it was spelled. */
static int same_model(const void *a, const void *b)
{
    const model_spec *x = a, *y = b;
    return x->kind == y->kind && !memcmp(x->dims, y->dims, sizeof x->dims);
}

/* Splits a comma list (whole, however long) into items; -1 with a reason. */
static int split_value(const char *key, const char *value, char **copy, char **items,
                       char *why, size_t n)
{
    *copy = strdup(value);
    if (!*copy) {
        snprintf(why, n, "%s: out of memory", key);
        return -1;
    }
    int count = split_list(key, *copy, items, OPT_MAX_LIST, why, n);
    if (count < 0) {
        free(*copy);
        *copy = NULL;
    }
    return count;
}

/* ------------------------------------------------------------ the axes */

#define AXIS_OPTION(table, list_, count_) \
    {&(table), offsetof(run_options, list_), offsetof(run_options, count_), OPT_MAX_LIST}
const axis_option options_dtypes = AXIS_OPTION(dtype_axis, dtypes, n_dtypes);
const axis_option options_modes = AXIS_OPTION(mode_axis, modes, n_modes);
const axis_option options_reductions = AXIS_OPTION(reduction_axis, reductions, n_reductions);
const axis_option options_syncs = AXIS_OPTION(sync_axis, syncs, n_syncs);
const axis_option options_shards = AXIS_OPTION(shard_axis, shards, n_shards);
const axis_option options_recomputes = AXIS_OPTION(recompute_axis, recomputes, n_recomputes);
const axis_option options_grad_dtypes = AXIS_OPTION(grad_dtype_axis, grad_dtypes, n_grad_dtypes);

/* Every name of an axis, ", " between them. */
static const char *names_of(const axis *ax, char *out, size_t n)
{
    return axis_names(ax, out, n, ", ");
}

/* "unknown KEY 'ITEM' (known: ...); did you mean 'NEAR'?" */
static void unknown_value(const char *key, const char *item, const char *known, char *why,
                          size_t n)
{
    snprintf(why, n, "unknown %s '%s' (known: %s)", key, item, known);
    nearest_suggest(why, n, item, known);
}

/* The rows a list names (AXIS_ALL alone: every row of the table, in its
 * order), into got; their count, or -1 with the reason. got holds
 * OPT_MAX_LIST: a larger count is returned for the caller to refuse. */
static int axis_list_items(const axis *ax, const char *key, const char *value, int *got,
                           char *why, size_t n)
{
    if (strcmp(value, AXIS_ALL) == 0) {
        for (int i = 0; i < ax->count && i < OPT_MAX_LIST; i++)
            got[i] = i;
        return ax->count;
    }
    char *copy, *items[OPT_MAX_LIST];
    int count = split_value(key, value, &copy, items, why, n);
    for (int i = 0; i < count; i++)
        if (strcmp(items[i], AXIS_ALL) == 0) {
            snprintf(why, n, "--%s '%s': %s names every value and stands alone", key, value,
                     AXIS_ALL);
            count = -1;
        } else if ((got[i] = axis_find(ax, items[i])) < 0) {
            char known[512];
            unknown_value(key, items[i], names_of(ax, known, sizeof known), why, n);
            count = -1;
        }
    free(copy);
    return count;
}

/* Every axis enum is an int-sized value (checked below). */
static int set_axis_list(void *target, const option_def *d, const char *value, char *why,
                         size_t n)
{
    const axis_option *ax = d->ctx;
    run_options *o = target;
    int got[OPT_MAX_LIST], count = axis_list_items(ax->ax, d->key, value, got, why, n);
    if (count < 0)
        return -1; /* the list before stays */
    if (count > ax->cap) {
        snprintf(why, n, "--%s names more than %d entries", d->key, ax->cap);
        return -1;
    }
    dedupe_list(o, d->key, value, got, &count, sizeof got[0], same_bytes4);
    memcpy((char *)o + ax->list, got, (size_t)count * sizeof got[0]);
    *(int *)(void *)((char *)o + ax->count) = count;
    return 0;
}

/* A list of dtypes, or auto alone: the backend's own is one dtype, which
 * it says when it opens. */
static int set_dtype(void *target, const option_def *d, const char *value, char *why,
                     size_t n)
{
    run_options *o = target;
    const char *auto_name = dtype_name(DTYPE_AUTO);
    if (strcmp(value, auto_name) == 0) {
        o->dtypes[0] = DTYPE_AUTO;
        o->n_dtypes = 1;
        return 0;
    }
    size_t len = strlen(auto_name);
    for (const char *p = value; *p; p += strcspn(p, ","), p += *p == ',') {
        const char *item = p + strspn(p, " ");
        if (!strncmp(item, auto_name, len) && (!item[len] || strchr(", ", item[len]))) {
            snprintf(why, n, "--%s '%s': auto is the backend's one choice and stands alone; "
                     "name the dtypes to compare (e.g. fp32,bf16)", d->key, value);
            return -1;
        }
    }
    return set_axis_list(target, d, value, why, n);
}

static int set_optimizer(void *target, const option_def *d, const char *value, char *why,
                         size_t n)
{
    run_options *o = target;
    int found = axis_find(&optimizer_axis, value);
    if (found >= 0) {
        o->optimizer.kind = (optimizer_kind)found;
        return 0;
    }
    char known[160];
    unknown_value(d->key, value, names_of(&optimizer_axis, known, sizeof known), why, n);
    return -1;
}

static int set_optimizer_at(void *target, const option_def *d, const char *value, char *why,
                            size_t n)
{
    run_options *o = target;
    int at = axis_find(&optimizer_at_axis, value);
    if (strcmp(value, "auto") == 0 || at >= 0) {
        o->optimizer_at_auto = strcmp(value, "auto") == 0;
        if (!o->optimizer_at_auto)
            o->optimizer.at = (optimizer_at)at;
        return 0;
    }
    char known[200], names[160];
    snprintf(known, sizeof known, "auto, %s", names_of(&optimizer_at_axis, names, sizeof names));
    unknown_value(d->key, value, known, why, n);
    return -1;
}

/* The nearest preset to each item of a refused --model list that is a
 * plain name. */
static void suggest_model(const char *value, char *why, size_t n)
{
    char *copy, *items[OPT_MAX_LIST], reason[300];
    int count = split_value("model", value, &copy, items, reason, sizeof reason);
    model_spec spec;
    for (int i = 0; i < count; i++)
        if (!strpbrk(items[i], ":=") && model_spec_parse(items[i], &spec, NULL, 0)) {
            nearest_suggest(why, n, items[i], model_names());
            break;
        }
    free(copy);
}

static int set_model(void *target, const option_def *d, const char *value, char *why,
                     size_t n)
{
    run_options *o = target;
    model_spec models[OPT_MAX_LIST]; /* the old list stays if the new one is refused */
    int count = model_spec_list_parse(value, models, OPT_MAX_LIST, why, n);
    if (count < 0) {
        if (strncmp(why, "unknown model '", 15) == 0)
            suggest_model(value, why, n);
        return -1;
    }
    memcpy(o->models, models, (size_t)count * sizeof models[0]);
    o->n_models = count;
    dedupe_list(o, d->key, value, o->models, &o->n_models, sizeof o->models[0], same_model);
    return 0;
}

/* ------------------------------------------------------------ numbers */

/* A micro-batch named twice is timed as two arms of one config (an A/A
 * check: the comparison rule against a difference known to be zero); a
 * third arm would add nothing the second does not, and a list that names
 * one three times is more likely a slip. */
static int micro_arms_check(const int *got, int n, char *why, size_t len)
{
    for (int i = 0; i < n; i++) {
        int times = 0;
        for (int j = 0; j < n; j++)
            times += got[j] == got[i];
        if (times > 2) {
            snprintf(why, len, "micro-batch %d is named %d times: twice is an A/A check (two "
                     "arms of one config), a third arm adds nothing", got[i], times);
            return -1;
        }
    }
    return 0;
}

/* An int list (--effective, --micro, --devices): each item in [1, max];
 * --micro also takes pow2. */
static int set_int_list(void *target, const option_def *d, const char *value, char *why,
                        size_t n)
{
    run_options *o = target;
    int is_micro = d->offset == offsetof(run_options, micro);
    char *copy, *items[OPT_MAX_LIST];
    int got[OPT_MAX_LIST], pow2 = 0, kept = 0, count = split_value(d->key, value, &copy,
                                                                   items, why, n);
    for (int i = 0; i < count; i++) {
        long long x;
        if (is_micro && strcmp(items[i], "pow2") == 0) {
            pow2 = 1;
        } else if (parse_int(d->key, items[i], d->min, d->max, &x, why, n)) {
            count = -1;
        } else {
            got[kept++] = (int)x;
        }
    }
    free(copy);
    if (count < 0 || (is_micro && micro_arms_check(got, kept, why, n)))
        return -1;
    if (!is_micro) /* a micro-batch named twice is an A/A check: two arms */
        dedupe_list(o, d->key, value, got, &kept, sizeof got[0], dedupe_same_int);
    memcpy((char *)o + d->offset, got, (size_t)kept * sizeof got[0]);
    *(int *)(void *)((char *)o + d->size) = kept; /* size: where the count is */
    if (is_micro)
        o->micro_pow2 = pow2;
    return 0;
}

/* --lr-grid sqrt|LIST (lr_grid.h). */
static int set_lr_grid(void *target, const option_def *d, const char *value, char *why,
                       size_t n)
{
    run_options *o = target;
    if (lr_grid_parse(value, &o->lr_grid, why, n))
        return -1;
    /* a rate named twice (0.1,0.10, or 0.001,0.0010000001: one rate in the
     * curves file's digits) would train and write each curve twice */
    dedupe_list(o, d->key, value, o->lr_grid.lr, &o->lr_grid.n, sizeof o->lr_grid.lr[0],
                same_rate);
    return 0;
}

/* --rounds auto|off|N: N from 2 (one round has no interval) to ROUNDS_MAX. */
static int set_rounds(void *target, const option_def *d, const char *value, char *why,
                      size_t n)
{
    run_options *o = target;
    long long x;
    if (!strcmp(value, "auto"))
        o->rounds = ROUNDS_AUTO;
    else if (!strcmp(value, "off"))
        o->rounds = 0;
    else if (parse_int(d->key, value, 2, ROUNDS_MAX, &x, why, n) == 0)
        o->rounds = (int)x;
    else {
        snprintf(why, n, "--%s takes auto, off or a count of rounds from 2 to %d, not '%s'",
                 d->key, ROUNDS_MAX, value);
        return -1;
    }
    return 0;
}

static int set_backend(void *target, const option_def *d, const char *value, char *why,
                       size_t n)
{
    run_options *o = target;
    /* The program knows which backends it has and checks the name. */
    if (strlen(value) >= sizeof o->backend) {
        snprintf(why, n, "unknown %s '%s'", d->key, value);
        return -1;
    }
    snprintf(o->backend, sizeof o->backend, "%s", value);
    return 0;
}

/* The command line reads --profile first, itself; a profile cannot name
 * another. */
static int set_profile(void *target, const option_def *d, const char *value, char *why,
                       size_t n)
{
    (void)target;
    snprintf(why, n, "%s '%s': a profile is named on the command line, not inside another",
             d->key, value);
    return -1;
}

_Static_assert(sizeof(dtype) == sizeof(int) && sizeof(exec_mode) == sizeof(int) &&
                   sizeof(reduction) == sizeof(int) &&
                   sizeof(sync_mode) == sizeof(int) && sizeof(recompute) == sizeof(int) &&
                   sizeof(shard_mode) == sizeof(int) && sizeof(grad_dtype) == sizeof(int),
               "set_axis_list and the sweep keep an axis's values as ints");

/* ------------------------------------------------------------ usage text */

/* "a, b, c" as "HEADa|b|c": the choice of one. */
static const char *one_of(char *out, size_t n, const char *head, const char *names)
{
    size_t used = (size_t)snprintf(out, n, "%s", head);
    for (const char *p = names; *p && used + 1 < n; p++)
        if (*p != ' ')
            out[used++] = *p == ',' ? '|' : *p;
    out[used < n ? used : n - 1] = '\0';
    return out;
}

/* The help of every list axis: the names of its table's rows (the row's
 * ctx), so that a new axis's row needs no function of its own. */
static const char *axis_list_help(const option_def *d, char *out, size_t n)
{
    return names_of(((const axis_option *)d->ctx)->ax, out, n);
}
static const char *model_help(const option_def *d, char *out, size_t n)
{
    (void)d;
    snprintf(out, n, "%s", model_names());
    return out;
}
static const char *dtype_help(const option_def *d, char *out, size_t n)
{
    char names[160];
    snprintf(out, n, "%s, or auto alone: each config runs in each dtype, compared in the "
             "same rounds", axis_list_help(d, names, sizeof names));
    return out;
}
/* Which reductions are right comes from the table's `exact` column. */
static const char *reduction_help(const option_def *d, char *out, size_t n)
{
    char names[256], exact[256];
    snprintf(out, n, "%s: %s; the others are known bugs", axis_list_help(d, names, sizeof names),
             reduction_exact_list(exact, sizeof exact));
    return out;
}
static const char *optimizer_help(const option_def *d, char *out, size_t n)
{
    char names[160];
    (void)d;
    return one_of(out, n, "", names_of(&optimizer_axis, names, sizeof names));
}
static const char *optimizer_at_help(const option_def *d, char *out, size_t n)
{
    char names[160];
    (void)d;
    return one_of(out, n, "auto|", names_of(&optimizer_at_axis, names, sizeof names));
}

#define AT(field) offsetof(run_options, field)
#define INT_ROW(k, a, f, lo_, hi_) .key = k, .arg = a, .type = OPTION_INT, .offset = AT(f), \
                                   .min = lo_, .max = hi_
#define REAL_ROW(k, a, f, lo_, hi_) .key = k, .arg = a, .type = OPTION_REAL, .offset = AT(f), \
                                    .lo = lo_, .hi = hi_
#define PATH_ROW(k, a, f) .key = k, .arg = a, .type = OPTION_PATH, .offset = AT(f), \
                          .size = sizeof(((run_options *)0)->f)
#define LIST_ROW(k, a, f, n_) .key = k, .arg = a, .type = OPTION_CUSTOM, .set = set_int_list, \
                              .offset = AT(f), .size = AT(n_), .min = 1
#define AXIS_ROW(k, a, ax, h) .key = k, .arg = a "|" AXIS_ALL, .type = OPTION_CUSTOM, \
                              .set = set_axis_list, .ctx = &ax, .help_fn = h
#define CUSTOM_ROW(k, a, fn) .key = k, .arg = a, .type = OPTION_CUSTOM, .set = fn

/* Every option of `accubench run`, in the order --help lists them; the
 * same keys in a profile. */
static const option_def RUN_OPTIONS[] = {
    {CUSTOM_ROW("profile", "NAME|FILE", set_profile),
     .help = "a sweep definition: a profile below, or a file; the command line overrides it"},
    {LIST_ROW("effective", "LIST", effective, n_effective), .max = MAX_BATCH, .def = "64",
     .help = "effective batch sizes, e.g. 64 or 64,256"},
    {LIST_ROW("micro", "LIST|pow2", micro, n_micro), .max = MAX_BATCH, .def = "pow2",
     .help = "micro-batch sizes; pow2 = every power of two up to E, and E; a size over an E is "
             "left out at that E"},
    {CUSTOM_ROW("model", "LIST", set_model), .help_fn = model_help, .def = "S"},
    {CUSTOM_ROW("dtype", "auto|LIST|" AXIS_ALL, set_dtype), .ctx = &options_dtypes,
     .help_fn = dtype_help, .def = "auto", .tag = RUN_TAG_AUTO_DTYPE},
    {AXIS_ROW("mode", "LIST", options_modes, axis_list_help), .def = "async"},
    {AXIS_ROW("reduction", "LIST", options_reductions, reduction_help), .def = "sum"},
    {AXIS_ROW("recompute", "LIST", options_recomputes, axis_list_help), .def = "none",
     .help = "what the backward recomputes instead of keeping: the GELU's output, or each "
             "block's forward (docs/recompute.md)"},
    {AXIS_ROW("grad-dtype", "LIST", options_grad_dtypes, axis_list_help), .def = "fp32",
     .help = "what the accumulated gradient is held in between micro-batches: bf16 rounds "
             "it to bf16 after each one, emulated on fp32 storage (the memory need stays "
             "fp32's; one device only; docs/grad-dtype.md)"},
    {CUSTOM_ROW("optimizer", "NAME", set_optimizer), .help_fn = optimizer_help,
     .def = "adamw"},
    {CUSTOM_ROW("optimizer-at", "WHERE", set_optimizer_at), .help_fn = optimizer_at_help,
     .help = "after the window, or per layer in the last backward (one device)",
     .def = "auto", .tag = RUN_TAG_AUTO_OPTIMIZER_AT},
    {LIST_ROW("devices", "LIST", devices, n_devices), .max = MAX_DEVICES,
     .shown = "every rank launched",
     .help = "data parallel, under mpirun: each count on that many ranks"},
    {AXIS_ROW("sync", "LIST", options_syncs, axis_list_help), .def = "window",
     .help = "when the gradient all-reduce runs"},
    {AXIS_ROW("shard", "LIST", options_shards, axis_list_help), .def = "none",
     .help = "what each rank keeps: optimizer = its slice of the AdamW state (ZeRO-1), "
             "gradients = and of the gradient (ZeRO-2); under mpirun"},
    {.key = "lr", .arg = "X", .type = OPTION_FLOAT, .offset = AT(optimizer.lr), .lo = 0,
     .hi = LR_MAX, .def = "0.001", .help = "the learning rate"},
    {CUSTOM_ROW("backend", "NAME", set_backend), .def = "auto", .tag = RUN_TAG_BACKEND,
     .help = "the device to run on"},
    {INT_ROW("steps", "N", steps, 1, 1000000), .shown = "adaptive",
     .help = "time exactly N steps (a slice of N steps a round where --rounds is a count)"},
    {CUSTOM_ROW("rounds", "auto|off|N", set_rounds), .def = "auto",
     .help = "time the configs of one model, effective batch and device count in "
             "interleaved rounds, each a slice of steps per config in a fresh random order, "
             "until every paired ratio is decided or the budget ends (auto: unless --steps "
             "is fixed); N: exactly N rounds; off: each config alone"},
    {REAL_ROW("budget-s", "S", budget_s, 0.001, 86400), .def = "2",
     .help = "time budget of a config's timed steps; warm-up and the trace pass keep to it "
             "too, the checks run whole"},
    {REAL_ROW("max-noise", "PCT", max_noise_pct, 0.001, 100), .def = "2",
     .help = "stop once the relative noise is under PCT"},
    {REAL_ROW("max-step-s", "S", max_step_s, 0.001, 86400), .def = "10",
     .help = "skip configs whose step would take longer"},
    {INT_ROW("min-samples", "N", min_samples, 1, 1000000), .def = "5",
     .help = "timed steps at least, however low the noise"},
    {INT_ROW("max-samples", "N", max_samples, 1, 1000000), .def = "1000",
     .help = "timed steps at most, however high the noise"},
    {INT_ROW("warmup", "N", warmup, 0, 10000), .def = "2",
     .help = "untimed steps before the timed ones"},
    {.key = "seed", .arg = "N", .type = OPTION_U64, .offset = AT(seed), .min = 0,
     .max = LLONG_MAX, .def = "1", .help = "synthetic data seed"},
    {INT_ROW("buffers", "N", buffers, 1, DATASET_MAX_BUFFERS), .def = "3",
     .help = "input buffers rotated"},
    {.key = "mem-cap", .arg = "BYTES", .type = OPTION_BYTES, .offset = AT(mem_cap),
     .def = "0", .shown = "0, none", .help = "emulate a smaller device; K, M, G, T suffixes"},
    {PATH_ROW("out", "DIR", out_dir), .def = "results", .shown = "results/",
     .help = "where the CSV goes"},
    {PATH_ROW("csv", "FILE", csv_path), .help = "the CSV's exact path"},
    {PATH_ROW("trace", "FILE", trace_path),
     .help = "one step of the first config as Chrome trace JSON"},
    {INT_ROW("trace-steps", "N", trace_steps, 0, 1000), .def = "3",
     .help = "steps in the trace pass; 0: no trace pass"},
    {INT_ROW("noise-windows", "N", noise_windows, 0, 100000), .def = NOISE_WINDOWS_DEFAULT_TEXT,
     .help = "the most windows of the gradient noise scale, measured beside the gradient "
             "check (fewer, at least 4, once a fifth of --budget-s is spent); 0: none, else "
             "at least 2 (docs/noise-scale.md)"},
    {INT_ROW("train-steps", "N", train_steps, 0, 1000000), .def = "0",
     .help = "optimizer steps from the starting weights per config on learnable data, each "
             "step's loss into NAME.curves.csv; 0: none"},
    {.key = "lr-grid", .arg = "sqrt|LIST", .type = OPTION_CUSTOM, .set = set_lr_grid,
     .shown = "none: --lr alone",
     .help = "with --train-steps: every config's curve at each of these learning rates "
             "(a comma list), or sqrt: --lr x sqrt(E / the first E) x 0.5, 1 and 2; the "
             "report keeps each E's best by final loss"},
    {PATH_ROW("dump", "DIR", dump_dir),
     .help = "the first config's window and gradient as .npy files for checks with other "
             "frameworks (docs/dump.md)"},
    {.key = "no-cupti", .type = OPTION_FLAG, .offset = AT(no_cupti), .def = "no", .shown = "",
     .help = "no activity collector (for Nsight Systems)"},
    {.key = "append", .type = OPTION_FLAG, .offset = AT(append), .def = "no", .shown = "",
     .help = "add rows to an existing --csv (same columns and settings)"},
    {.key = "replace", .type = OPTION_FLAG, .offset = AT(replace), .def = "no", .shown = "",
     .help = "replace an existing --csv, once the first row is measured"},
    {.key = "quiet", .type = OPTION_FLAG, .offset = AT(quiet), .def = "no", .shown = "",
     .help = "on stdout only the last line, naming the CSV (errors still go to stderr)"},
};

const option_table run_option_table = {RUN_OPTIONS,
                                       (int)(sizeof RUN_OPTIONS / sizeof RUN_OPTIONS[0])};

void options_defaults(run_options *o)
{
    memset(o, 0, sizeof *o);
    char why[300];
    /* the table's own defaults; its test proves each one parses */
    if (option_defaults(&run_option_table, o, why, sizeof why))
        fprintf(stderr, "accubench: %s\n", why);
    /* the optimizer's constants are no options */
    o->optimizer.beta1 = 0.9f;
    o->optimizer.beta2 = 0.999f;
    o->optimizer.eps = 1e-8f;
    o->optimizer.weight_decay = 0.01f;
}

void options_note_unused(run_options *o)
{
    run_options d;
    options_defaults(&d);
    if (o->csv_path[0] && strcmp(o->out_dir, d.out_dir)) {
        size_t used = strlen(o->note);
        snprintf(o->note + used, sizeof o->note - used, "%s--out %s is not used: --csv %s "
                 "names the file", used ? "; " : "", o->out_dir, o->csv_path);
    }
}

int options_is_flag(const char *key)
{
    return option_is_flag(&run_option_table, key);
}

int options_set(run_options *o, const char *key, const char *value, char *why, size_t n)
{
    return option_set(&run_option_table, o, key, value, why, n);
}
csv_existing options_csv_existing(const run_options *o)
{
    return o->append ? CSV_APPEND : o->replace ? CSV_REPLACE : CSV_REFUSE;
}

int options_validate(const run_options *o, char *why, size_t n)
{
    if (o->noise_windows == 1) { /* one window has no spread to estimate from */
        snprintf(why, n, "noise-windows needs 0 (none) or 2 and more windows, got 1");
        return -1;
    }
    if (lr_grid_active(&o->lr_grid) && o->train_steps <= 0) { /* it trains nothing else */
        snprintf(why, n, "--lr-grid goes with --train-steps N (the rates of the loss curves)");
        return -1;
    }
    if (o->lr_grid.sqrt_scaled && !(o->optimizer.lr > 0)) { /* its three rates would be one */
        snprintf(why, n, "--lr-grid sqrt scales --lr, which is %g: give --lr above 0",
                 (double)o->optimizer.lr);
        return -1;
    }
    if (o->append && o->replace) {
        snprintf(why, n, "--append and --replace: say one of them");
        return -1;
    }
    if ((o->append || o->replace) && !o->csv_path[0]) { /* else they would go unheard */
        snprintf(why, n, "--%s needs --csv FILE: without it the run writes a new file of a "
                 "name of its own", o->append ? "append" : "replace");
        return -1;
    }
    if (o->n_micro == 0 && !o->micro_pow2) {
        snprintf(why, n, "no micro-batch sizes given");
        return -1;
    }
    /* A size larger than some effective batches is left out there (the
     * sweep says so); larger than all of them, it would never run. */
    int largest = 0;
    for (int i = 0; i < o->n_effective; i++)
        largest = o->effective[i] > largest ? o->effective[i] : largest;
    for (int j = 0; j < o->n_micro; j++)
        if (o->micro[j] > largest) {
            if (o->n_effective == 1)
                snprintf(why, n, "micro-batch %d is larger than the effective batch %d",
                         o->micro[j], largest);
            else
                snprintf(why, n, "micro-batch %d is larger than every effective batch "
                         "(the largest is %d)", o->micro[j], largest);
            return -1;
        }
    if (o->min_samples > o->max_samples) {
        snprintf(why, n, "min-samples %d is more than max-samples %d", o->min_samples,
                 o->max_samples);
        return -1;
    }
    return 0;
}
