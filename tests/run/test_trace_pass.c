/* The trace pass on the CPU backend (tiny model, 16 examples as 4x4): with
 * its own dispatch records, with a stand-in collector that delivers
 * CUPTI-like records and losses, with a collector that fails, and on a GPU
 * backend without a collector. Each returns a summary, which row_fill_trace
 * (config_run.c) turns into the row's trace columns and note. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config_run.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "grad_dtype.h"
#include "ranges.h"
#include "step.h"
#include "test_spec.h"
#include "trace_pass.h"

static const optimizer_config ADAMW = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};

typedef struct fixture {
    backend *b;
    model m;
    dataset d;
    step_runner s;
} fixture;

static void setup(fixture *f)
{
    char why[300];
    split sp;
    CHECK(cpu_backend_create(DTYPE_FP32, &f->b, why, sizeof why) == BK_OK);
    model_spec tiny = test_spec("tiny");
    input_spec in;
    model_input(&tiny, &in);
    CHECK(model_create(f->b, &tiny, &ADAMW, 7, &f->m) == BK_OK);
    CHECK(dataset_create(f->b, &in, 16, 2, 7, &f->d) == BK_OK);
    CHECK(split_make(16, 4, 1, &sp, why, sizeof why) == 0);
    CHECK(step_runner_init(&f->s, &f->m, &f->d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
}

static void teardown(fixture *f)
{
    step_runner_free(&f->s);
    dataset_destroy(&f->d);
    model_destroy(&f->m);
    f->b->ops->destroy(f->b);
}

/* ------------------------------------------------------------ a stand-in */

/* Delivers, for each "step" range already in the recorder, one launch call
 * (0.5 us long) and its kernel 2 us after the call starts (1 us long), both
 * unstamped as CUPTI's are, and reports 2 records lost. The call starts
 * where the step starts (outside every phase range: what a graph replay
 * looks like) or, with in_optimizer, in the middle of the step's optimizer
 * range. */
typedef struct fake {
    int fail_start, in_optimizer, started, stopped;
} fake;

static int fake_start(collector *c)
{
    fake *f = c->impl;
    if (f->fail_start) {
        snprintf(c->error, sizeof c->error, "fake.c:1: cuptiActivityEnable: boom");
        return BK_ERROR;
    }
    f->started++;
    return BK_OK;
}

static int fake_stop(collector *c, trace_recorder *into)
{
    fake *f = c->impl;
    f->stopped++;
    size_t n = into->count;
    uint32_t corr = 100;
    CHECK(into->current_step == -1);
    for (size_t i = 0; i < n; i++) {
        const trace_record *r = &into->records[i];
        if (r->kind != TRACE_RANGE || strcmp(r->name, "step") != 0)
            continue;
        uint64_t t = r->start_ns;
        for (size_t k = i + 1; f->in_optimizer && k < n; k++) {
            const trace_record *o = &into->records[k];
            if (o->kind == TRACE_RANGE && strcmp(o->name, "optimizer") == 0) {
                t = o->start_ns + (o->end_ns - o->start_ns) / 2;
                break;
            }
        }
        corr++;
        trace_add(into, TRACE_LAUNCH, "cudaLaunchKernel", t, t + 500, 9, corr);
        trace_add(into, TRACE_KERNEL, "k", t + 2000, t + 3000, 7, corr);
    }
    c->dropped += 2;
    return BK_OK;
}

static void fake_destroy(collector *c) { (void)c; }

static const collector_ops fake_ops = {fake_start, fake_stop, fake_destroy};

/* ------------------------------------------------------------ the tests */

/* A bf16 accumulator's rounding after each micro-batch is the backward's
 * (the accumulation's) work, wherever the optimizer runs: every
 * round_bf16 dispatch lies in a backward range, so the phase columns add
 * up to the busy time less the window's zeroing, as docs/trace.md says. */
static void test_bf16_rounding_is_backward(optimizer_at at)
{
    char why[300];
    backend *b;
    model m;
    dataset d;
    step_runner s;
    split sp;
    optimizer_config opt = ADAMW;
    opt.at = at;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    model_spec tiny = test_spec("tiny");
    input_spec in;
    model_input(&tiny, &in);
    CHECK(model_create(b, &tiny, &opt, 7, &m) == BK_OK);
    m.grad_dtype = GRAD_DTYPE_BF16;
    CHECK(dataset_create(b, &in, 16, 2, 7, &d) == BK_OK);
    CHECK(split_make(16, 4, 1, &sp, why, sizeof why) == 0);
    CHECK(step_runner_init(&s, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
    trace_recorder rec;
    CHECK(trace_recorder_init(&rec, 1 << 14) == 0);
    b->recorder = &rec;
    ranges_attach_recorder(&rec);
    CHECK(step_run(&s) == BK_OK);
    ranges_attach_recorder(NULL);
    b->recorder = NULL;
    int rounds = 0, outside = 0, unphased = 0;
    for (size_t i = 0; i < rec.count; i++) {
        const trace_record *k = &rec.records[i];
        if (k->kind != TRACE_KERNEL)
            continue;
        int round = !strcmp(k->name, "round_bf16"), in_backward = 0, in_phase = 0;
        for (size_t j = 0; j < rec.count; j++) {
            const trace_record *r = &rec.records[j];
            if (r->kind != TRACE_RANGE || r->start_ns > k->start_ns || k->end_ns > r->end_ns)
                continue;
            in_backward |= !strcmp(r->name, "backward");
            in_phase |= !strcmp(r->name, "backward") || !strcmp(r->name, "forward") ||
                        !strcmp(r->name, "optimizer");
        }
        rounds += round;
        outside += round && !in_backward;
        /* only the window's zeroing is outside every phase (docs/trace.md) */
        unphased += !in_phase && strcmp(k->name, "zero") != 0;
    }
    CHECK(rounds >= 4); /* one a micro-batch at least */
    CHECK(outside == 0);
    CHECK(unphased == 0);
    trace_recorder_free(&rec);
    step_runner_free(&s);
    dataset_destroy(&d);
    model_destroy(&m);
    b->ops->destroy(b);
}

static void test_cpu_dispatches(void)
{
    fixture f;
    setup(&f);
    char path[] = "/tmp/accubench-trace-pass-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);

    result_row row;
    result_row_clear(&row);
    trace_pass_options o = {.steps = 3, .collector = NULL, .trace_file = path,
                            .trace_label = "cpu tiny fp32 4x4 async sum"};
    static trace_pass_summary tp;
    uint64_t d0 = f.b->dispatches;
    CHECK(trace_pass_run(&f.s, &o, &tp) == BK_OK);
    double per_step = (double)(f.b->dispatches - d0) / 3;
    CHECK(f.b->recorder == NULL); /* detached afterwards */
    CHECK(tp.analysed && tp.trace.steps == 3 && tp.dropped == 0 && tp.note[0] == '\0');
    CHECK_NEAR(tp.trace.kernels_per_step, per_step, 0);
    row_fill_trace(&row, &tp);
    CHECK(per_step > 0);
    CHECK_NEAR(row.kernels_per_step, per_step, 0);
    CHECK_NEAR(row.launch_calls_per_step, per_step, 0);
    CHECK_NEAR(row.launch_latency_us_median, 0, 0);
    CHECK(row.cupti_dropped == 0);
    CHECK(row.cupti_step_ms > 0 && row.gpu_busy_ms > 0);
    CHECK(row.gpu_busy_ms <= row.cupti_step_ms);
    CHECK(row.gpu_busy_pct > 0 && row.gpu_busy_pct <= 100);
    CHECK_NEAR(row.gpu_busy_ms + row.idle_ms, row.cupti_step_ms, 1e-9);
    CHECK(row.forward_ms > 0 && row.backward_ms > 0 && row.optimizer_ms > 0);
    CHECK(row.forward_ms + row.backward_ms + row.optimizer_ms <= row.gpu_busy_ms + 1e-9);
    CHECK(row.note[0] == '\0');

    FILE *t = fopen(path, "r");
    CHECK(t != NULL);
    if (t) {
        char head[64] = "";
        CHECK(fread(head, 1, sizeof head - 1, t) > 0);
        CHECK(strstr(head, "\"traceEvents\"") || strstr(head, "\"displayTimeUnit\""));
        fclose(t);
        char *json = NULL;
        size_t cap = 0;
        t = fopen(path, "r");
        CHECK(t && getdelim(&json, &cap, '\0', t) > 0);
        CHECK(json && strstr(json, "cpu tiny fp32 4x4 async sum")); /* the label */
        free(json);
        if (t)
            fclose(t);
    }
    remove(path);
    teardown(&f);
}

static void test_collector(void)
{
    fixture f;
    setup(&f);
    fake state = {0};
    collector c = {.ops = &fake_ops, .impl = &state};
    result_row row;
    result_row_clear(&row);
    trace_pass_options o = {.steps = 3, .collector = &c, .trace_file = NULL};
    static trace_pass_summary tp;
    CHECK(trace_pass_run(&f.s, &o, &tp) == BK_OK);
    CHECK(state.started == 1 && state.stopped == 1);
    CHECK(tp.analysed && tp.dropped == 2 && tp.note[0] == '\0');
    row_fill_trace(&row, &tp);
    /* Only the collector's records count as device work: the CPU
     * dispatches were not recorded. */
    CHECK_NEAR(row.kernels_per_step, 1, 0);
    CHECK_NEAR(row.launch_calls_per_step, 1, 0);
    CHECK_NEAR(row.launch_latency_us_median, 2.0, 1e-9);
    CHECK_NEAR(row.launch_latency_us_p90, 2.0, 1e-9);
    CHECK_NEAR(row.gpu_busy_ms, 0.001, 1e-12);
    CHECK(row.cupti_dropped == 2);
    CHECK(strstr(row.note, "lost 2 activity records") != NULL);
    /* Launched before any forward/backward/optimizer range: no split. */
    CHECK(isnan(row.forward_ms) && isnan(row.backward_ms) && isnan(row.optimizer_ms));
    CHECK(strstr(row.note, "no forward/backward/optimizer split") != NULL);
    CHECK(row.idle_ms > 0);

    /* Launched inside the optimizer range: all of the busy time is the
     * optimizer's. */
    fake in_opt = {.in_optimizer = 1};
    c.impl = &in_opt;
    result_row_clear(&row);
    CHECK(trace_pass_run(&f.s, &o, &tp) == BK_OK);
    row_fill_trace(&row, &tp);
    CHECK_NEAR(row.optimizer_ms, 0.001, 1e-12);
    CHECK_NEAR(row.forward_ms, 0, 0);
    CHECK_NEAR(row.backward_ms, 0, 0);
    CHECK(strstr(row.note, "split") == NULL);
    teardown(&f);
}

static void test_collector_fails(void)
{
    fixture f;
    setup(&f);
    fake state = {.fail_start = 1};
    collector c = {.ops = &fake_ops, .impl = &state};
    result_row row;
    result_row_clear(&row);
    snprintf(row.note, sizeof row.note, "earlier remark");
    trace_pass_options o = {.steps = 2, .collector = &c, .trace_file = NULL};
    static trace_pass_summary tp;
    CHECK(trace_pass_run(&f.s, &o, &tp) == BK_OK); /* the row survives */
    CHECK(state.stopped == 0);
    CHECK(!tp.analysed);
    CHECK(strcmp(tp.note, "trace pass skipped: fake.c:1: cuptiActivityEnable: boom") == 0);
    row_fill_trace(&row, &tp);
    CHECK(isnan(row.kernels_per_step) && isnan(row.cupti_step_ms));
    /* no steps asked: an empty summary, whatever was in it before */
    o.steps = 0;
    CHECK(trace_pass_run(&f.s, &o, &tp) == BK_OK && !tp.analysed && tp.note[0] == '\0');
    CHECK(row.cupti_dropped == -1);
    CHECK(strcmp(row.note, "earlier remark; trace pass skipped: fake.c:1: "
                           "cuptiActivityEnable: boom") == 0);
    teardown(&f);
}

static void test_gpu_without_collector(void)
{
    fixture f;
    setup(&f);
    const char *name = f.b->name;
    unsigned caps = f.b->caps;
    f.b->name = "cuda";
    f.b->caps &= ~BK_CAP_DISPATCH_IS_DEVICE_WORK;
    result_row row;
    result_row_clear(&row);
    trace_pass_options o = {.steps = 2, .collector = NULL, .trace_file = NULL};
    static trace_pass_summary tp;
    uint64_t d0 = f.b->dispatches;
    CHECK(trace_pass_run(&f.s, &o, &tp) == BK_OK);
    CHECK(f.b->dispatches == d0); /* no steps were run */
    CHECK(!tp.analysed);
    row_fill_trace(&row, &tp);
    CHECK(isnan(row.kernels_per_step));
    CHECK(strstr(row.note, "no activity collector on the cuda backend") != NULL);
    f.b->name = name;
    f.b->caps = caps;
    teardown(&f);
}

int main(void)
{
    test_cpu_dispatches();
    test_bf16_rounding_is_backward(OPT_AT_STEP);
    test_bf16_rounding_is_backward(OPT_AT_BACKWARD);
    test_collector();
    test_collector_fails();
    test_gpu_without_collector();
    return check_finish("test_trace_pass");
}
