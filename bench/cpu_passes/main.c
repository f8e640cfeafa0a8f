/* cpu-passes: the CPU backend's step pass by pass, and its MFU.
 *
 *   cpu-passes [--model NAME] [--effective N] [--micro N] [--runs N]
 *              [--steps N] [--optimizer-at step|backward] [--dtype D] | --help
 *
 * Each run measures the peak GEMM rate as `accubench run` does
 * (measure_peak_gemm), then times `steps` whole optimizer steps of the
 * model at the split (measure_steps, after a warm-up) and prints the
 * median step and the MFU: the step's GEMM FLOPs per second over the peak
 * measured in the same run, the number `accubench run` prints in its mfu%
 * column. Then `steps` more steps are timed one by one in the process's
 * CPU time: with ACCUBENCH_CPU_THREADS=1 the step's own work, which a core
 * taken by other processes does not lengthen where it lengthens the
 * wall-clock step (on more threads, every thread's time, their polling
 * between loops included). After that, `steps` more are recorded op by op
 * (the per-dispatch records of the trace pass: on the CPU a dispatch is
 * the work itself) and each op is printed with its calls and milliseconds
 * per step and its share of the step; "host" is the step's time outside
 * every op. The GEMMs' share is also given as a rate against the peak.
 *
 * Defaults: model S at 256 x 1, three runs of 20 steps, fp32: S's largest
 * micro-batch, the configuration whose MFU the CPU backend is judged by.
 * --dtype bf16 runs the model in bf16 storage, as `accubench run --dtype
 * bf16` does, the peak GEMM timed in bf16 too.
 *
 * Exit status: 0; 1 when a run failed; 2 on bad usage. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "cpu_backend.h"
#include "cpu_parallel.h"
#include "dataset.h"
#include "dispatch.h"
#include "measure.h"
#include "model.h"
#include "options.h"
#include "parse.h"
#include "ranges.h"
#include "registry.h"
#include "split.h"
#include "split_text.h"
#include "stats.h"
#include "step.h"
#include "trace.h"

#define MAX_RUNS 20
#define MAX_OPS 64

typedef struct options {
    model_spec model;
    int effective, micro, runs, steps;
    optimizer_at at;
    dtype dt;
} options;

/* What the command line sets: cpu-passes' own keys, and run's rows for
 * --model, --optimizer-at and --dtype (run.*), so they mean what they mean
 * there. */
typedef struct passes_args {
    int effective, micro, runs, steps;
    run_options run;
} passes_args;

#define PASSES_INT(k, f, hi, d, h) .key = k, .arg = "N", .type = OPTION_INT, \
    .offset = offsetof(passes_args, f), .min = 1, .max = hi, .def = d, .help = h

static const option_def PASSES_OPTIONS[] = {
    {PASSES_INT("effective", effective, 1 << 20, "256", "the effective batch")},
    {PASSES_INT("micro", micro, 1 << 20, NULL, "the micro-batch"),
     .shown = "the effective batch, one pass"},
    {PASSES_INT("runs", runs, MAX_RUNS, "3", "peak GEMM + timed steps, this many times")},
    {PASSES_INT("steps", steps, 1 << 20, "20",
                "steps timed per run, and recorded for the breakdown")},
};
static const option_table passes_table = {
    PASSES_OPTIONS, (int)(sizeof PASSES_OPTIONS / sizeof PASSES_OPTIONS[0])};
static const char *const SHARED[] = {"model", "optimizer-at", "dtype"};
#define N_SHARED ((int)(sizeof SHARED / sizeof SHARED[0]))

static void passes_usage(FILE *f)
{
    char places[64];
    axis_names(&optimizer_at_axis, places, sizeof places, "|"); /* step|backward */
    fprintf(f, "usage: cpu-passes [--model NAME] [--effective N] [--micro N] [--runs N] "
               "[--steps N] [--optimizer-at %s] [--dtype D]\n", places);
}

/* run's defaults where cpu-passes' differ: one model, S; the optimizer per
 * layer in the last backward, as accubench run does on the CPU. */
static void passes_defaults(passes_args *a)
{
    char why[300];
    memset(a, 0, sizeof *a);
    options_defaults(&a->run);
    if (option_defaults(&passes_table, a, why, sizeof why) ||
        options_set(&a->run, "optimizer-at", "backward", why, sizeof why))
        fprintf(stderr, "cpu-passes: %s\n", why);
}

/* run's rows with cpu-passes' own defaults: one model; one dtype; the
 * optimizer at passes_defaults' place. */
static void shared_defaults(const option_def *d, char *help, size_t help_len, char *shown,
                            size_t shown_len)
{
    passes_args defaults;
    passes_defaults(&defaults);
    if (strcmp(d->key, "model") == 0) {
        char all[600];
        snprintf(all, sizeof all, "%s", help);
        snprintf(help, help_len, "one model: %s", all);
    }
    if (strcmp(d->key, "dtype") == 0) /* run's list, one here */
        snprintf(help, help_len, "one dtype: fp32 or bf16 on the CPU, or auto (fp32)");
    if (d->tag == RUN_TAG_AUTO_OPTIMIZER_AT)
        snprintf(shown, shown_len, "%s, as accubench run on the CPU",
                 optimizer_at_name(defaults.run.optimizer.at));
}

static void passes_help(void)
{
    passes_usage(stdout);
    printf("\n");
    option_usage(stdout, &passes_table, NULL);
    option_shared shared = {&run_option_table, SHARED, N_SHARED, NULL};
    option_usage_shared(stdout, &shared, shared_defaults);
}

/* One line, as every command's usage error: the usage is --help's. */
static int passes_bad_usage(const char *why)
{
    fprintf(stderr, "cpu-passes: %s (see cpu-passes --help)\n", why);
    return 2;
}

static int passes_is_flag(const char *key)
{
    (void)key;
    return 0;
}

static int passes_is_known(const char *key)
{
    for (int i = 0; i < N_SHARED; i++)
        if (!strcmp(key, SHARED[i]))
            return 1;
    return option_find(&passes_table, key) != NULL;
}

/* cpu-passes' own rows only: it takes one --model (and one --dtype) where
 * run takes a list. */
static int passes_takes_list(const char *key)
{
    return option_takes_list(&passes_table, key);
}

/* The parsed arguments as the run wants them. 0, or 2 with the reason said. */
static int finish_options(const passes_args *in, options *o)
{
    char why[320];
    if (in->run.n_models != 1)
        return passes_bad_usage("--model: cpu-passes takes one model");
    if (in->run.n_dtypes != 1)
        return passes_bad_usage("--dtype: cpu-passes takes one dtype");
    /* auto is the CPU's own, fp32 (the backend's reference). */
    dtype dt = in->run.dtypes[0] == DTYPE_AUTO ? DTYPE_FP32 : in->run.dtypes[0];
    *o = (options){in->run.models[0], in->effective, in->micro ? in->micro : in->effective,
                   in->runs, in->steps, in->run.optimizer.at, dt};
    if (o->micro > o->effective) {
        snprintf(why, sizeof why, "--micro %d is larger than --effective %d", o->micro,
                 o->effective);
        return passes_bad_usage(why);
    }
    return 0;
}

/* 0: run; 1: --help was answered; 2: bad usage, said on stderr. */
static int parse_options(int argc, char **argv, options *o)
{
    char why[320];
    passes_args in;
    passes_defaults(&in);
    option_shared shared = {&run_option_table, SHARED, N_SHARED, &in.run};
    args a;
    args_init(&a, argc, argv, passes_is_flag);
    a.is_known = passes_is_known;
    a.takes_list = passes_takes_list;
    for (;;) {
        arg_kind k = args_next(&a, why, sizeof why);
        if (k == ARG_END)
            break;
        if (k == ARG_HELP) {
            passes_help();
            return 1;
        }
        if (k == ARG_POSITIONAL)
            snprintf(why, sizeof why, "unexpected argument '%s'", a.value);
        if (k == ARG_ERROR || k == ARG_POSITIONAL ||
            option_set_with(&passes_table, &in, &shared, NULL, a.key, a.value, why,
                            sizeof why))
            return passes_bad_usage(why);
    }
    return finish_options(&in, o);
}

typedef struct op_total {
    const char *name;
    int calls;
    uint64_t ns;
} op_total;

static int by_pass_time(const void *a, const void *b)
{
    const op_total *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->name, y->name);
}

/* Runs one step with rec attached to the backend and the ranges. */
static int recorded_step(step_runner *s, trace_recorder *rec)
{
    backend *b = s->m->b;
    b->recorder = rec;
    ranges_attach_recorder(rec);
    int rc = step_run(s);
    if (!rc)
        rc = b->ops->sync(b);
    ranges_attach_recorder(NULL);
    b->recorder = NULL;
    return rc;
}

/* Records `steps` steps op by op into rec (set up here; free it after,
 * whatever this returns). */
static int record_steps(step_runner *s, int steps, trace_recorder *rec)
{
    backend *b = s->m->b;
    memset(rec, 0, sizeof *rec); /* freeing it is safe whatever fails */
    /* Room for every op and range of `steps` steps: one step is recorded
     * first and its records counted, the ones that did not fit included
     * (a model's ranges per micro-batch differ from kind to kind). */
    if (trace_recorder_init(rec, 1024)) {
        snprintf(b->error, sizeof b->error, "out of host memory for the records");
        return BK_OOM;
    }
    int rc = recorded_step(s, rec);
    size_t per_step = rec->count + (size_t)rec->dropped;
    trace_recorder_free(rec);
    if (rc)
        return rc;
    if (trace_recorder_init(rec, (size_t)steps * per_step)) {
        snprintf(b->error, sizeof b->error, "out of host memory for the records");
        return BK_OOM;
    }
    for (int i = 0; i < steps && !rc; i++)
        rc = recorded_step(s, rec);
    if (!rc && rec->dropped) {
        snprintf(b->error, sizeof b->error, "%llu records did not fit",
                 (unsigned long long)rec->dropped);
        rc = BK_ERROR;
    }
    return rc;
}

/* Sums the records by op name; returns the count of ops. */
static int total_ops(const trace_recorder *rec, op_total *ops, uint64_t *step_ns,
                     uint64_t *op_ns)
{
    int n_ops = 0;
    *step_ns = *op_ns = 0;
    for (size_t i = 0; i < rec->count; i++) {
        const trace_record *r = &rec->records[i];
        uint64_t ns = r->end_ns - r->start_ns;
        if (r->kind == TRACE_RANGE && !strcmp(r->name, "step"))
            *step_ns += ns;
        if (r->kind != TRACE_KERNEL)
            continue;
        int k = 0;
        while (k < n_ops && strcmp(ops[k].name, r->name))
            k++;
        if (k == n_ops && n_ops < MAX_OPS)
            ops[n_ops++] = (op_total){r->name, 0, 0};
        if (k < n_ops) {
            ops[k].calls++;
            ops[k].ns += ns;
            *op_ns += ns;
        }
    }
    return n_ops;
}

/* Records `steps` steps op by op and prints where each step's time went. */
static int breakdown(step_runner *s, int steps, double flops, double peak_tflops)
{
    trace_recorder rec;
    int rc = record_steps(s, steps, &rec);
    op_total ops[MAX_OPS];
    uint64_t step_ns, op_ns;
    int n_ops = rc ? 0 : total_ops(&rec, ops, &step_ns, &op_ns);
    if (!rc) {
        qsort(ops, (size_t)n_ops, sizeof *ops, by_pass_time);
        double step_ms = (double)step_ns / 1e6 / steps;
        printf("\nper pass, mean of %d recorded steps (%.3f ms a step):\n", steps, step_ms);
        printf("  %-24s %10s %10s %7s\n", "op", "calls/step", "ms/step", "share");
        for (int k = 0; k < n_ops; k++) {
            double ms = (double)ops[k].ns / 1e6 / steps;
            printf("  %-24s %10.1f %10.3f %6.1f%%", ops[k].name, (double)ops[k].calls / steps,
                   ms, 100.0 * ms / step_ms);
            double tflops = flops / (ms * 1e-3) / 1e12;
            /* Above the peak measured beside it, the peak was slowed by
             * something else: no share of it. */
            if (!strcmp(ops[k].name, "gemm") && peak_tflops > 0 && tflops > peak_tflops)
                printf("   %.3f TFLOP/s, over the last peak (%.3f): disturbed", tflops,
                       peak_tflops);
            else if (!strcmp(ops[k].name, "gemm") && peak_tflops > 0)
                printf("   %.3f TFLOP/s, %.1f%% of the peak", tflops,
                       100.0 * tflops / peak_tflops);
            printf("\n");
        }
        double host_ms = step_ms - (double)op_ns / 1e6 / steps;
        printf("  %-24s %10s %10.3f %6.1f%%\n", "host", "", host_ms, 100.0 * host_ms / step_ms);
    }
    trace_recorder_free(&rec);
    return rc;
}

/* Times o->runs runs of o->steps steps, each beside its own peak probe,
 * prints each run's MFU and their range, and leaves the last peak in *peak. */
static int timed_runs(step_runner *s, const options *o, double flops, double *peak)
{
    measure_options mo = {.warmup = 3, .steps = o->steps, .min_samples = 1,
                          .max_samples = o->steps, .budget_s = 1e9, .max_noise_pct = 0};
    double lo = 0, hi = 0;
    int over = 0;
    for (int r = 0; r < o->runs; r++) {
        int n = 0;
        step_timing t;
        int rc = measure_peak_gemm(s->m->b, mo.budget_s, peak, &n); /* its longest */
        if (!rc)
            rc = measure_steps(s, &mo, &t);
        if (rc)
            return rc;
        double tflops = flops / (t.step.median * 1e-3) / 1e12;
        double mfu = 100.0 * tflops / *peak;
        lo = r == 0 || mfu < lo ? mfu : lo;
        hi = r == 0 || mfu > hi ? mfu : hi;
        char noise[32] = "-"; /* --steps 1: one sample has no noise (stats.h) */
        if (!isnan(t.step.noise_pct))
            snprintf(noise, sizeof noise, "%.1f%%", t.step.noise_pct);
        printf("run %d: peak GEMM %dx%dx%d %.3f TFLOP/s; step %.3f ms (p10 %.3f, p90 %.3f, "
               "noise %s); %.3f TFLOP/s; MFU %.1f%%\n",
               r + 1, n, n, n, *peak, t.step.median, t.step.p10, t.step.p90, noise, tflops, mfu);
        if (mfu > 100) /* the peak was slowed by something else: no figure */
            printf("  run %d is disturbed: MFU over 100%% cannot be true; its peak GEMM ran "
                   "slow (something else had the cores)\n", r + 1);
        over += mfu > 100;
    }
    printf("MFU over %d runs: min %.1f%%, max %.1f%%\n", o->runs, lo, hi);
    if (over)
        printf("  %d of them over 100%%: disturbed, not figures to use\n", over);
    return 0;
}

static double process_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Times `steps` steps one by one in the process's CPU time and prints
 * their p10 and median. */
static int cpu_time_steps(step_runner *s, int steps)
{
    backend *b = s->m->b;
    double *ms = malloc((size_t)steps * sizeof *ms);
    if (!ms) {
        snprintf(b->error, sizeof b->error, "out of host memory for the step times");
        return BK_OOM;
    }
    int rc = 0;
    for (int i = 0; i < steps && !rc; i++) {
        double start = process_cpu_ms();
        rc = step_run(s);
        if (!rc)
            rc = b->ops->sync(b);
        ms[i] = process_cpu_ms() - start;
    }
    timing_stats t;
    if (!rc && timing_stats_of(ms, (size_t)steps, &t) == 0)
        printf("CPU time a step over %d steps: p10 %.3f ms, median %.3f ms (the process's, on "
               "%d thread%s)\n", steps, t.p10, t.median, cpu_parallel_threads(),
               cpu_parallel_threads() == 1 ? "" : "s");
    free(ms);
    return rc;
}

/* The model, its data and a step runner for o's split: the timed runs,
 * the steps' CPU time, then the op-by-op breakdown. */
static int run(const options *o, backend *b)
{
    optimizer_config opt = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, o->at};
    split sp;
    char why[200];
    if (split_make(o->effective, o->micro, 1, &sp, why, sizeof why)) {
        fprintf(stderr, "cpu-passes: %s\n", why);
        return 2;
    }
    model m;
    dataset d;
    input_spec in;
    model_input(&o->model, &in);
    if (model_create(b, &o->model, &opt, 1, &m)) {
        fprintf(stderr, "cpu-passes: model %s: %s\n", o->model.name, b->error);
        return 1;
    }
    if (dataset_create(b, &in, o->effective, 3, 1, &d)) {
        fprintf(stderr, "cpu-passes: the data: %s\n", b->error);
        model_destroy(&m);
        return 1;
    }
    double flops = model_flops_per_step(&o->model, o->effective), peak = 0;
    step_runner s;
    int rc = step_runner_init(&s, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM);
    /* a ragged split as the rest of the program writes it: "K=2: 3+1" */
    char split[64];
    split_text(split, sizeof split, sp.micro, sp.accum, sp.last);
    printf("model %s, effective batch %d as %s, %.3f GFLOP a step, %s, %s, optimizer at %s\n",
           o->model.name, o->effective, split, flops / 1e9, dtype_name(o->dt), b->library,
           optimizer_at_name(o->at));
    if (!rc)
        rc = timed_runs(&s, o, flops, &peak);
    if (!rc)
        rc = cpu_time_steps(&s, o->steps);
    if (!rc)
        rc = breakdown(&s, o->steps, flops, peak);
    if (rc)
        fprintf(stderr, "cpu-passes: %s\n", b->error);
    if (s.m)
        step_runner_free(&s);
    dataset_destroy(&d);
    model_destroy(&m);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    backend *b;
    char why[320];
    rc = cpu_backend_create(o.dt, &b, why, sizeof why);
    if (rc != BK_OK) {
        fprintf(stderr, "cpu-passes: %s\n", why);
        return rc == BK_UNSUPPORTED ? 2 : 1; /* a dtype the CPU does not compute in */
    }
    rc = run(&o, b);
    b->ops->destroy(b);
    return rc;
}
