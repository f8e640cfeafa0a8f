/* The sweep's configs from the options, in one pass (see config.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "model.h"
#include "result_row.h"

#define SWEEP_AXIS(option_, field_, column_) \
    .option = &(option_), .field = offsetof(config, field_), .column = offsetof(result_row, column_)

const sweep_axis sweep_axes[] = {
    {SWEEP_AXIS(options_dtypes, dtype, dtype), .off = DTYPE_FP32},
    {SWEEP_AXIS(options_modes, mode, mode), .off = MODE_ASYNC},
    {SWEEP_AXIS(options_reductions, reduction, reduction), .off = REDUCTION_SUM},
    {SWEEP_AXIS(options_syncs, sync, sync), .off = SYNC_WINDOW, .ranks_only = 1},
    {SWEEP_AXIS(options_shards, shard, shard), .lever = &levers[LEVER_SHARD]},
    {SWEEP_AXIS(options_recomputes, recompute, recompute), .lever = &levers[LEVER_RECOMPUTE]},
    {SWEEP_AXIS(options_grad_dtypes, grad_dtype, grad_dtype), .lever = &levers[LEVER_GRAD_DTYPE]},
};
const int sweep_axes_n = (int)(sizeof sweep_axes / sizeof sweep_axes[0]);
_Static_assert(sizeof sweep_axes / sizeof sweep_axes[0] <= SWEEP_AXES_MAX,
               "config_iter keeps a place on each row axis");

int sweep_axis_off(const sweep_axis *ax)
{
    return ax->lever ? ax->lever->off : ax->off;
}

int sweep_axis_ranks_only(const sweep_axis *ax)
{
    return ax->lever ? ax->lever->ranks_only : ax->ranks_only;
}

/* The configs have ranks: each device count, each value of an axis that
 * varies only with ranks (sync, shard). */
static int has_ranks(const config_iter *it)
{
    return it->data_parallel;
}

static int devices_count(const config_iter *it)
{
    return has_ranks(it) ? it->o->n_devices : 1;
}

static int devices_at(const config_iter *it)
{
    return has_ranks(it) ? it->o->devices[it->di] : 1;
}

/* Row axis a's values in the options, and their count. */
static const int *axis_values(const config_iter *it, int a, int *count)
{
    const char *o = (const char *)it->o;
    *count = *(const int *)(const void *)(o + sweep_axes[a].option->count);
    return (const int *)(const void *)(o + sweep_axes[a].option->list);
}

/* Whether row axis a takes its values from the options here, rather than
 * its one `off` value: its list is empty (options made by hand), or it
 * varies only with ranks and these configs have none. */
static int axis_varies(const config_iter *it, int a)
{
    int count;
    axis_values(it, a, &count);
    return count > 0 && (!sweep_axis_ranks_only(&sweep_axes[a]) || has_ranks(it));
}

static int axis_count(const config_iter *it, int a)
{
    int count;
    axis_values(it, a, &count);
    return axis_varies(it, a) ? count : 1;
}

/* The row axes from a (outermost first) back to their first value. */
static void row_restart(config_iter *it, int a)
{
    for (; a < sweep_axes_n; a++)
        it->row[a] = 0;
}

static void note(config_iter *it, config_level level)
{
    if (level < it->opens)
        it->opens = level;
}

/* The place moves on at `level`: its counter up, every inner one to 0. */
static void advance(config_iter *it, config_level level)
{
    int *counter[] = {&it->mi, &it->ei, &it->di, &it->ui}; /* by level; ui: the row's split */
    if (level < CONFIG_ROW) {
        (*counter[level])++;
        for (int l = level + 1; l <= CONFIG_ROW; l++)
            *counter[l] = 0;
        note(it, level);
    } else {
        it->ui++;
    }
    row_restart(it, 0);
}

/* From the current place to the first that is a config; 0 at the end. */
static int settle_on_config(config_iter *it)
{
    const run_options *o = it->o;
    for (;;) {
        if (it->mi >= it->model_end)
            return 0;
        if (it->ei >= o->n_effective) {
            advance(it, CONFIG_MODEL);
            continue;
        }
        if (it->di >= devices_count(it)) {
            advance(it, CONFIG_BATCH);
            continue;
        }
        int effective = o->effective[it->ei], devices = devices_at(it);
        /* pow2's sizes stop at the most a rank takes; a size named past it
         * is a row, skipped with the reason (unsplittable) */
        int share = (effective + devices - 1) / devices;
        it->n_micro = options_micro_list(o, effective, share, it->micros, 64);
        if (it->ui >= it->n_micro) {
            advance(it, CONFIG_DEVICES);
            continue;
        }
        /* The row axes as an odometer: one past its end carries into the
         * axis outside it (the outermost into the next split). */
        int carried = 0;
        for (int a = 0; a < sweep_axes_n && !carried; a++) {
            if (it->row[a] < axis_count(it, a))
                continue;
            if (a == 0) {
                advance(it, CONFIG_ROW);
            } else {
                it->row[a - 1]++;
                row_restart(it, a);
            }
            carried = 1;
        }
        if (!carried)
            return 1;
    }
}

void config_iter_start(config_iter *it, const run_options *o, int data_parallel)
{
    memset(it, 0, sizeof *it);
    it->o = o;
    it->data_parallel = data_parallel;
    it->model_end = o->n_models;
    it->fresh = 1;
    it->opens = CONFIG_MODEL;
}

void config_iter_skip(config_iter *it, config_level level)
{
    it->opens = CONFIG_ROW; /* the next config begins at `level`, or outside it */
    advance(it, level);
    it->fresh = 1;
}

/* The split of the place; a split its devices cannot take says what it
 * would have been: K passes, and a last micro-batch too small to give
 * every device an example (its largest part, as split.h's last: at least
 * 1, which the CSV reader requires). */
static void make_split(int effective, int micro, int devices, config *c)
{
    c->unsplittable[0] = '\0';
    if (!split_make_sharded(effective, micro, devices, &c->sp, c->unsplittable,
                            (int)sizeof c->unsplittable))
        return;
    long long per_step = (long long)micro * devices;
    c->sp = (split){.effective = (effective + devices - 1) / devices, .global = effective,
                    .micro = micro, .devices = devices,
                    .accum = (int)((effective + per_step - 1) / per_step)};
    c->sp.last = (int)((effective - (c->sp.accum - 1) * per_step + devices - 1) / devices);
}

static void fill(const config_iter *it, config *c)
{
    const run_options *o = it->o;
    c->model = &o->models[it->mi];
    make_split(o->effective[it->ei], it->micros[it->ui], devices_at(it), c);
    c->arm = 1;
    for (int i = 0; i < it->ui; i++)
        c->arm += it->micros[i] == it->micros[it->ui];
    c->data_parallel = has_ranks(it);
    for (int a = 0; a < sweep_axes_n; a++) {
        int count;
        const int *values = axis_values(it, a, &count);
        *(int *)(void *)((char *)c + sweep_axes[a].field) = axis_varies(it, a)
                                                                ? values[it->row[a]]
                                                                : sweep_axis_off(&sweep_axes[a]);
    }
    c->optimizer = o->optimizer.kind;
    c->buffers = o->buffers;
    c->seed = o->seed;
    c->noise_windows = o->noise_windows;
    c->train_steps = o->train_steps;
    c->budget = (config_budget){.warmup = o->warmup, .steps = o->steps,
                                .min_samples = o->min_samples, .max_samples = o->max_samples,
                                .budget_s = o->budget_s, .max_noise_pct = o->max_noise_pct,
                                .max_step_s = o->max_step_s, .trace_steps = o->trace_steps,
                                .rounds = o->rounds};
    c->opens = it->opens;
    c->model_index = it->mi;
    c->devices_index = it->di;
}

int config_next(config_iter *it, config *c)
{
    if (!it->fresh) {
        it->row[sweep_axes_n - 1]++;
        it->opens = CONFIG_ROW;
    }
    it->fresh = 0;
    if (!settle_on_config(it))
        return 0;
    fill(it, c);
    return 1;
}

model_spec config_model_spec(const config *c)
{
    model_spec s = *c->model;
    s.recompute = c->recompute;
    return s;
}

void config_on_model(const config *c, model *m)
{
    m->spec.recompute = c->recompute;
    m->grad_dtype = c->grad_dtype;
}

int config_fingerprint(const run_options *o, int data_parallel)
{
    config_iter it;
    config c;
    uint32_t h = 2166136261u; /* FNV-1a over each config's text, the curves' rates first */
    char rates[64 * (LR_GRID_MAX + 1)];
    int used = snprintf(rates, sizeof rates, "%d", o->lr_grid.sqrt_scaled);
    for (int i = 0; i < o->lr_grid.n && used < (int)sizeof rates; i++)
        used += snprintf(rates + used, sizeof rates - (size_t)used, ",%.9g", o->lr_grid.lr[i]);
    for (const char *p = rates; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    config_iter_start(&it, o, data_parallel);
    while (config_next(&it, &c)) {
        char text[512];
        int n = snprintf(text, sizeof text, "%s", c.model->kind->name);
        for (int d = 0; d < MODEL_MAX_DIMS && n < (int)sizeof text; d++)
            n += snprintf(text + n, sizeof text - (size_t)n, ",%d", c.model->dims[d]);
        if (n < (int)sizeof text)
            snprintf(text + n, sizeof text - (size_t)n,
                     "|%d %d %d %d|%d %d %d %d %d %d %d|%d %d %llu %d %d|%.9g",
                     c.sp.global, c.sp.micro, c.sp.devices, c.arm, (int)c.mode,
                     (int)c.reduction, (int)c.sync, (int)c.shard, (int)c.dtype,
                     (int)c.recompute, (int)c.grad_dtype, (int)c.optimizer, c.buffers,
                     (unsigned long long)c.seed, c.noise_windows, c.train_steps,
                     (double)o->optimizer.lr);
        n = (int)strlen(text);
        /* how it is timed too: every step, warm-up and trace step is a
         * collective, so ranks counting other steps (--steps, --warmup,
         * --rounds, a budget that sizes the rounds' slices) pair one
         * step's collectives with another's and crash or hang */
        if (n < (int)sizeof text)
            snprintf(text + n, sizeof text - (size_t)n, "|%d %d %d %d %d %d|%.9g %.9g %.9g",
                     c.budget.warmup, c.budget.steps, c.budget.min_samples,
                     c.budget.max_samples, c.budget.trace_steps, c.budget.rounds,
                     c.budget.budget_s, c.budget.max_noise_pct, c.budget.max_step_s);
        for (const char *p = text; *p; p++)
            h = (h ^ (unsigned char)*p) * 16777619u;
    }
    return (int)(h & 0x7fffffff);
}

int config_count(const run_options *o, int data_parallel)
{
    config_iter it;
    config c;
    int n = 0;
    config_iter_start(&it, o, data_parallel);
    while (config_next(&it, &c))
        n++;
    return n;
}
