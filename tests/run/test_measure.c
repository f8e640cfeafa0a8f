/* The timed pass, on the CPU backend with the device timer replaced by a
 * script of step times: the noise target is judged on exactly the samples
 * the row reports, and a row over the target says so in its note. The peak
 * GEMM is warmed up for PEAK_GEMM_WARMUP_MS before it is timed. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "config_run.h"
#include "dataset.h"
#include "measure.h"
#include "model.h"
#include "step.h"
#include "test_spec.h"
#include "trace.h"

static const backend_ops *cpu_ops;
static backend_ops fake_ops;

/* Step i's device time is script[i] (the last one repeats). */
static const double *script;
static size_t script_len, script_next;

static int scripted_elapsed(backend *b, bk_timer *start, bk_timer *end, double *ms)
{
    (void)b;
    (void)start;
    (void)end;
    *ms = script[script_next < script_len ? script_next : script_len - 1];
    script_next++;
    return BK_OK;
}

/* When the first GEMM was issued and when the first timer was recorded. */
static int gemms;
static uint64_t first_gemm_ns, first_timer_ns;

static int counting_gemm(backend *b, const gemm_desc *g)
{
    if (!gemms++)
        first_gemm_ns = trace_now_ns();
    return cpu_ops->gemm(b, g);
}

static int noting_timer_record(backend *b, bk_timer *t)
{
    if (!first_timer_ns)
        first_timer_ns = trace_now_ns();
    return cpu_ops->timer_record(b, t);
}

/* A small peak GEMM (a few microseconds each on a CPU): one warm-up GEMM
 * would be over long before the timing starts. */
static void test_peak_warmup(backend *b)
{
    int saved_n = b->peak_gemm_n;
    b->peak_gemm_n = 32;
    fake_ops.gemm = counting_gemm;
    fake_ops.timer_record = noting_timer_record;
    gemms = 0;
    first_timer_ns = 0;
    double tflops = 0;
    int n = 0;
    const double one_ms[] = {1.0};
    script = one_ms;
    script_len = 1;
    script_next = 0;
    CHECK(measure_peak_gemm(b, 1000, &tflops, &n) == BK_OK);
    CHECK(n == 32 && tflops > 0);
    double warm_ms = (double)(first_timer_ns - first_gemm_ns) / 1e6;
    CHECK(first_timer_ns > first_gemm_ns && warm_ms >= PEAK_GEMM_WARMUP_MS);
    CHECK(gemms > 1 + 5); /* many warm-up GEMMs, then the timed ones */
    fake_ops.gemm = cpu_ops->gemm;
    fake_ops.timer_record = cpu_ops->timer_record;
    b->peak_gemm_n = saved_n;
}

static void run_script(step_runner *s, const double *times, size_t n, int min_samples,
                       int max_samples, double max_noise, step_timing *t, result_row *r)
{
    script = times;
    script_len = n;
    script_next = 0;
    measure_options mo = {.warmup = 0, .min_samples = min_samples, .max_samples = max_samples,
                          .budget_s = 1000, .max_noise_pct = max_noise};
    CHECK(measure_steps(s, &mo, t) == BK_OK);
    memset(r, 0, sizeof *r);
    r->effective_batch = 8;
    row_fill_timing(r, t, 1.0, &mo);
    /* The invariant: noise_met holds exactly when the reported noise is
     * within the target, and a row over it says so. */
    CHECK(t->noise_met == (t->step.samples >= (size_t)min_samples &&
                           t->step.noise_pct <= max_noise));
    if (t->step.noise_pct > max_noise)
        CHECK(strstr(r->note, "noise") && strstr(r->note, "over the"));
    else
        CHECK(strstr(r->note, "over the") == NULL);
    /* The note names what stopped the loop, and only that. */
    CHECK(strstr(r->note, "budget") == NULL && strstr(r->note, "stopped ") == r->note);
    if (t->stopped_by == MEASURE_STOP_SAMPLE_CAP)
        CHECK(strstr(r->note, "max-samples") != NULL);
    else
        CHECK(t->stopped_by == MEASURE_STOP_NOISE && strstr(r->note, "noise target") &&
              strstr(r->note, "max-samples") == NULL);
}

/* A budget already spent: three samples (the least ever taken), and the
 * note blames the budget, not the sample cap nor the noise target. */
static void test_budget_stop(step_runner *s)
{
    const double never_settles[] = {10, 16, 13, 19, 10, 17};
    script = never_settles;
    script_len = 6;
    script_next = 0;
    measure_options mo = {.min_samples = 5, .max_samples = 1000, .budget_s = 0,
                          .max_noise_pct = 2.0};
    step_timing t;
    result_row r;
    CHECK(measure_steps(s, &mo, &t) == BK_OK);
    CHECK(t.stopped_by == MEASURE_STOP_BUDGET && t.step.samples == 3 && !t.noise_met);
    memset(&r, 0, sizeof r);
    r.effective_batch = 8;
    row_fill_timing(&r, &t, 1.0, &mo);
    CHECK(strstr(r.note, "budget ran out") && strstr(r.note, "fewer than min-samples 5"));
    CHECK(strstr(r.note, "max-samples") == NULL);
}

/* The GEMM size for a time: 2 n^3 FLOPs in `ms` at the rate, in steps of
 * 64, between the least asked and the backend's largest. */
static void test_gemm_size(void)
{
    backend b;
    memset(&b, 0, sizeof b);
    b.peak_gemm_n = 2048;
    /* 0.2 TFLOP/s for 20 ms: cbrt(2e9) = 1259.9, down to 1216 */
    CHECK(measure_gemm_size(&b, 0.2, 20, 512) == 1216);
    CHECK(measure_gemm_size(&b, 1000, 20, 512) == 2048); /* a GPU: its largest */
    CHECK(measure_gemm_size(&b, 0, 20, 512) == 512);     /* no rate: the least */
    b.peak_gemm_n = 0;                                   /* no largest named */
    CHECK(measure_gemm_size(&b, 1000, 20, 512) == 21504);
}

/* The measuring GEMMs keep to a tenth of a config's budget: each a
 * hundredth of it (20 ms at the default 2 s, 1 ms at the least), the
 * start-up warm-up a tenth (200 ms at 2 s, 50 at the least). */
static void test_measuring_cost(void)
{
    CHECK(measure_gemm_ms(2) == PEAK_GEMM_MS && measure_warmup_ms(2) == PEAK_GEMM_WARMUP_MS);
    CHECK(measure_gemm_ms(60) == PEAK_GEMM_MS && measure_warmup_ms(60) == PEAK_GEMM_WARMUP_MS);
    CHECK(measure_gemm_ms(0.5) == 5 && measure_warmup_ms(1) == 100);
    CHECK(measure_gemm_ms(0.05) == PEAK_GEMM_MIN_MS &&
          measure_warmup_ms(0.05) == PEAK_GEMM_MIN_WARMUP_MS);
}

/* The start-up peak on the CPU: grown from 512 to a GEMM of tens of
 * milliseconds, never past the backend's largest, and a rate. */
static void test_peak_size(backend *b)
{
    double tflops = 0;
    int n = 0;
    CHECK(measure_peak_gemm(b, 2, &tflops, &n) == BK_OK);
    CHECK(n >= PEAK_GEMM_MIN_N && n <= b->peak_gemm_n && n % 64 == 0);
    CHECK(tflops > 0);
}

int main(void)
{
    test_gemm_size();
    test_measuring_cost();
    backend *b;
    char why[320];
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    test_peak_size(b);
    cpu_ops = b->ops;
    fake_ops = *cpu_ops;
    fake_ops.timer_elapsed_ms = scripted_elapsed;
    b->ops = &fake_ops;

    optimizer_config opt = {.kind = OPT_SGD, .lr = 1e-3f};
    model m;
    dataset d;
    split sp;
    step_runner s;
    model_spec tiny = test_spec("tiny");
    input_spec in;
    model_input(&tiny, &in);
    CHECK(model_create(b, &tiny, &opt, 3, &m) == BK_OK);
    CHECK(dataset_create(b, &in, 8, 1, 3, &d) == BK_OK);
    CHECK(split_make(8, 8, 1, &sp, why, sizeof why) == 0);
    CHECK(step_runner_init(&s, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM) == BK_OK);
    step_timing t;
    result_row r;

    /* Five samples meet a 0.5% target (noise 0); the step in flight when
     * that is decided would put six at 0.74%. The row reports the five. */
    const double met_then_over[] = {10, 10, 10, 10.1, 10.1, 10.1, 10.1};
    run_script(&s, met_then_over, 7, 5, 1000, 0.5, &t, &r);
    CHECK(t.noise_met && t.step.samples == 5);
    CHECK(t.step.noise_pct <= 0.5);
    CHECK_NEAR(t.step.median, 10.0, 1e-12);
    CHECK(script_next == 6); /* the step in flight was waited for */

    /* max-samples reached: the last sample counts, and the target is judged
     * with it (here it brings the noise from 17% to 0). */
    const double settles_last[] = {10, 16, 13, 13, 13};
    run_script(&s, settles_last, 5, 3, 5, 2.0, &t, &r);
    CHECK(t.step.samples == 5 && t.noise_met && t.step.noise_pct == 0);

    /* max-samples reached over the target: the note names the limit. */
    const double never_settles[] = {10, 16, 13, 19, 10};
    run_script(&s, never_settles, 5, 3, 5, 2.0, &t, &r);
    CHECK(t.step.samples == 5 && !t.noise_met);
    CHECK(strstr(r.note, "max-samples 5") != NULL);

    /* The sample cap reached with the noise within the target: the cap is
     * named as what stopped it, the noise as within. */
    const double steady[] = {10, 10, 10, 10, 10, 10};
    run_script(&s, steady, 6, 4, 4, 2.0, &t, &r);
    CHECK(t.stopped_by == MEASURE_STOP_SAMPLE_CAP && t.step.samples == 4);
    CHECK(strstr(r.note, "within the 2% target"));

    /* --min-samples 1: one sample has no spread, so it never meets the
     * target alone (it stopped there at a "noise 0%"); two do. */
    run_script(&s, steady, 6, 1, 1000, 2.0, &t, &r);
    CHECK(t.stopped_by == MEASURE_STOP_NOISE && t.step.samples == 2);
    /* --max-samples 1: its noise is unmeasured, and the note says so */
    run_script(&s, steady, 6, 1, 1, 2.0, &t, &r);
    CHECK(t.step.samples == 1 && !t.noise_met && isnan(t.step.noise_pct) &&
          isnan(r.step_noise_pct));
    CHECK(strstr(r.note, "no noise from 1 sample") != NULL);
    test_budget_stop(&s);

    /* A fixed count: every step counted, no target; the note names the
     * count as what stopped it, as every row's note names its stop. */
    script = met_then_over;
    script_len = 7;
    script_next = 0;
    measure_options fixed = {.steps = 6, .min_samples = 5, .max_samples = 1000,
                             .budget_s = 1000, .max_noise_pct = 0.5};
    CHECK(measure_steps(&s, &fixed, &t) == BK_OK);
    CHECK(t.step.samples == 6 && !t.noise_met);
    memset(&r, 0, sizeof r);
    row_fill_timing(&r, &t, 1.0, &fixed);
    CHECK(strstr(r.note, "timed the fixed --steps 6") != NULL);

    step_runner_free(&s);
    test_peak_warmup(b);
    dataset_destroy(&d);
    model_destroy(&m);
    b->ops = cpu_ops;
    b->ops->destroy(b);
    return check_finish("test_measure");
}
