/* Where the optimizer runs (optimizer.h): per range inside the window's
 * last backward (OPT_AT_BACKWARD) or after the window (OPT_AT_STEP). The
 * arithmetic must be the same to the bit: after several steps the weights
 * and the AdamW moments of the two placements are compared exactly, for
 * the MLP and the GPT, at one micro-batch a window and at several (a
 * ragged last one too), with AdamW and SGD. A recording backend checks that
 * the backward placement really interleaves the updates with the backward's
 * GEMMs, one update per range the model reports, and that the step
 * placement does not. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "dispatch.h"
#include "model.h"
#include "step.h"
#include "test_spec.h"

#define STEPS 3

static const backend_ops *cpu_ops;
static backend_ops rec_ops;
/* Within the current step: updates issued, and GEMMs issued after the
 * first update. */
static int updates, gemms_after_update;

static int rec_gemm(backend *b, const gemm_desc *g)
{
    gemms_after_update += updates > 0;
    return cpu_ops->gemm(b, g);
}

static int rec_adamw(backend *b, float *w, const float *g, float *m, float *v, size_t n,
                     const adamw_hparams *h)
{
    updates++;
    return cpu_ops->adamw(b, w, g, m, v, n, h);
}

static int rec_sgd(backend *b, float *w, const float *g, size_t n, float lr, float wd)
{
    updates++;
    return cpu_ops->sgd(b, w, g, n, lr, wd);
}

typedef struct trained {
    model m;
    float *params, *adam_m, *adam_v;
    int updates_per_step, gemms_after_update;
} trained;

/* STEPS steps of `name` at effective / micro with the optimizer at `at`;
 * the host copies of the weights and moments are left in t. */
static int train(backend *b, const char *name, optimizer_kind kind, optimizer_at at,
                 int effective, int micro, trained *t)
{
    optimizer_config opt = {kind, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.01f, at};
    model_spec spec = test_spec(name);
    input_spec in;
    dataset d;
    split sp;
    char why[200];
    step_runner s;
    model_input(&spec, &in);
    memset(t, 0, sizeof *t);
    if (split_make(effective, micro, 1, &sp, why, sizeof why) ||
        model_create(b, &spec, &opt, 7, &t->m) != BK_OK)
        return -1;
    int rc = dataset_create(b, &in, effective, 2, 11, &d);
    if (!rc)
        rc = step_runner_init(&s, &t->m, &d, &sp, MODE_ASYNC, REDUCTION_SUM);
    if (!rc) {
        CHECK(s.optimize_in_backward == (at == OPT_AT_BACKWARD));
        for (int i = 0; i < STEPS && !rc; i++) {
            updates = gemms_after_update = 0;
            rc = step_run(&s);
            t->updates_per_step = updates;
            t->gemms_after_update += gemms_after_update;
        }
        step_runner_free(&s);
        dataset_destroy(&d);
    }
    size_t bytes = t->m.n_params * sizeof(float);
    t->params = malloc(bytes);
    t->adam_m = calloc(t->m.n_params, sizeof(float));
    t->adam_v = calloc(t->m.n_params, sizeof(float));
    if (!rc && t->params && t->adam_m && t->adam_v) {
        rc = bk_download(b, t->params, t->m.params, bytes);
        if (!rc && kind == OPT_ADAMW)
            rc = bk_download(b, t->adam_m, t->m.adam_m, bytes);
        if (!rc && kind == OPT_ADAMW)
            rc = bk_download(b, t->adam_v, t->m.adam_v, bytes);
    }
    CHECK(t->m.step_count == STEPS);
    return rc;
}

static void release(trained *t)
{
    model_destroy(&t->m);
    free(t->params);
    free(t->adam_m);
    free(t->adam_v);
}

/* The ranges the kind's backward reports (the updates of one step at
 * OPT_AT_BACKWARD: each range, plus one for what is left unreported). */
static void compare(backend *b, const char *name, optimizer_kind kind, int effective,
                    int micro, int expected_updates)
{
    trained at_step, in_backward;
    int rc_s = train(b, name, kind, OPT_AT_STEP, effective, micro, &at_step);
    int rc_b = train(b, name, kind, OPT_AT_BACKWARD, effective, micro, &in_backward);
    CHECK(rc_s == 0 && rc_b == 0);
    if (rc_s == 0 && rc_b == 0) {
        size_t bytes = at_step.m.n_params * sizeof(float);
        int same = !memcmp(at_step.params, in_backward.params, bytes) &&
                   !memcmp(at_step.adam_m, in_backward.adam_m, bytes) &&
                   !memcmp(at_step.adam_v, in_backward.adam_v, bytes);
        CHECK(same);
        CHECK(at_step.updates_per_step == 1);
        CHECK(at_step.gemms_after_update == 0);
        CHECK(in_backward.updates_per_step == expected_updates);
        /* Updates come between the backward's GEMMs, every step. */
        CHECK(in_backward.gemms_after_update >= STEPS);
        if (!same || in_backward.updates_per_step != expected_updates)
            fprintf(stderr, "  %s %s %d/%d: same %d, updates a step %d (want %d)\n", name,
                    optimizer_name(kind), effective, micro, same,
                    in_backward.updates_per_step, expected_updates);
    }
    release(&at_step);
    release(&in_backward);
}

/* A range out of order is refused with a reason. */
static void test_take_range(backend *b)
{
    step_runner s;
    memset(&s, 0, sizeof s);
    model m;
    memset(&m, 0, sizeof m);
    m.b = b;
    s.m = &m;
    s.unreported = 100;
    CHECK(step_take_range(&s, 60, 40) == BK_OK);
    CHECK(s.unreported == 60);
    CHECK(step_take_range(&s, 10, 40) == BK_ERROR);
    CHECK(strstr(b->error, "out of order") != NULL);
    CHECK(s.unreported == 60);
}

int main(void)
{
    backend *b;
    char why[200];
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "test_optimizer_at: %s\n", why);
        return 1;
    }
    cpu_ops = b->ops;
    rec_ops = *cpu_ops;
    rec_ops.gemm = rec_gemm;
    rec_ops.adamw = rec_adamw;
    rec_ops.sgd = rec_sgd;
    b->ops = &rec_ops;

    /* tiny: three linear layers, each its own range. */
    compare(b, "tiny", OPT_ADAMW, 8, 8, 3);
    compare(b, "tiny", OPT_ADAMW, 8, 3, 3);
    compare(b, "tiny", OPT_SGD, 8, 3, 3);
    /* gpt-tiny: the final LayerNorm, the 6 layers of each of two blocks
     * (4 linear layers and 2 LayerNorms), then the embeddings. */
    compare(b, "gpt-tiny", OPT_ADAMW, 4, 4, 14);
    compare(b, "gpt-tiny", OPT_ADAMW, 5, 2, 14);
    test_take_range(b);

    CHECK(b->mem_in_use == 0);
    b->ops = cpu_ops;
    b->ops->destroy(b);
    return check_finish("test_optimizer_at");
}
