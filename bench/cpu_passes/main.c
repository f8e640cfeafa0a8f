/* cpu-passes: the CPU backend's step pass by pass, and its MFU.
 *
 *   cpu-passes [--model NAME] [--effective N] [--micro N] [--runs N]
 *              [--steps N] [--optimizer-at step|backward] | --help
 *
 * Each run measures the peak GEMM rate as `accubench run` does
 * (measure_peak_gemm), then times `steps` whole optimizer steps of the
 * model at the split (measure_steps, after a warm-up) and prints the
 * median step and the MFU: the step's GEMM FLOPs per second over the peak
 * measured in the same run, the number `accubench run` prints in its mfu%
 * column. After the runs, `steps` more steps are recorded op by op (the
 * per-dispatch records of the trace pass: on the CPU a dispatch is the
 * work itself) and each op is printed with its calls and milliseconds per
 * step and its share of the step; "host" is the step's time outside every
 * op. The GEMMs' share is also given as a rate against the peak.
 *
 * Defaults: model S at 256 x 1, three runs of 20 steps: S's largest
 * micro-batch, the configuration whose MFU the CPU backend is judged by.
 *
 * Exit status: 0; 1 when a run failed; 2 on bad usage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "dispatch.h"
#include "measure.h"
#include "model.h"
#include "parse.h"
#include "ranges.h"
#include "registry.h"
#include "split.h"
#include "step.h"
#include "trace.h"

#define MAX_RUNS 20
#define MAX_OPS 64

typedef struct options {
    model_spec model;
    int effective, micro, runs, steps;
    optimizer_at at;
} options;

static void usage(FILE *f)
{
    fprintf(f, "usage: cpu-passes [--model NAME] [--effective N] [--micro N] [--runs N] "
               "[--steps N] [--optimizer-at step|backward]\n");
}

static void help(void)
{
    usage(stdout);
    printf("\n"
           "  --model NAME     a preset (tiny, S, M, L, XL) or mlp:hidden=N,layers=N,classes=N"
           " (default S)\n"
           "  --effective N    the effective batch (default 256)\n"
           "  --micro N        the micro-batch (default: the effective batch, one pass)\n"
           "  --runs N         peak GEMM + timed steps, this many times (default 3)\n"
           "  --steps N        steps timed per run, and recorded for the breakdown"
           " (default 20)\n"
           "  --optimizer-at W step: after the window; backward: per layer in the last"
           " backward (default backward, as accubench run on the CPU)\n");
}

static int bad_usage(const char *why)
{
    fprintf(stderr, "cpu-passes: %s\n", why);
    usage(stderr);
    return 2;
}

/* 0: run; 1: --help was answered; 2: bad usage, said on stderr. */
static int parse_options(int argc, char **argv, options *o)
{
    char why[320];
    long long v;
    memset(o, 0, sizeof *o);
    model_spec_parse("S", &o->model, NULL, 0);
    o->effective = 256;
    o->runs = 3;
    o->steps = 20;
    o->at = OPT_AT_BACKWARD;
    args a;
    args_init(&a, argc, argv, NULL);
    for (;;) {
        arg_kind k = args_next(&a, why, sizeof why);
        if (k == ARG_END)
            break;
        if (k == ARG_HELP) {
            help();
            return 1;
        }
        if (k == ARG_ERROR)
            return bad_usage(why);
        if (k == ARG_POSITIONAL) {
            snprintf(why, sizeof why, "unexpected argument '%s'", a.value);
            return bad_usage(why);
        }
        if (!strcmp(a.key, "optimizer-at")) {
            int at;
            if (axis_parse(&optimizer_at_axis, "--optimizer-at", a.value, &at, why, sizeof why))
                return bad_usage(why);
            o->at = (optimizer_at)at;
            continue;
        }
        if (!strcmp(a.key, "model")) {
            if (model_spec_parse(a.value, &o->model, why, sizeof why))
                return bad_usage(why);
            continue;
        }
        int *slot = !strcmp(a.key, "effective") ? &o->effective
                    : !strcmp(a.key, "micro")   ? &o->micro
                    : !strcmp(a.key, "runs")    ? &o->runs
                    : !strcmp(a.key, "steps")   ? &o->steps
                                                : NULL;
        if (!slot) {
            snprintf(why, sizeof why, "unknown option '--%s'", a.key);
            return bad_usage(why);
        }
        long long max = slot == &o->runs ? MAX_RUNS : 1 << 20;
        char what[80];
        snprintf(what, sizeof what, "--%s", a.key);
        if (parse_int(what, a.value, 1, max, &v, why, sizeof why))
            return bad_usage(why);
        *slot = (int)v;
    }
    if (!o->micro)
        o->micro = o->effective;
    if (o->micro > o->effective) {
        snprintf(why, sizeof why, "--micro %d is larger than --effective %d", o->micro,
                 o->effective);
        return bad_usage(why);
    }
    return 0;
}

typedef struct op_total {
    const char *name;
    int calls;
    uint64_t ns;
} op_total;

static int by_time(const void *a, const void *b)
{
    const op_total *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->name, y->name);
}

/* Records `steps` steps op by op and prints where each step's time went. */
static int breakdown(step_runner *s, int steps, double flops, double peak_tflops)
{
    backend *b = s->m->b;
    /* Room for every op and range of `steps` steps: the ops of one step
     * counted, and a few ranges per micro-batch. */
    uint64_t before = b->dispatches;
    int rc = step_run(s);
    if (!rc)
        rc = b->ops->sync(b);
    if (rc)
        return rc;
    size_t per_step = (size_t)(b->dispatches - before) + 4 * (size_t)s->sp.accum + 8;
    trace_recorder rec;
    if (trace_recorder_init(&rec, (size_t)steps * per_step)) {
        snprintf(b->error, sizeof b->error, "out of host memory for the records");
        return BK_OOM;
    }
    b->recorder = &rec;
    ranges_attach_recorder(&rec);
    for (int i = 0; i < steps && !rc; i++) {
        rc = step_run(s);
        if (!rc)
            rc = b->ops->sync(b);
    }
    ranges_attach_recorder(NULL);
    b->recorder = NULL;
    if (!rc && rec.dropped) {
        snprintf(b->error, sizeof b->error, "%llu records did not fit",
                 (unsigned long long)rec.dropped);
        rc = BK_ERROR;
    }
    op_total ops[MAX_OPS];
    int n_ops = 0;
    uint64_t step_ns = 0, op_ns = 0;
    for (size_t i = 0; i < rec.count && !rc; i++) {
        const trace_record *r = &rec.records[i];
        uint64_t ns = r->end_ns - r->start_ns;
        if (r->kind == TRACE_RANGE && !strcmp(r->name, "step"))
            step_ns += ns;
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
            op_ns += ns;
        }
    }
    if (!rc) {
        qsort(ops, (size_t)n_ops, sizeof *ops, by_time);
        double step_ms = (double)step_ns / 1e6 / steps;
        printf("\nper pass, mean of %d recorded steps (%.3f ms a step):\n", steps, step_ms);
        printf("  %-24s %10s %10s %7s\n", "op", "calls/step", "ms/step", "share");
        for (int k = 0; k < n_ops; k++) {
            double ms = (double)ops[k].ns / 1e6 / steps;
            printf("  %-24s %10.1f %10.3f %6.1f%%", ops[k].name, (double)ops[k].calls / steps,
                   ms, 100.0 * ms / step_ms);
            if (!strcmp(ops[k].name, "gemm") && peak_tflops > 0)
                printf("   %.3f TFLOP/s, %.1f%% of the peak", flops / (ms * 1e-3) / 1e12,
                       100.0 * flops / (ms * 1e-3) / 1e12 / peak_tflops);
            printf("\n");
        }
        double host_ms = step_ms - (double)op_ns / 1e6 / steps;
        printf("  %-24s %10s %10.3f %6.1f%%\n", "host", "", host_ms, 100.0 * host_ms / step_ms);
    }
    trace_recorder_free(&rec);
    return rc;
}

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
    int rc = model_create(b, &o->model, &opt, 1, &m);
    if (rc) {
        fprintf(stderr, "cpu-passes: model %s: %s\n", o->model.name, b->error);
        return 1;
    }
    rc = dataset_create(b, &in, o->effective, 3, 1, &d);
    if (rc) {
        fprintf(stderr, "cpu-passes: the data: %s\n", b->error);
        model_destroy(&m);
        return 1;
    }
    double flops = model_flops_per_step(&o->model, o->effective);
    double mfu[MAX_RUNS], peak = 0;
    step_runner s;
    rc = step_runner_init(&s, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM);
    printf("model %s, effective batch %d as %dx%d, %.3f GFLOP a step, %s, optimizer at %s\n",
           o->model.name, o->effective, sp.micro, sp.accum, flops / 1e9, b->library,
           optimizer_at_name(o->at));
    measure_options mo = {.warmup = 3, .steps = o->steps, .min_samples = 1,
                          .max_samples = o->steps, .budget_s = 1e9, .max_noise_pct = 0};
    for (int r = 0; r < o->runs && !rc; r++) {
        int n = 0;
        step_timing t;
        rc = measure_peak_gemm(b, &peak, &n);
        if (!rc)
            rc = measure_steps(&s, &mo, &t);
        if (rc)
            break;
        double tflops = flops / (t.step.median * 1e-3) / 1e12;
        mfu[r] = 100.0 * tflops / peak;
        printf("run %d: peak GEMM %dx%dx%d %.3f TFLOP/s; step %.3f ms (p10 %.3f, p90 %.3f, "
               "noise %.1f%%); %.3f TFLOP/s; MFU %.1f%%\n",
               r + 1, n, n, n, peak, t.step.median, t.step.p10, t.step.p90, t.step.noise_pct,
               tflops, mfu[r]);
    }
    if (!rc) {
        double lo = mfu[0], hi = mfu[0];
        for (int r = 1; r < o->runs; r++) {
            lo = mfu[r] < lo ? mfu[r] : lo;
            hi = mfu[r] > hi ? mfu[r] : hi;
        }
        printf("MFU over %d runs: min %.1f%%, max %.1f%%\n", o->runs, lo, hi);
        rc = breakdown(&s, o->steps, flops, peak);
    }
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
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "cpu-passes: %s\n", why);
        return 1;
    }
    rc = run(&o, b);
    b->ops->destroy(b);
    return rc;
}
