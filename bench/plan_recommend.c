/* plan --recommend (see plan_recommend.h): the checks of its input, the
 * brief measuring run when no CSV is given, then the ranking of
 * harness/results/recommend.c over the rows. */
#include "plan_recommend.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "axis.h"
#include "backend_registry.h"
#include "dispatch.h"
#include "dtype_table.h"
#include "plan_jobs.h"
#include "recommend.h"
#include "sweep.h"

#ifndef ACCUBENCH_GIT_REV
#define ACCUBENCH_GIT_REV "unknown"
#endif

/* The candidates the measuring run makes, as the values handed to run's
 * options: every micro x K that reaches E, times every row of each lever
 * listed (a lever run takes is one more row here; AXIS_ALL, not a list of
 * its names, so that a row added to the lever's table is a candidate too);
 * --shard needs ranks, which this one-device run has not (rank sharded
 * rows with --from). The dtype is one more axis of the same sweep, over
 * every dtype the backend computes in. */
static const char *const RECOMMEND_LEVERS[][2] = {
    {"micro", "pow2"},
    {"recompute", AXIS_ALL},
};

/* Brief: a short budget and few samples a config, enough for the median's
 * interval (six samples at least), no trace pass and no noise scale (the
 * ranking reads neither). The budget is the default of a --budget-s not
 * given. */
static const char *const MEASURE_BUDGET[][2] = {{"budget-s", MEASURE_BUDGET_DEFAULT}};
static const char *const MEASURE_SETTINGS[][2] = {
    {"min-samples", "6"}, {"max-samples", "40"}, {"trace-steps", "0"},
    {"max-step-s", "2"},  {"noise-windows", "0"},
};

/* The recompute values the model's kind runs: one it cannot is a skipped
 * row, measured for nothing. */
static void keep_recomputes_it_runs(run_options *o)
{
    int kept = 0;
    for (int i = 0; i < o->n_recomputes; i++) {
        model_spec m = o->models[0];
        char why[200];
        m.recompute = o->recomputes[i];
        if (model_can_recompute(&m, why, sizeof why))
            o->recomputes[kept++] = o->recomputes[i];
    }
    o->n_recomputes = kept;
}

static int set_all(run_options *o, const char *const (*kv)[2], size_t n, char *why,
                   size_t why_len)
{
    for (size_t i = 0; i < n; i++)
        if (options_set(o, kv[i][0], kv[i][1], why, why_len))
            return -1;
    return 0;
}

/* The weights alone in dt (fp32 master, gradients, optimizer state, the
 * compute copy). */
static size_t state_bytes(const run_options *o, dtype dt, int effective)
{
    memory_need need;
    model_memory_need(&o->models[0], dt, o->optimizer.kind, 1, effective, o->buffers, &need);
    return need.weights + need.master_copy + need.gradients + need.optimizer_state;
}

/* A cap below the weights alone fits nothing, whatever the split; the
 * dtypes measured differ in it (bf16 adds its compute copy), so the cap
 * is held to the least of them: held to the first listed, --dtype
 * bf16,fp32 refused a cap fp32's candidates fit, which --dtype fp32,bf16
 * measured and ranked. */
static int weights_fit(const run_options *o, uint64_t cap, const dtype *list, int n,
                       int effective)
{
    dtype least = list[0];
    size_t weights = state_bytes(o, least, effective);
    for (int i = 1; i < n; i++)
        if (state_bytes(o, list[i], effective) < weights) {
            least = list[i];
            weights = state_bytes(o, least, effective);
        }
    if (cap >= weights)
        return 1;
    fprintf(stderr, "accubench: --mem-cap %llu bytes is below what the weights alone need: "
                    "%zu bytes (model %s in %s: weights, gradients and %s state)\n",
            (unsigned long long)cap, weights, o->models[0].name, dtype_name(least),
            optimizer_name(o->optimizer.kind));
    return 0;
}

/* The candidates' sweep, every dtype of `list` in the same interleaved
 * rounds (so a bf16 candidate against an fp32 one is a paired ratio, not
 * two medians timed apart), into the CSV, held to run's rules for an
 * existing --csv (refused without --append or --replace, and before
 * anything is measured: run_outputs.h). 0, or the sweep's status. */
static int measure_dtypes(run_options *o, const backend_entry *entry, backend *b,
                          const dtype *list, int n)
{
    char dtype_note[300], optimizer_note[300];
    size_t used = 0; /* "fp32, bf16, for plan --recommend" */
    for (int i = 0; i < n; i++) {
        o->dtypes[i] = list[i];
        used += (size_t)snprintf(dtype_note + used, sizeof dtype_note - used, "%s, ",
                                 dtype_name(list[i]));
    }
    o->n_dtypes = n;
    snprintf(dtype_note + used, sizeof dtype_note - used, "for plan --recommend");
    if (o->optimizer_at_auto)
        o->optimizer.at = entry->auto_optimizer_at;
    snprintf(optimizer_note, sizeof optimizer_note, "%s", optimizer_at_name(o->optimizer.at));
    sweep_device dev = {.b = b, .trace_source = "off (plan --recommend)", .note = "",
                        .dtype_note = dtype_note, .optimizer_note = optimizer_note};
    run_context ctx = {.argv0 = "accubench", .git_rev = ACCUBENCH_GIT_REV,
                       .command_line = "accubench plan --recommend"};
    return sweep_run(o, &dev, &ctx);
}

/* The dtypes to measure: those asked (--dtype; auto: the backend's
 * own), or every row of the table. Returns the count. */
static int dtypes_to_measure(const run_options *o, int dtype_given, dtype *out)
{
    if (dtype_given) {
        memcpy(out, o->dtypes, (size_t)o->n_dtypes * sizeof *out);
        return o->n_dtypes;
    }
    for (int d = 0; d < DTYPE_COUNT; d++)
        out[d] = (dtype)d;
    return DTYPE_COUNT;
}

/* Appends a dtype's name to the list of those the backend refuses. */
static void add_refused(char *refused, size_t len, dtype dt)
{
    size_t used = strlen(refused);
    snprintf(refused + used, len - used, "%s%s", used ? ", " : "", dtype_name(dt));
}

/* The backend opened in the first dtype of `list` it computes in; the
 * others it computes in kept in `list` (its first the one it is in), the
 * ones it refuses named in `refused`. The count kept; 0 with the reason
 * in why where it opens in none. */
static int open_in_dtypes(const run_options *o, dtype *list, int n, backend **b,
                          const backend_entry **entry, char *refused, size_t refused_len,
                          char *why, size_t why_len)
{
    char note[400];
    int at, kept = 0;
    if (backend_open_first(o->backend, list, n, &at, b, entry, note, sizeof note, why, why_len) !=
        BK_OK) {
        *b = NULL;
        at = n;
    }
    /* the one open backend serves each later dtype it computes in */
    for (int i = 0; i < n; i++)
        if (i == at || (i > at && bk_use_dtype(*b, list[i]) == BK_OK))
            list[kept++] = list[i];
        else
            add_refused(refused, refused_len, list[i]);
    if (*b)
        (void)bk_use_dtype(*b, list[0]); /* it computed in list[0]: it does again */
    return kept;
}

/* Every dtype asked (or the backend computes in) in one measuring sweep;
 * the ones the backend refuses are said once. Returns 0 when the sweep
 * measured; 2 where it could not start; an interrupted sweep's status
 * (128 + the signal: its rows are on disk and it has said so). */
static int measure_each_dtype(run_options *o, uint64_t cap, int dtype_given)
{
    dtype list[DTYPE_COUNT];
    int n = dtypes_to_measure(o, dtype_given, list);
    char refused[400] = "", why[400] = "";
    const backend_entry *entry;
    backend *b;
    n = open_in_dtypes(o, list, n, &b, &entry, refused, sizeof refused, why, sizeof why);
    if (!n) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    int rc = weights_fit(o, cap, list, n, o->effective[0]) ? measure_dtypes(o, entry, b, list, n)
                                                         : 2;
    b->ops->destroy(b);
    if (rc == 2 || rc > 128)
        return rc; /* said: the cap, the sweep's bad input, or the interruption */
    if (refused[0])
        printf("not measured: %s (the backend does not compute in %s)\n", refused,
               strchr(refused, ',') ? "them" : "it");
    return 0;
}

/* The run's options for the measuring sweep: plan's shared keys, E, and
 * the candidates. */
static int measuring_options(const recommend_args *a, run_options *o)
{
    char why[400];
    *o = *a->shared;
    o->effective[0] = a->effective;
    o->n_effective = 1;
    o->mem_cap = 0; /* measure what would not fit too: the listing says by how much */
    o->no_cupti = 1;
    o->quiet = 1; /* no table: the ranking is what plan prints */
    o->quiet_progress = 1; /* minutes of measuring: say where it is */
    snprintf(o->csv_path, sizeof o->csv_path, "%s", a->out_csv);
    if (set_all(o, RECOMMEND_LEVERS, sizeof RECOMMEND_LEVERS / sizeof *RECOMMEND_LEVERS, why,
                sizeof why) ||
        (!a->budget_given && set_all(o, MEASURE_BUDGET, 1, why, sizeof why)) ||
        set_all(o, MEASURE_SETTINGS, sizeof MEASURE_SETTINGS / sizeof *MEASURE_SETTINGS, why,
                sizeof why) ||
        options_validate(o, why, sizeof why))
        return plan_usage_error(why);
    keep_recomputes_it_runs(o);
    return 0;
}

int plan_recommend(const recommend_args *a)
{
    const run_options *o = a->shared;
    if (!a->effective)
        return plan_usage_error("plan --recommend needs --effective N");
    if (!o->mem_cap)
        return plan_usage_error("plan --recommend needs --mem-cap BYTES (K, M, G, T suffixes)");
    if (a->model_given && o->n_models != 1)
        return plan_usage_error("plan --recommend takes one --model");
    recommend_request req = {.csv_path = a->from,
                             .q = {.effective = a->effective, .devices = a->devices,
                                   .cap = (int64_t)o->mem_cap,
                                   .model = a->model_given ? o->models[0].name : NULL}};
    if (a->from)
        return recommend_from_csv(stdout, &req);
    if (a->devices != 1)
        return plan_usage_error("plan --recommend measures on one device; for more, give --from a CSV "
                   "that ran them under mpirun (make bench-dp)");
    run_options m;
    if (measuring_options(a, &m))
        return 2;
    int rc = measure_each_dtype(&m, o->mem_cap, a->dtype_given);
    if (rc)
        return rc;
    req.csv_path = a->out_csv;
    req.q.model = m.models[0].name;
    req.measured = 1;
    return recommend_from_csv(stdout, &req);
}
