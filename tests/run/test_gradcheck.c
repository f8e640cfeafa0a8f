/* The accumulated gradient equals the full-batch gradient on every split;
 * the known-wrong reductions do not; and a float64 reference agrees with
 * the fp32 full-batch gradient. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "gradcheck.h"
#include "mlp.h"
#include "model_need.h"
#include "step.h"
#include "test_spec.h"

static const optimizer_config ADAMW = {OPT_ADAMW, 1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, OPT_AT_STEP};

static double gelu_d(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double gelu_grad_d(double x)
{
    double u = 0.7978845608028654 * (x + 0.044715 * x * x * x), t = tanh(u);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x * x);
}

/* The full-batch gradient in double precision, example by example, written
 * independently of the model code. */
static void reference_gradient(const mlp_layout *l, const float *w, const float *x,
                               const int *labels, const int *valid, int examples, double *g)
{
    int L = l->n_linear, width = l->max_width;
    double *z = calloc((size_t)L * width, sizeof *z), *h = calloc((size_t)L * width, sizeof *h);
    double *dz = calloc((size_t)width, sizeof *dz), *da = calloc((size_t)width, sizeof *da);
    memset(g, 0, l->n_params * sizeof *g);
    int n_valid = 0;
    for (int j = 0; j < examples; j++)
        n_valid += valid[j];
    for (int j = 0; j < examples; j++) {
        if (!valid[j])
            continue;
        for (int i = 0; i < L; i++) {
            for (int o = 0; o < l->out[i]; o++) {
                double s = w[l->b_off[i] + o];
                for (int k = 0; k < l->in[i]; k++) {
                    double in = i == 0 ? x[(size_t)j * l->in[0] + k] : h[(size_t)(i - 1) * width + k];
                    s += (double)w[l->w_off[i] + (size_t)k * l->out[i] + o] * in;
                }
                z[(size_t)i * width + o] = s;
                h[(size_t)i * width + o] = gelu_d(s);
            }
        }
        const double *logits = z + (size_t)(L - 1) * width;
        int C = l->out[L - 1];
        double mx = logits[0], sum = 0;
        for (int c = 1; c < C; c++)
            mx = logits[c] > mx ? logits[c] : mx;
        for (int c = 0; c < C; c++)
            sum += exp(logits[c] - mx);
        for (int c = 0; c < C; c++)
            dz[c] = (exp(logits[c] - mx) / sum - (c == labels[j])) / n_valid;
        for (int i = L - 1; i >= 0; i--) {
            for (int o = 0; o < l->out[i]; o++) {
                g[l->b_off[i] + o] += dz[o];
                for (int k = 0; k < l->in[i]; k++) {
                    double in = i == 0 ? x[(size_t)j * l->in[0] + k] : h[(size_t)(i - 1) * width + k];
                    g[l->w_off[i] + (size_t)k * l->out[i] + o] += dz[o] * in;
                }
            }
            if (i == 0)
                break;
            for (int k = 0; k < l->in[i]; k++) {
                double s = 0;
                for (int o = 0; o < l->out[i]; o++)
                    s += (double)w[l->w_off[i] + (size_t)k * l->out[i] + o] * dz[o];
                da[k] = s * gelu_grad_d(z[(size_t)(i - 1) * width + k]);
            }
            memcpy(dz, da, (size_t)l->in[i] * sizeof *dz);
        }
    }
    free(z);
    free(h);
    free(dz);
    free(da);
}

typedef struct fixture {
    backend *b;
    model m;
    dataset d;
} fixture;

static void setup(fixture *f, int effective)
{
    char why[300];
    CHECK(cpu_backend_create(DTYPE_FP32, &f->b, why, sizeof why) == BK_OK);
    model_spec tiny = test_spec("tiny");
    input_spec in;
    model_input(&tiny, &in);
    CHECK(model_create(f->b, &tiny, &ADAMW, 7, &f->m) == BK_OK);
    CHECK(dataset_create(f->b, &in, effective, 2, 7, &f->d) == BK_OK);
}

static void teardown(fixture *f)
{
    dataset_destroy(&f->d);
    model_destroy(&f->m);
    CHECK(f->b->mem_in_use == 0); /* everything allocated was freed */
    f->b->ops->destroy(f->b);
}

static double window_error(fixture *f, int micro, reduction r, float *g_window, float *g_full)
{
    split sp;
    char why[200];
    CHECK(split_make(f->d.effective_batch, micro, 1, &sp, why, sizeof why) == 0);
    step_runner s;
    CHECK(step_runner_init(&s, &f->m, &f->d, &sp, MODE_ASYNC, r) == BK_OK);
    double err = -1, loss = 0;
    CHECK(grad_check(&s, &err, &loss, g_window, g_full) == BK_OK);
    CHECK(isfinite(loss) && loss > 0);
    step_runner_free(&s);
    return err;
}

static void test_float64_reference(void)
{
    fixture f;
    setup(&f, 12);
    mlp_layout l;
    mlp_layout_of(&f.m.spec, &l);
    size_t n = f.m.n_params;
    CHECK(l.n_params == n);
    float *gw = malloc(n * 4), *gf = malloc(n * 4);
    double *ref = malloc(n * sizeof *ref);
    window_error(&f, 12, REDUCTION_SUM, gw, gf);
    /* On the CPU backend device memory is host memory. */
    const float *x = f.d.buf[0].x;
    const int *labels = f.d.buf[0].labels, *valid = f.d.buf[0].valid_host;
    reference_gradient(&l, f.m.initial, x, labels, valid, 0, ref);
    for (size_t i = 0; i < n; i++)
        CHECK(ref[i] == 0.0); /* no examples, no gradient */
    reference_gradient(&l, f.m.initial, x, labels, valid, 12, ref);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < n; i++) {
        diff += (gf[i] - ref[i]) * (gf[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    CHECK(norm > 0);
    CHECK(sqrt(diff / norm) < 1e-5);
    fprintf(stderr, "fp32 full batch vs float64 reference: %.3g\n", sqrt(diff / norm));
    free(gw);
    free(gf);
    free(ref);
    teardown(&f);
}

static int valid_counts_differ(const dataset *d, int micro)
{
    int first = -1;
    for (int k = 0; k * micro < d->effective_batch; k++) {
        int c = 0;
        for (int j = k * micro; j < (k + 1) * micro && j < d->effective_batch; j++)
            c += d->buf[0].valid_host[j];
        if (first >= 0 && c != first)
            return 1;
        first = first < 0 ? c : first;
    }
    return 0;
}

static void test_every_split(void)
{
    int batches[] = {16, 10};
    for (int bi = 0; bi < 2; bi++) {
        fixture f;
        setup(&f, batches[bi]);
        for (int micro = 1; micro <= batches[bi]; micro++) {
            double err = window_error(&f, micro, REDUCTION_SUM, NULL, NULL);
            CHECK(err >= 0 && err < 1e-5);
            if (!(err < 1e-5))
                fprintf(stderr, "E=%d micro=%d: %.3g\n", batches[bi], micro, err);
        }
        teardown(&f);
    }
}

static void test_wrong_reductions(void)
{
    fixture f;
    setup(&f, 16);
    CHECK(valid_counts_differ(&f.d, 4)); /* the premise of the demonstration */
    double mom = window_error(&f, 4, REDUCTION_MEAN_OF_MEANS, NULL, NULL);
    double nos = window_error(&f, 4, REDUCTION_NO_SCALE, NULL, NULL);
    fprintf(stderr, "E=16 4x4: mean-of-means %.3g, no-scale %.3g\n", mom, nos);
    CHECK(mom > 1e-2);
    CHECK(nos > 1.0); /* about K - 1 = 3 times too large */
    /* With one micro-batch, both are the right answer. */
    CHECK(window_error(&f, 16, REDUCTION_MEAN_OF_MEANS, NULL, NULL) < 1e-6);
    CHECK(window_error(&f, 16, REDUCTION_NO_SCALE, NULL, NULL) < 1e-6);
    teardown(&f);
}

/* The memory the check took beyond what was held before it, at micro 1 of
 * E 16. */
static size_t check_extra_bytes(fixture *f)
{
    size_t before = f->b->mem_in_use;
    f->b->mem_peak = before;
    double err = window_error(f, 1, REDUCTION_SUM, NULL, NULL);
    CHECK(err >= 0 && err < 1e-5); /* whatever the pieces, the same answer */
    return f->b->mem_peak - before;
}

/* A device whose allocations of `oom_from` bytes and more fail as out of
 * memory, though the arithmetic said they fit (another process's memory,
 * the allocator's rounding). */
static backend_ops oom_ops;
static const backend_ops *real_ops;
static size_t oom_from;
static int alloc_or_oom(backend *b, size_t bytes, void **out)
{
    if (bytes >= oom_from) {
        snprintf(b->error, sizeof b->error, "out of memory (the test's)");
        return BK_OOM;
    }
    return real_ops->alloc(b, bytes, out);
}

/* The reference's pieces: the micro-batch where the device's memory is the
 * host's or capped; on a device of its own (posed here by the CPU backend
 * without its shared-memory capability), as many examples as its free
 * memory holds activations for, up to the whole batch. */
static void test_reference_pieces(void)
{
    fixture f;
    setup(&f, 16);
    const size_t step_acts = activations_bytes(&f.m.spec, STORAGE_F32, 1);
    const size_t all = activations_bytes(&f.m.spec, STORAGE_F32, 16);
    const size_t eight = activations_bytes(&f.m.spec, STORAGE_F32, 8);
    size_t shared = check_extra_bytes(&f); /* the CPU: pieces of the micro-batch */
    CHECK(shared < step_acts + 64);
    f.b->caps &= ~BK_CAP_SHARES_HOST_MEMORY;
    f.b->mem_total = (size_t)1 << 30;
    size_t own = check_extra_bytes(&f);
    CHECK(own >= all); /* one piece of 16 */
    /* Room for 8 examples' activations beside what is held, not for 16. */
    size_t held = f.b->mem_in_use + step_acts + 64;
    f.b->mem_total = (size_t)((double)(held + eight) / MEMORY_FIT_USABLE_SHARE) + 1;
    size_t half = check_extra_bytes(&f);
    CHECK(half >= eight && half < all);
    /* Room by the arithmetic, none in fact: the larger pieces' activations
     * fail, and the check runs in pieces of the micro-batch instead. */
    real_ops = f.b->ops;
    oom_ops = *real_ops;
    oom_ops.alloc = alloc_or_oom;
    oom_from = step_acts + 1; /* no buffer of one example's activations is as large */
    f.b->mem_total = (size_t)1 << 30;
    f.b->ops = &oom_ops;
    CHECK(check_extra_bytes(&f) < all);
    f.b->ops = real_ops;
    /* A --mem-cap: the check stays inside the step's memory. */
    f.b->mem_total = (size_t)1 << 30;
    f.b->mem_cap = (size_t)1 << 29;
    CHECK(check_extra_bytes(&f) == shared);
    f.b->mem_cap = 0;
    teardown(&f);
}

/* A model that reads every micro-batch's labels from the batch's start
 * (the slice's offset dropped): an error that depends on which examples a
 * micro-batch holds. The check sees it on every split of more than one
 * example, one micro-batch included; with the micro-batch's own slices
 * for the reference's pieces it read 1e-8 over it. */
static backend_ops slice_ops;
static const int *batch_labels;
static int xent_from_batch_start(backend *b, storage s, const void *logits, void *dlogits,
                                 const int *labels, const int *valid, const float *scale,
                                 float *loss_sum, int classes, int batch)
{
    (void)labels;
    return real_ops->softmax_xent(b, s, logits, dlogits, batch_labels, valid, scale, loss_sum,
                                  classes, batch);
}

static void test_split_dependent_error(void)
{
    fixture f;
    setup(&f, 16);
    real_ops = f.b->ops;
    slice_ops = *real_ops;
    slice_ops.softmax_xent = xent_from_batch_start;
    batch_labels = f.d.buf[0].labels;
    f.b->ops = &slice_ops;
    for (int micro = 2; micro <= 16; micro *= 2) {
        double err = window_error(&f, micro, REDUCTION_SUM, NULL, NULL);
        CHECK(err > 1e-3);
        if (!(err > 1e-3))
            fprintf(stderr, "E=16 micro=%d: labels from the batch's start read %.3g\n", micro,
                    err);
    }
    f.b->ops = real_ops;
    teardown(&f);
    CHECK(gradcheck_first_piece(4, 4, 16) == 2);  /* shifted by half a micro-batch */
    CHECK(gradcheck_first_piece(16, 16, 16) == 8); /* one micro-batch: two pieces */
    CHECK(gradcheck_first_piece(1, 1, 16) == 1);   /* one example a micro-batch */
    CHECK(gradcheck_first_piece(8, 2, 16) == 8);   /* larger pieces cross them anyway */
}

static void test_relative_error(void)
{
    CHECK(relative_error((float[]){1, 2}, (float[]){1, 2}, 2) == 0.0);
    CHECK(isinf(relative_error((float[]){3, 4}, (float[]){0, 0}, 2)));
}

int main(void)
{
    test_relative_error();
    test_float64_reference();
    test_every_split();
    test_wrong_reductions();
    test_reference_pieces();
    test_split_dependent_error();
    return check_finish("test_gradcheck");
}
