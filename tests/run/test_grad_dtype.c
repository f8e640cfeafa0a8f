/* The grad-dtype axis: its option (default fp32, a list, an unknown value
 * refused with the known ones), config_iter walking it innermost, the
 * tolerance the check holds each row to, and what the step does with it:
 * a bf16 accumulator holds only bf16 values after a window, at K = 1 it is
 * the fp32 window rounded once, it differs from fp32 where K > 1, the
 * optimizer in the backward rounds each range before its update exactly
 * as the update after the window would, and a data-parallel runner
 * refuses it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "dispatch.h"
#include "elementwise.h"
#include "step.h"
#include "test_cpu_backend.h"
#include "test_spec.h"

static void test_option(void)
{
    run_options o;
    char why[400];
    options_defaults(&o);
    CHECK(o.n_grad_dtypes == 1 && o.grad_dtypes[0] == GRAD_DTYPE_FP32);
    CHECK(options_set(&o, "grad-dtype", "bf16,fp32", why, sizeof why) == 0);
    CHECK(o.n_grad_dtypes == 2 && o.grad_dtypes[0] == GRAD_DTYPE_BF16 &&
          o.grad_dtypes[1] == GRAD_DTYPE_FP32);
    CHECK(options_set(&o, "grad-dtype", "fp16", why, sizeof why) == -1);
    CHECK(strstr(why, "unknown grad-dtype 'fp16' (known: fp32, bf16)") != NULL);
    CHECK(o.n_grad_dtypes == 2); /* the list before stays */
    /* The loss curves key a curve by its accumulator too: both train. */
    CHECK(options_set(&o, "train-steps", "5", why, sizeof why) == 0);
    CHECK(options_validate(&o, why, sizeof why) == 0);
}

/* model x micro x recompute x grad_dtype: the accumulator innermost, set
 * on the model by config_on_model. */
static void test_iteration(void)
{
    run_options o;
    char why[400];
    options_defaults(&o);
    CHECK(options_set(&o, "model", "tiny", why, sizeof why) == 0);
    CHECK(options_set(&o, "effective", "4", why, sizeof why) == 0);
    CHECK(options_set(&o, "micro", "1,4", why, sizeof why) == 0);
    CHECK(options_set(&o, "recompute", "none,gelu", why, sizeof why) == 0);
    CHECK(options_set(&o, "grad-dtype", "fp32,bf16", why, sizeof why) == 0);
    config_iter it;
    config c;
    config_iter_start(&it, &o, 0);
    int n = 0;
    while (config_next(&it, &c)) {
        CHECK(c.grad_dtype == (n % 2 ? GRAD_DTYPE_BF16 : GRAD_DTYPE_FP32));
        CHECK(c.recompute == (n / 2 % 2 ? RECOMPUTE_GELU : RECOMPUTE_NONE));
        model m = {0};
        config_on_model(&c, &m);
        CHECK(m.grad_dtype == c.grad_dtype && m.spec.recompute == c.recompute);
        n++;
    }
    CHECK(n == 2 * 2 * 2 && config_count(&o, 0) == n);
}

/* fp32 adds nothing to the dtype's tolerance; bf16 adds 2^-8. */
static void test_tolerance(void)
{
    for (int d = 0; d < DTYPE_COUNT; d++) {
        const dtype_info *dt = dtype_info_of((dtype)d);
        CHECK(grad_dtype_tolerance(dt, GRAD_DTYPE_FP32) == dt->grad_tolerance);
        CHECK(grad_dtype_tolerance(dt, GRAD_DTYPE_BF16) == dt->grad_tolerance + 1.0 / 256);
    }
    CHECK(!grad_dtype_info_of(GRAD_DTYPE_FP32)->rounds_bf16);
    CHECK(grad_dtype_info_of(GRAD_DTYPE_BF16)->rounds_bf16);
    CHECK(grad_dtype_info_of(GRAD_DTYPE_BF16)->over_is_measured);
}

typedef struct run {
    model m;
    dataset d;
    step_runner s;
    float *g;
} run;

/* A model of `name` at effective / micro with its gradient held in g_dt
 * and the optimizer at `at`; 0 or a BK_* status. */
static int run_open(backend *b, const char *name, int effective, int micro, grad_dtype g_dt,
                    optimizer_at at, run *r)
{
    optimizer_config opt = {OPT_ADAMW, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, at};
    model_spec spec = test_spec(name);
    input_spec in;
    split sp;
    char why[200];
    memset(r, 0, sizeof *r);
    model_input(&spec, &in);
    if (split_make(effective, micro, 1, &sp, why, sizeof why) ||
        model_create(b, &spec, &opt, 7, &r->m) != BK_OK)
        return BK_ERROR;
    r->m.grad_dtype = g_dt;
    int rc = dataset_create(b, &in, effective, 2, 11, &r->d);
    if (!rc)
        rc = step_runner_init(&r->s, &r->m, &r->d, &sp, MODE_ASYNC, REDUCTION_SUM);
    r->g = malloc(r->m.n_params * sizeof(float));
    return rc ? rc : r->g ? BK_OK : BK_OOM;
}

static void run_close(run *r)
{
    step_runner_free(&r->s);
    dataset_destroy(&r->d);
    model_destroy(&r->m);
    free(r->g);
}

/* The window's gradient on buffer 0 into r->g. */
static int window(run *r)
{
    int rc = step_window(&r->s, 0);
    return rc ? rc : bk_download(r->m.b, r->g, r->m.grads, r->m.n_params * sizeof(float));
}

static int all_bf16(const float *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &g[i], sizeof u);
        if (u & 0xffffu)
            return 0;
    }
    return 1;
}

static void test_window(backend *b, const char *name)
{
    run f1, h1, f4, h4;
    CHECK(run_open(b, name, 8, 8, GRAD_DTYPE_FP32, OPT_AT_STEP, &f1) == BK_OK &&
          window(&f1) == BK_OK);
    CHECK(run_open(b, name, 8, 8, GRAD_DTYPE_BF16, OPT_AT_STEP, &h1) == BK_OK &&
          window(&h1) == BK_OK);
    CHECK(run_open(b, name, 8, 2, GRAD_DTYPE_FP32, OPT_AT_STEP, &f4) == BK_OK &&
          window(&f4) == BK_OK);
    CHECK(run_open(b, name, 8, 2, GRAD_DTYPE_BF16, OPT_AT_STEP, &h4) == BK_OK &&
          window(&h4) == BK_OK);
    size_t n = f1.m.n_params;
    CHECK(h1.s.round_bf16 && !f1.s.round_bf16);
    CHECK(all_bf16(h1.g, n) && all_bf16(h4.g, n));
    CHECK(!all_bf16(f4.g, n)); /* else the check below proves nothing */
    /* K = 1: one rounding of the fp32 window, to the bit. */
    size_t off = 0, differ = 0;
    for (size_t i = 0; i < n; i++) {
        off += ew_round_bf16(f1.g[i]) != h1.g[i];
        differ += ew_round_bf16(f4.g[i]) != h4.g[i];
    }
    CHECK(off == 0);
    /* K = 4: rounded between micro-batches, not once at the end. */
    CHECK(differ > 0);
    run_close(&f1);
    run_close(&h1);
    run_close(&f4);
    run_close(&h4);
}

/* The optimizer in the backward updates each range of the last backward
 * as it is reported: rounded there, the weights after a few steps are
 * those of the update after the window, to the bit. */
static void test_optimizer_at(backend *b, const char *name)
{
    run at_step, in_backward;
    CHECK(run_open(b, name, 6, 2, GRAD_DTYPE_BF16, OPT_AT_STEP, &at_step) == BK_OK);
    CHECK(run_open(b, name, 6, 2, GRAD_DTYPE_BF16, OPT_AT_BACKWARD, &in_backward) == BK_OK);
    CHECK(in_backward.s.optimize_in_backward && !at_step.s.optimize_in_backward);
    for (int i = 0; i < 3; i++)
        CHECK(step_run(&at_step.s) == BK_OK && step_run(&in_backward.s) == BK_OK);
    size_t bytes = at_step.m.n_params * sizeof(float);
    float *w = malloc(bytes), *v = malloc(bytes);
    CHECK(w && v);
    if (w && v) {
        CHECK(bk_download(b, w, at_step.m.params, bytes) == BK_OK);
        CHECK(bk_download(b, v, in_backward.m.params, bytes) == BK_OK);
        CHECK(memcmp(w, v, bytes) == 0);
    }
    free(w);
    free(v);
    run_close(&at_step);
    run_close(&in_backward);
}

/* With ranks the runner refuses it, with the reason, before it touches
 * the communicator. */
static void test_ranks_refused(backend *b)
{
    run r;
    comm c = {0};
    CHECK(run_open(b, "tiny", 4, 2, GRAD_DTYPE_FP32, OPT_AT_STEP, &r) == BK_OK);
    step_runner_free(&r.s);
    r.m.grad_dtype = GRAD_DTYPE_BF16;
    split sp;
    char why[200];
    CHECK(split_make(4, 2, 1, &sp, why, sizeof why) == 0);
    CHECK(step_runner_init_dp(&r.s, &r.m, &r.d, &sp, MODE_ASYNC, REDUCTION_SUM, &c,
                              SYNC_WINDOW) == BK_UNSUPPORTED);
    CHECK(strstr(b->error, "bf16 gradient accumulator is measured on one device") != NULL);
    memset(&r.s, 0, sizeof r.s);
    run_close(&r);
}

int main(void)
{
    test_option();
    test_iteration();
    test_tolerance();
    backend *b = test_cpu_backend();
    CHECK(b != NULL);
    if (b) {
        test_window(b, "tiny");
        test_window(b, "gpt-tiny");
        test_optimizer_at(b, "tiny");
        test_optimizer_at(b, "gpt-tiny");
        test_ranks_refused(b);
        b->ops->destroy(b);
    }
    return check_finish("test_grad_dtype");
}
