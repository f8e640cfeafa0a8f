#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "rng.h"
#include "trace.h"

/* At least this many samples even when the budget runs out. */
#define MIN_SAMPLES_HARD 3

typedef struct timer_pair {
    bk_timer *start, *end;
} timer_pair;

static void destroy_timers(backend *b, timer_pair *t, int n)
{
    for (int i = 0; i < n; i++) {
        if (t[i].start)
            b->ops->timer_destroy(b, t[i].start);
        if (t[i].end)
            b->ops->timer_destroy(b, t[i].end);
    }
}

static int create_timers(backend *b, timer_pair *t, int n)
{
    memset(t, 0, (size_t)n * sizeof *t);
    for (int i = 0; i < n; i++) {
        int rc = b->ops->timer_create(b, &t[i].start);
        if (!rc)
            rc = b->ops->timer_create(b, &t[i].end);
        if (rc) {
            destroy_timers(b, t, n);
            return rc;
        }
    }
    return BK_OK;
}

/* The noise target, judged on samples[0..n): two at least, whatever
 * --min-samples says, since one sample's noise is unmeasured (stats.h). */
static int noise_met(const measure_options *o, const double *samples, size_t n)
{
    timing_stats st;
    return (int)n >= o->min_samples && n >= 2 && timing_stats_of(samples, n, &st) == 0 &&
           st.noise_pct <= o->max_noise_pct;
}

/* Adaptive stopping, judged on the n samples read back so far: 1 and what
 * stopped it in *why, or 0 to go on. */
static int should_stop(const measure_options *o, const double *samples, size_t n,
                       double elapsed_s, measure_stop *why)
{
    if (o->stop && *o->stop && n >= 1)
        *why = MEASURE_STOP_INTERRUPTED;
    else if (noise_met(o, samples, n))
        *why = MEASURE_STOP_NOISE;
    else if (elapsed_s >= o->budget_s && n >= MIN_SAMPLES_HARD)
        *why = MEASURE_STOP_BUDGET;
    else
        return 0;
    return 1;
}

/* The communication of the steps read back since the last call: the
 * engine's totals now (the all-reduces finished so far; all of them when
 * `wait`) less the totals of the last call, into busy[i] and exposed[i]. */
typedef struct comm_samples {
    double *busy, *exposed, *wait; /* wait: where the engine tells it */
    double busy_seen, exposed_seen, wait_seen;
} comm_samples;

static int comm_sample(comm *c, comm_samples *cs, size_t i, int wait)
{
    double busy = 0, exposed = 0, arrival = 0;
    int rc = c->ops->times(c, &busy, &exposed, wait);
    if (!rc && cs->wait && (rc = c->ops->arrival_wait(c, &arrival)) == BK_OK) {
        cs->wait[i] = arrival - cs->wait_seen;
        cs->wait_seen = arrival;
    }
    cs->busy[i] = busy - cs->busy_seen;
    cs->exposed[i] = exposed - cs->exposed_seen;
    cs->busy_seen = busy;
    cs->exposed_seen = exposed;
    return rc;
}

/* A decision every rank takes together: any rank's yes is everyone's. */
static int agreed(step_runner *s, int yes, int *rc)
{
    if (!s->comm || *rc)
        return yes;
    double v = yes;
    *rc = s->comm->ops->host_allreduce(s->comm, &v, 1, COMM_MAX);
    return v > 0;
}

/* Warm-up: the steps asked for (none with --warmup 0), and no more than
 * half the budget. */
static int warm_up(step_runner *s, const measure_options *o)
{
    backend *b = s->m->b;
    int rc = BK_OK;
    uint64_t warm0 = trace_now_ns();
    for (int i = 0; i < o->warmup && !rc; i++) {
        rc = step_run(s);
        if (!rc)
            rc = b->ops->sync(b);
        if (agreed(s, (double)(trace_now_ns() - warm0) / 1e9 > o->budget_s / 2, &rc))
            break;
    }
    return rc;
}

/* The timed loop's state: the device and host time of each step, the
 * communication's, two timer pairs in turn, and the counters at the start. */
typedef struct timed_loop {
    size_t cap;      /* steps it may issue */
    size_t n;        /* device times read back */
    size_t issued;   /* steps issued */
    int judged;      /* adaptive stopping decided on dev_ms[0..n) */
    double *dev_ms, *host_ms;
    comm_samples cs;
    timer_pair t[2];
    uint64_t dispatch0, t0, calls0, bytes0;
    uint64_t rs0[2], ag0[2]; /* sharded: reduce-scatter and all-gather calls, bytes */
} timed_loop;

static void loop_free(backend *b, timed_loop *l)
{
    free(l->cs.busy);
    free(l->cs.exposed);
    free(l->cs.wait);
    destroy_timers(b, l->t, 2);
    free(l->dev_ms);
    free(l->host_ms);
}

/* The samples' memory and the timers; BK_* status (loop_free either way). */
static int loop_init(step_runner *s, const measure_options *o, timed_loop *l)
{
    backend *b = s->m->b;
    comm *c = s->comm;
    memset(l, 0, sizeof *l);
    l->cap = o->steps ? (size_t)o->steps : (size_t)o->max_samples;
    l->dev_ms = calloc(l->cap, sizeof *l->dev_ms);
    l->host_ms = calloc(l->cap, sizeof *l->host_ms);
    if (!l->dev_ms || !l->host_ms) {
        snprintf(b->error, sizeof b->error, "out of host memory for samples");
        return BK_OOM;
    }
    int rc = create_timers(b, l->t, 2);
    if (rc)
        return rc;
    l->dispatch0 = b->dispatches;
    l->t0 = trace_now_ns();
    if (c) {
        l->calls0 = c->calls;
        l->bytes0 = c->bytes;
        l->rs0[0] = c->rs_calls;
        l->rs0[1] = c->rs_bytes;
        l->ag0[0] = c->ag_calls;
        l->ag0[1] = c->ag_bytes;
        c->ops->reset_times(c);
        l->cs.busy = calloc(l->cap, sizeof *l->cs.busy);
        l->cs.exposed = calloc(l->cap, sizeof *l->cs.exposed);
        if (c->ops->arrival_wait)
            l->cs.wait = calloc(l->cap, sizeof *l->cs.wait);
        if (!l->cs.busy || !l->cs.exposed || (c->ops->arrival_wait && !l->cs.wait)) {
            snprintf(b->error, sizeof b->error, "out of host memory for samples");
            return BK_OOM;
        }
    }
    return BK_OK;
}

/* Whether a step's work is done when its issue returns. */
static int serial(const backend *b)
{
    return (b->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK) != 0;
}

/* One step between its own events, and the step before it read back. */
static int issue_step(step_runner *s, timed_loop *l)
{
    backend *b = s->m->b;
    timer_pair *cur = &l->t[l->issued % 2];
    uint64_t h0 = trace_now_ns();
    int rc = b->ops->timer_record(b, cur->start);
    if (!rc)
        rc = step_run_timed(s);
    if (!rc)
        rc = b->ops->timer_record(b, cur->end);
    if (rc)
        return rc;
    l->host_ms[l->issued++] = (double)(trace_now_ns() - h0) / 1e6;
    /* Where issuing is the work (the CPU), this step and its all-reduces
     * are done: its communication is read now. Read after the next step
     * is issued, it would hold that step's too, one step late (a slice of
     * two steps read as twice the first and nothing for the second). */
    if (s->comm && serial(b))
        rc = comm_sample(s->comm, &l->cs, l->issued - 1, 0);
    if (!rc && l->issued >= 2) {
        timer_pair *prev = &l->t[(l->issued - 2) % 2];
        rc = b->ops->timer_elapsed_ms(b, prev->start, prev->end, &l->dev_ms[l->n++]);
        if (!rc && s->comm && !serial(b))
            rc = comm_sample(s->comm, &l->cs, l->n - 1, 0);
    }
    return rc;
}

/* Step i is issued before step i-1 is read back, so the device always has
 * the next step queued: steps run back to back, each between its own
 * events; until the fixed count, the sample cap or the adaptive stop. */
static int run_loop(step_runner *s, const measure_options *o, timed_loop *l, step_timing *out)
{
    int rc = BK_OK;
    while (!rc) {
        if ((rc = issue_step(s, l)))
            break;
        double elapsed = (double)(trace_now_ns() - l->t0) / 1e9;
        if (l->issued >= l->cap) {
            out->stopped_by = o->steps ? MEASURE_STOP_STEPS : MEASURE_STOP_SAMPLE_CAP;
            break;
        }
        /* Data parallel: rank 0's reason is the one its row reports. */
        int mine = !o->steps && should_stop(o, l->dev_ms, l->n, elapsed, &out->stopped_by);
        if (!o->steps && agreed(s, mine, &rc)) {
            if (!mine) /* the row says so, not nothing */
                out->stopped_by = MEASURE_STOP_PEER;
            l->judged = 1;
            break;
        }
    }
    return rc;
}

/* The step still in flight: waited for, and counted unless the stopping
 * decision was made without it. The reported statistics are the samples
 * judged, never one more: a sample added after the judgement could put
 * the noise over the target it was just found under. */
static int read_last(step_runner *s, timed_loop *l)
{
    backend *b = s->m->b;
    if (l->issued <= l->n)
        return BK_OK;
    timer_pair *last = &l->t[(l->issued - 1) % 2];
    double ms;
    int rc = b->ops->timer_elapsed_ms(b, last->start, last->end, &ms);
    if (!l->judged)
        l->dev_ms[l->n++] = ms;
    if (!rc && s->comm && !l->judged && !serial(b))
        rc = comm_sample(s->comm, &l->cs, l->n - 1, 1);
    return rc;
}

static void fill_timing(step_runner *s, const measure_options *o, const timed_loop *l,
                        step_timing *out)
{
    backend *b = s->m->b;
    comm *c = s->comm;
    timing_stats host;
    timing_stats_of(l->dev_ms, l->n, &out->step);
    out->timed = l->n;
    if (o->keep)
        memcpy(o->keep, l->dev_ms, l->n * sizeof *o->keep);
    out->noise_met = !o->steps && noise_met(o, l->dev_ms, l->n);
    timing_stats_of(l->host_ms, l->issued, &host);
    out->host_enqueue_ms = host.median;
    if (o->keep_host_ms)
        memcpy(o->keep_host_ms, l->host_ms, l->n * sizeof *o->keep_host_ms);
    out->dispatches_per_step = (double)(b->dispatches - l->dispatch0) / (double)l->issued;
    if (!c)
        return;
    /* Medians, like the step time's: the communication of a typical step,
     * not a mean that one stalled step dominates. */
    timing_stats busy, exposed;
    timing_stats_of(l->cs.busy, l->n, &busy);
    timing_stats_of(l->cs.exposed, l->n, &exposed);
    out->allreduce_calls = (double)(c->calls - l->calls0) / (double)l->issued;
    out->allreduce_bytes = (double)(c->bytes - l->bytes0) / (double)l->issued;
    out->rs_calls = (double)(c->rs_calls - l->rs0[0]) / (double)l->issued;
    out->rs_bytes = (double)(c->rs_bytes - l->rs0[1]) / (double)l->issued;
    out->ag_calls = (double)(c->ag_calls - l->ag0[0]) / (double)l->issued;
    out->ag_bytes = (double)(c->ag_bytes - l->ag0[1]) / (double)l->issued;
    out->comm_ms = busy.median;
    out->comm_exposed_ms = exposed.median;
    out->comm_wait_ms = NAN;
    if (l->cs.wait) {
        timing_stats arrival;
        timing_stats_of(l->cs.wait, l->n, &arrival);
        out->comm_wait_ms = arrival.median;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (o->keep_comm_ms)
            o->keep_comm_ms[i] = l->cs.busy[i];
        if (o->keep_comm_exposed_ms)
            o->keep_comm_exposed_ms[i] = l->cs.exposed[i];
        if (o->keep_comm_wait_ms)
            o->keep_comm_wait_ms[i] = l->cs.wait ? l->cs.wait[i] : NAN;
    }
}

int measure_steps(step_runner *s, const measure_options *o, step_timing *out)
{
    backend *b = s->m->b;
    memset(out, 0, sizeof *out);
    int rc = warm_up(s, o);
    if (rc)
        return rc;
    timed_loop l;
    rc = loop_init(s, o, &l);
    if (!rc) {
        if (b->ops->profiler_start)
            b->ops->profiler_start(b);
        rc = run_loop(s, o, &l, out);
        if (!rc)
            rc = read_last(s, &l);
        if (b->ops->profiler_stop)
            b->ops->profiler_stop(b);
    }
    if (!rc)
        fill_timing(s, o, &l, out);
    loop_free(b, &l);
    return rc;
}

/* Times `reps` runs of work(ctx), one at a time, each between its own pair
 * of device timestamps; the median in ms. */
static int median_of_reps(backend *b, int reps, int (*work)(void *ctx), void *ctx,
                          double *median_ms)
{
    timer_pair t;
    double *ms = calloc((size_t)reps, sizeof *ms);
    if (!ms) {
        snprintf(b->error, sizeof b->error, "out of host memory for samples");
        return BK_OOM;
    }
    int rc = create_timers(b, &t, 1);
    if (rc) {
        free(ms);
        return rc;
    }
    for (int i = 0; i < reps && !rc; i++) {
        rc = b->ops->timer_record(b, t.start);
        if (!rc)
            rc = work(ctx);
        if (!rc)
            rc = b->ops->timer_record(b, t.end);
        if (!rc)
            rc = b->ops->timer_elapsed_ms(b, t.start, t.end, &ms[i]);
    }
    if (!rc) {
        timing_stats st;
        timing_stats_of(ms, (size_t)reps, &st);
        *median_ms = st.median;
    }
    destroy_timers(b, &t, 1);
    free(ms);
    return rc;
}

static int single_pass(void *runner)
{
    return step_single_pass(runner);
}

int measure_single_pass(step_runner *s, int reps, double *median_ms)
{
    return median_of_reps(s->m->b, reps, single_pass, s, median_ms);
}

/* Fills an n x n matrix in compute storage with uniform values. */
static int random_matrix(backend *b, int n, uint64_t seed, void **out)
{
    size_t count = (size_t)n * n, f32_bytes = count * sizeof(float);
    float *host = malloc(f32_bytes), *staging = NULL;
    if (!host) {
        snprintf(b->error, sizeof b->error, "out of host memory");
        return BK_OOM;
    }
    rng r = {seed};
    for (size_t i = 0; i < count; i++)
        host[i] = rng_uniform(&r, -1.0f, 1.0f);
    int rc = bk_alloc(b, count * storage_bytes(b->compute_storage), out);
    if (!rc && b->compute_storage == STORAGE_F32)
        rc = bk_upload(b, *out, host, f32_bytes);
    else if (!rc) {
        rc = bk_alloc(b, f32_bytes, (void **)&staging);
        if (!rc)
            rc = bk_upload(b, staging, host, f32_bytes);
        if (!rc)
            rc = bk_convert(b, staging, *out, b->compute_storage, count);
        if (!rc)
            rc = b->ops->sync(b);
        bk_free(b, staging, f32_bytes);
    }
    free(host);
    return rc;
}

typedef struct gemm_work {
    backend *b;
    gemm_desc g;
} gemm_work;

static int one_gemm(void *ctx)
{
    gemm_work *w = ctx;
    return bk_gemm(w->b, &w->g);
}

/* GEMMs back to back, each waited for, until warm_ms have passed (one at
 * least). */
static int warm_up_gemm(backend *b, gemm_work *w, int warm_ms)
{
    uint64_t t0 = trace_now_ns();
    int rc;
    do {
        rc = one_gemm(w);
        if (!rc)
            rc = b->ops->sync(b);
    } while (!rc && trace_now_ns() - t0 < (uint64_t)warm_ms * 1000000u);
    return rc;
}

/* The median rate of an n x n x n GEMM over `reps` after `warm_ms` of
 * the same GEMM (one at least), in TFLOP/s; *gemm_ms the median's time. */
static int gemm_rate(backend *b, int n, int warm_ms, int reps, double *tflops, double *gemm_ms)
{
    size_t bytes = (size_t)n * n * storage_bytes(b->compute_storage);
    void *a = NULL, *bm = NULL, *c = NULL;
    int rc = random_matrix(b, n, 11, &a);
    if (!rc)
        rc = random_matrix(b, n, 12, &bm);
    if (!rc)
        rc = bk_alloc(b, bytes, &c);
    gemm_work w = {
        .b = b,
        .g = {.m = n, .n = n, .k = n, .alpha = 1.0f, .a = a, .lda = n, .b = bm, .ldb = n,
              .beta = 0.0f, .c = c, .ldc = n, .ab_storage = b->compute_storage,
              .c_storage = b->compute_storage},
    };
    if (!rc)
        rc = warm_up_gemm(b, &w, warm_ms); /* algorithm choice, caches, clocks */
    if (!rc)
        rc = median_of_reps(b, reps, one_gemm, &w, gemm_ms);
    if (!rc)
        *tflops = 2.0 * n * (double)n * n / (*gemm_ms * 1e-3) / 1e12;
    bk_free(b, a, bytes);
    bk_free(b, bm, bytes);
    bk_free(b, c, bytes);
    return rc;
}

int measure_gemm_size(const backend *b, double tflops, double ms, int min_n)
{
    int n = (int)(cbrt(ms * 1e-3 * tflops * 1e12 / 2) / 64) * 64;
    n = n < min_n ? min_n : n;
    return b->peak_gemm_n > 0 && n > b->peak_gemm_n ? b->peak_gemm_n : n;
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

double measure_gemm_ms(double budget_s)
{
    return clamp(budget_s * 1e3 / 100, PEAK_GEMM_MIN_MS, PEAK_GEMM_MS);
}

int measure_warmup_ms(double budget_s)
{
    return (int)clamp(budget_s * 1e3 / 10, PEAK_GEMM_MIN_WARMUP_MS, PEAK_GEMM_WARMUP_MS);
}

/* Warmed up at the smallest size, then grown to the size a GEMM takes
 * `want` ms at the rate just measured, until one takes half that or the
 * size is the backend's largest: a GPU ends at its largest (small GEMMs
 * there are launch-bound), a CPU at milliseconds instead of the seconds
 * its largest would take, run after run. */
static int peak_gemm(backend *b, double budget_s, double *tflops, int *n_used)
{
    double want = measure_gemm_ms(budget_s), ms = 0;
    int n = measure_gemm_size(b, 0, want, PEAK_GEMM_MIN_N);
    int rc = gemm_rate(b, n, measure_warmup_ms(budget_s), 3, tflops, &ms);
    while (!rc && ms < want / 2 && measure_gemm_size(b, *tflops, want, PEAK_GEMM_MIN_N) > n) {
        n = measure_gemm_size(b, *tflops, want, PEAK_GEMM_MIN_N);
        rc = gemm_rate(b, n, 0, 5, tflops, &ms);
    }
    if (!rc)
        *n_used = n;
    return rc;
}

int measure_peak_gemm(backend *b, double budget_s, double *tflops, int *n_used)
{
    /* The memory cap is the user's budget for the model; the peak probe is
     * ours and measures the device, so it runs outside the cap. */
    size_t user_cap = b->mem_cap;
    b->mem_cap = 0;
    int rc = peak_gemm(b, budget_s, tflops, n_used);
    b->mem_cap = user_cap;
    return rc;
}
