/* The noise-scale estimator against the truth: a tiny softmax regression
 * whose per-example gradients give tr(S) and |G|^2 exactly over a finite
 * population, windows drawn from it with padding; and the pass on the
 * MLP, whose estimate must not depend on the split it was measured at. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "noise_pass.h"
#include "noise_row.h"
#include "noise_scale.h"
#include "rng.h"
#include "test_spec.h"

#define FEATURES 3
#define CLASSES 3
#define PARAMS (FEATURES * CLASSES)
#define POPULATION 64

/* Per-example gradients of softmax(W x) against a label, at fixed W. */
static void population(float g[POPULATION][PARAMS])
{
    rng r = {42};
    float w[PARAMS];
    for (int i = 0; i < PARAMS; i++)
        w[i] = rng_uniform(&r, -1, 1);
    for (int e = 0; e < POPULATION; e++) {
        float x[FEATURES], z[CLASSES], sum = 0;
        for (int i = 0; i < FEATURES; i++)
            x[i] = rng_uniform(&r, -1, 1) + (i == 0 ? 0.5f : 0); /* a mean: |G| > 0 */
        int y = x[0] > 0.3f ? 0 : rng_below(&r, CLASSES);
        for (int c = 0; c < CLASSES; c++) {
            z[c] = 0;
            for (int i = 0; i < FEATURES; i++)
                z[c] += w[c * FEATURES + i] * x[i];
            sum += z[c] = expf(z[c]);
        }
        for (int c = 0; c < CLASSES; c++)
            for (int i = 0; i < FEATURES; i++)
                g[e][c * FEATURES + i] = (z[c] / sum - (c == y)) * x[i];
    }
}

/* The truth: the population's mean gradient and covariance trace. */
static void exact(float g[POPULATION][PARAMS], double *trace, double *g2)
{
    double mean[PARAMS] = {0};
    for (int e = 0; e < POPULATION; e++)
        for (int i = 0; i < PARAMS; i++)
            mean[i] += g[e][i] / POPULATION;
    *trace = *g2 = 0;
    for (int i = 0; i < PARAMS; i++) {
        *g2 += mean[i] * mean[i];
        for (int e = 0; e < POPULATION; e++)
            *trace += (g[e][i] - mean[i]) * (g[e][i] - mean[i]) / POPULATION;
    }
}

/* One window of `accum` micro-batches of `micro` examples drawn with
 * replacement, one in four padding: each micro-batch's own mean gradient. */
static void window(float g[POPULATION][PARAMS], rng *r, int micro, int accum, noise_scale *ns)
{
    noise_window w = {0};
    double sum[PARAMS] = {0};
    for (int k = 0; k < accum; k++) {
        float mean[PARAMS] = {0};
        int valid = 0;
        for (int j = 0; j < micro; j++) {
            int e = rng_below(r, POPULATION);
            if (rng_below(r, 4) == 0)
                continue; /* padding */
            valid++;
            for (int i = 0; i < PARAMS; i++)
                mean[i] += g[e][i];
        }
        double sq = 0;
        for (int i = 0; valid && i < PARAMS; i++) {
            mean[i] /= valid;
            sq += (double)mean[i] * mean[i];
            sum[i] += (double)valid * mean[i]; /* the valid items' sum, not their mean */
        }
        noise_window_add(&w, sq, valid);
    }
    for (int i = 0; i < PARAMS; i++)
        w.window_sq += (sum[i] / w.valid) * (sum[i] / w.valid);
    noise_scale_add(ns, &w);
}

static noise_result estimate(float g[POPULATION][PARAMS], rng *r, int windows, int micro,
                             int accum)
{
    noise_scale ns;
    noise_result out;
    CHECK(noise_scale_init(&ns, windows) == 0);
    for (int i = 0; i < windows; i++)
        window(g, r, micro, accum, &ns);
    CHECK(noise_scale_result(&ns, &out) == 0);
    noise_scale_free(&ns);
    return out;
}

/* Many windows: the estimate within 4 of its stated errors of the truth,
 * and that error small enough to mean something. */
static void test_estimator_unbiased(void)
{
    static float g[POPULATION][PARAMS];
    double trace, g2;
    population(g);
    exact(g, &trace, &g2);
    rng r = {7};
    noise_result n = estimate(g, &r, 20000, 4, 4);
    fprintf(stderr, "  exact B_simple %.4g (tr %.4g, |G|^2 %.4g); estimated %.4g +- %.2g "
            "(tr %.4g, |G|^2 %.4g)\n", trace / g2, trace, g2, n.b_simple, n.b_simple_err,
            n.trace_sigma, n.grad_sq);
    CHECK(n.b_simple_err > 0 && n.b_simple_err < 0.05 * trace / g2);
    CHECK_NEAR(n.b_simple, trace / g2, 4 * n.b_simple_err);
    CHECK(n.small_sq > n.window_sq); /* the smaller batch is the noisier */
}

/* The stated error is the spread of the estimate: over independent runs of
 * few windows, their standard deviation against the mean stated error. */
static void test_error_calibrated(void)
{
    static float g[POPULATION][PARAMS];
    population(g);
    rng r = {11};
    enum { RUNS = 200 };
    double b[RUNS], mean = 0, err = 0, var = 0;
    for (int i = 0; i < RUNS; i++) {
        noise_result n = estimate(g, &r, 400, 4, 4);
        b[i] = n.b_simple;
        mean += n.b_simple / RUNS;
        err += n.b_simple_err / RUNS;
    }
    for (int i = 0; i < RUNS; i++)
        var += (b[i] - mean) * (b[i] - mean) / (RUNS - 1);
    fprintf(stderr, "  spread %.3g, mean stated error %.3g\n", sqrt(var), err);
    CHECK(sqrt(var) > 0.75 * err && sqrt(var) < 1.33 * err);
}

/* Fewer than two windows, or windows of one small batch: no estimate. */
static void test_no_estimate(void)
{
    noise_scale ns;
    noise_result out;
    CHECK(noise_scale_init(&ns, 4) == 0);
    noise_window one = {.small_sq_sum = 1, .inv_valid_sum = 0.5, .smalls = 1, .valid = 2,
                        .window_sq = 1};
    CHECK(noise_scale_add(&ns, &one) == -1);
    CHECK(noise_scale_result(&ns, &out) == -1 && isnan(out.b_simple) && out.windows == 0);
    noise_scale_free(&ns);
}

static noise_result pass_at(model *m, int micro)
{
    split sp;
    char why[200];
    noise_result n;
    CHECK(split_make(64, micro, 1, &sp, why, sizeof why) == 0);
    noise_pass_options o = {.windows = 48, .seed = 3};
    CHECK(noise_pass_run(m, &sp, &o, &n) == BK_OK);
    return n;
}

/* What the pass tests run on: the tiny MLP (its spec the caller's, which
 * the model keeps) on the CPU backend, SGD, seed 7. */
static backend *tiny_on_cpu(const model_spec *tiny, model *m)
{
    static const optimizer_config SGD = {OPT_SGD, 0.1f, 0, 0, 0, 0, OPT_AT_STEP};
    backend *b = NULL;
    char why[300];
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    CHECK(model_create(b, tiny, &SGD, 7, m) == BK_OK);
    return b;
}

static void tiny_free(backend *b, model *m)
{
    model_destroy(m);
    b->ops->destroy(b);
}

/* The pass on the MLP: the windows' gradient is the same whatever the
 * split (each small batch's own mean, weighted back by its valid items),
 * the small batches are noisier the smaller they are, and the estimate
 * does not depend on the split beyond its errors. */
static void test_pass_on_mlp(void)
{
    model_spec tiny = test_spec("tiny");
    model m;
    backend *b = tiny_on_cpu(&tiny, &m);
    char why[300];
    noise_result a = pass_at(&m, 4), c = pass_at(&m, 16);
    fprintf(stderr, "  MLP: 4x16 %.4g +- %.2g (|g|^2 %.4g, |G_win|^2 %.4g); 16x4 %.4g +- %.2g "
            "(|g|^2 %.4g, |G_win|^2 %.4g)\n", a.b_simple, a.b_simple_err, a.small_sq,
            a.window_sq, c.b_simple, c.b_simple_err, c.small_sq, c.window_sq);
    CHECK(a.windows == 48 && c.windows == 48);
    CHECK_NEAR(a.window_sq, c.window_sq, 1e-4 * c.window_sq);
    CHECK(a.small_sq > c.small_sq && c.small_sq > c.window_sq);
    CHECK_NEAR(a.b_simple, c.b_simple,
               3 * sqrt(a.b_simple_err * a.b_simple_err + c.b_simple_err * c.b_simple_err));
    split one;
    noise_result none;
    CHECK(split_make(64, 64, 1, &one, why, sizeof why) == 0);
    noise_pass_options o = {.windows = 4, .seed = 3};
    CHECK(noise_pass_run(&m, &one, &o, &none) == BK_OK && none.windows == 0 &&
          isnan(none.b_simple));
    tiny_free(b, &m);
}

/* The pass keeps to its time: with a limit already spent it stops after
 * NOISE_WINDOWS_MIN windows and says so, its estimate and error over
 * those (every one run whole); without one it runs every window asked
 * for. A signal cuts the window it finds short: run, not whole, not in
 * the estimate. */
static void test_pass_keeps_to_its_time(void)
{
    model_spec tiny = test_spec("tiny");
    model m;
    backend *b = tiny_on_cpu(&tiny, &m);
    split sp;
    char why[300];
    CHECK(split_make(64, 16, 1, &sp, why, sizeof why) == 0);
    noise_result cut, all;
    noise_pass_options o = {.windows = 12, .seed = 3, .time_s = 1e-9};
    CHECK(noise_pass_run(&m, &sp, &o, &cut) == BK_OK);
    CHECK(cut.windows_run == NOISE_WINDOWS_MIN && cut.windows == NOISE_WINDOWS_MIN &&
          cut.windows_complete == NOISE_WINDOWS_MIN);
    CHECK(cut.b_simple > 0 && cut.b_simple_err > 0);
    volatile sig_atomic_t stop = 1;
    o.stop = &stop;
    CHECK(noise_pass_run(&m, &sp, &o, &cut) == BK_OK);
    CHECK(cut.windows_run == 1 && cut.windows_complete == 0 && cut.windows == 0);
    o.stop = NULL;
    o.time_s = 0;
    CHECK(noise_pass_run(&m, &sp, &o, &all) == BK_OK);
    CHECK(all.windows_run == 12 && all.windows == 12 && all.windows_complete == 12);
    o.time_s = 3600;
    CHECK(noise_pass_run(&m, &sp, &o, &all) == BK_OK && all.windows_run == 12);
    tiny_free(b, &m);
}

/* Configs that differ only in what the pass does not look at (here the
 * reduction) take the last figure: no pass runs for the second (its
 * weights, moved on purpose, would give another figure), while another
 * split measures again. */
static void test_row_reuses_the_figure(void)
{
    model_spec tiny = test_spec("tiny");
    model m;
    backend *b = tiny_on_cpu(&tiny, &m);
    char why[300];
    config cfg = {.model = &tiny, .dtype = DTYPE_FP32, .seed = 3, .noise_windows = 6,
                  .reduction = REDUCTION_SUM, .budget = {.budget_s = 1000}};
    CHECK(split_make(64, 16, 1, &cfg.sp, why, sizeof why) == 0);
    result_row first, again, other;
    noise_row_pass ran = {.windows_run = -1}; /* the windows each call ran: the memo's none */
    result_row_clear(&first);
    result_row_clear(&again);
    result_row_clear(&other);
    CHECK(noise_row_fill(&m, &cfg, NULL, &first, &ran) == BK_OK && first.grad_noise_scale > 0);
    CHECK(ran.windows_run == 6 && ran.windows_complete == 6 && first.noise_windows == 6 &&
          !ran.none[0]);
    float *w = malloc(m.n_params * sizeof *w);
    CHECK(bk_download(b, w, m.params, m.n_params * sizeof *w) == BK_OK);
    for (size_t i = 0; i < m.n_params; i++)
        w[i] += 0.5f;
    CHECK(bk_upload(b, m.params, w, m.n_params * sizeof *w) == BK_OK);
    free(w);
    cfg.reduction = REDUCTION_MEAN_OF_MEANS;
    CHECK(noise_row_fill(&m, &cfg, NULL, &again, &ran) == BK_OK && ran.windows_run == 0);
    CHECK(ran.windows_complete == 6 && again.noise_windows == 6 &&
          again.grad_noise_scale == first.grad_noise_scale &&
          again.grad_noise_scale_err == first.grad_noise_scale_err);
    CHECK(split_make(64, 8, 1, &cfg.sp, why, sizeof why) == 0);
    CHECK(noise_row_fill(&m, &cfg, NULL, &other, &ran) == BK_OK && other.grad_noise_scale > 0 &&
          other.grad_noise_scale != first.grad_noise_scale && ran.windows_run == 6);
    tiny_free(b, &m);
}

int main(void)
{
    test_row_reuses_the_figure();
    test_pass_keeps_to_its_time();
    test_pass_on_mlp();
    test_estimator_unbiased();
    test_error_calibrated();
    test_no_estimate();
    return check_finish("test_noise_scale");
}
