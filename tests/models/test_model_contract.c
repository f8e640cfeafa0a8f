/* The contract every model kind keeps, checked for each row of the model
 * registry at the shape the kind names (test_shape), so that a new kind is
 * tested by its row alone:
 *
 * - its tensors tile the parameter vector: in order, no gap, no overlap,
 *   [0, n_params) exactly, each with a name of its own;
 * - what the model, its data and its activations allocate is its memory
 *   need, to the byte, with either optimizer;
 * - each backward reports its gradient ranges (model_grad_ready) from the
 *   end of the vector down, each ending where the one before began, and
 *   all of it when the kind says it reports them (none when it does not);
 *   a range reported is final: its gradient no longer changes, and the
 *   backward reads none of its weights again (they are NaN from the report
 *   on, and the gradient comes out the same);
 * - the window starts from any gradient left in the buffer (NaN, 1e30):
 *   the gradient is the same, whether the kind writes its first gradient
 *   or has it zeroed;
 * - the accumulated gradient of an uneven window (5 = 2 + 2 + 1, padding
 *   among the loss items) is d(loss)/d(weights) by central differences of
 *   the kind's own forward pass, on every tensor (every element of a small
 *   one, a sample of a large one), and the window's loss is the full
 *   batch's;
 * - flops_per_step is what the window's matrix products do, and the
 *   recomputation's matrix products are what they do beyond it;
 * - all of it under every recompute value the kind says it runs (its
 *   recompute_caps), and the gradient under recomputation is none's;
 * - in bf16 on the CPU too (bf16 activations and weight copy, fp32 master
 *   weights and gradient): the memory need to the byte, the ranges, their
 *   finality (the bf16 copy of a reported range poisoned too), the
 *   garbage start, the FLOPs, and in place of the differences (a loss in
 *   bf16 is too coarse to difference) the gradient against the fp32
 *   gradient proven above, within the dtype's model tolerance, and the
 *   window's loss against the full batch's within its grad tolerance.
 *
 * The differences run on the fp32 backend, so the loss is
 * differenced in fp32 (unit roundoff 6e-8, a loss sum of a few tens): over
 * steps h = 3e-2 and 2h on weights of order 0.2, extrapolated so that the
 * h^2 term cancels, the truncation (~h^4) and the cancellation (~1e-6 / h
 * of the loss sum) leave about 5e-6 per element. A tensor's sampled
 * gradient must match its differences within FD_TOL: the norm of
 * (gradient - differences) over the norm of the differences, that norm
 * taken as at least FD_FLOOR per element, so that a tensor whose gradient
 * is near zero (a key bias under softmax) is not judged on noise alone.
 * The MLP and the GPT come to 1e-4 and 6e-4; a term dropped from a
 * backward reads 1e-1 to 1.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flop_count.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "dispatch.h"
#include "model.h"
#include "registry.h"
#include "rng.h"

enum { EFFECTIVE = 5, MICRO = 2, SAMPLES = 24 };
#define FD_STEP 3e-2
#define FD_TOL 1e-2
#define FD_FLOOR 1e-3
/* Noise added to the kind's starting weights, so that no path starts at
 * an identity or a zero (GPT-2's zero biases and unit gains). */
#define WEIGHT_NOISE 0.2f

static char why[600];

/* A failed check, with the kind and what differed. */
static void expect(const char *kind, int ok, const char *fmt, ...)
{
    check_count++;
    if (ok)
        return;
    check_failures++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ------------------------------------------------------- the kind's shape */

static int spec_of(const model_kind *k, model_spec *s)
{
    expect(k->name, k->test_shape != NULL, "names no test_shape in its kind");
    if (!k->test_shape)
        return -1;
    int rc = model_spec_parse(k->test_shape, s, why, sizeof why);
    expect(k->name, rc == 0, "test_shape '%s' is refused: %s", k->test_shape, why);
    if (rc)
        return -1;
    expect(k->name, s->kind == k, "test_shape '%s' is another kind's", k->test_shape);
    expect(k->name, model_param_count(s) <= 20000,
           "test_shape has %zu parameters; keep it under 20000", model_param_count(s));
    return s->kind == k ? 0 : -1;
}

/* --------------------------------------------------------------- tensors */

static void check_tensors(const model_spec *s)
{
    const char *kn = s->kind->name;
    int n = s->kind->tensors(s, NULL, 0);
    expect(kn, n > 0, "lists no tensors");
    if (n <= 0)
        return;
    model_tensor *t = calloc((size_t)n, sizeof *t);
    expect(kn, s->kind->tensors(s, t, n) == n, "lists a different count when it writes them");
    size_t next = 0;
    for (int i = 0; i < n; i++) {
        expect(kn, t[i].offset == next, "tensor %d '%s' starts at %zu, the one before ends at %zu",
               i, t[i].name, t[i].offset, next);
        expect(kn, t[i].rows >= 1 && t[i].cols >= 1, "tensor '%s' is [%lld x %lld]", t[i].name,
               (long long)t[i].rows, (long long)t[i].cols);
        expect(kn, t[i].name[0] != '\0', "tensor %d has no name", i);
        for (int j = 0; j < i; j++)
            expect(kn, strcmp(t[i].name, t[j].name) != 0, "two tensors are named '%s'",
                   t[i].name);
        next = t[i].offset + (size_t)(t[i].rows * t[i].cols);
    }
    expect(kn, next == model_param_count(s), "the tensors end at %zu of %zu parameters", next,
           model_param_count(s));
    free(t);
}

/* ----------------------------------------------------------- memory need */

static void check_memory(backend *b, const model_spec *s, optimizer_kind opt)
{
    const char *kn = s->kind->name;
    optimizer_config oc = {.kind = opt, .lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f,
                           .eps = 1e-8f};
    input_spec in;
    model_input(s, &in);
    model m;
    dataset d;
    activations a;
    size_t before = b->mem_in_use;
    CHECK(model_create(b, s, &oc, 1, &m) == BK_OK);
    CHECK(dataset_create(b, &in, EFFECTIVE, 2, 3, &d) == BK_OK);
    CHECK(activations_create(&m, MICRO, BK_ALLOC_HELD, &a) == BK_OK);
    memory_need need;
    model_memory_need(&m.spec, b->dtype, opt, MICRO, EFFECTIVE, 2, &need);
    /* The step runner adds the loss sum (test_memory.c steps under the cap). */
    size_t built = need.total - need.loss_sum;
    expect(kn, b->mem_in_use - before == built,
           "%s %s, recompute %s: allocates %zu bytes, its memory need less the loss sum is %zu",
           dtype_name(b->dtype), opt == OPT_SGD ? "sgd" : "adamw", recompute_name(s->recompute),
           b->mem_in_use - before, built);
    expect(kn, a.bytes == need.activations, "activations %zu bytes, need %zu", a.bytes,
           need.activations);
    expect(kn, d.bytes == need.inputs, "inputs %zu bytes, need %zu", d.bytes, need.inputs);
    activations_destroy(&m, &a, BK_ALLOC_HELD);
    dataset_destroy(&d);
    model_destroy(&m);
    expect(kn, b->mem_in_use == before, "%zu bytes left allocated after destroy",
           b->mem_in_use - before);
}

/* ------------------------------------------------------------- a window */

typedef struct fixture {
    const char *kind;
    backend *b;
    model m;
    dataset d;
    activations micro, full; /* one micro-batch's, and the whole window's */
    float *loss;             /* device float: the loss sum */
    float *w;                /* the weights the test runs at (host) */
    size_t n;
    int valid;               /* loss items of the window */
} fixture;

/* What the hook saw of one backward. */
typedef struct range_log {
    fixture *f;
    size_t next;       /* the next range must end here */
    int reports, wrong;
    size_t wrong_off, wrong_count;
    float *at_report;  /* set: keep each range's gradient as reported, and
                        * make its weights NaN */
} range_log;

static int on_range(void *ctx, size_t off, size_t count)
{
    range_log *r = ctx;
    backend *b = r->f->b;
    if (count == 0 || off + count != r->next) {
        if (!r->wrong++)
            r->wrong_off = off, r->wrong_count = count;
        return BK_OK;
    }
    r->next = off;
    r->reports++;
    if (!r->at_report)
        return BK_OK;
    float *nan = malloc(count * sizeof *nan);
    for (size_t i = 0; i < count; i++)
        nan[i] = NAN;
    model *m = &r->f->m;
    int rc = bk_download(b, r->at_report + off, m->grads + off, count * sizeof(float));
    if (!rc)
        rc = bk_upload(b, m->params + off, nan, count * sizeof(float));
    if (!rc && m->params_compute != (void *)m->params) /* the copy the GEMMs read */
        rc = bk_convert(b, m->params + off,
                        (char *)m->params_compute + off * storage_bytes(b->compute_storage),
                        b->compute_storage, count);
    free(nan);
    return rc;
}

/* The ranges one backward reported, against the kind's word. */
static void check_ranges(const fixture *f, const range_log *r, int k)
{
    const model_kind *kind = f->m.spec.kind;
    expect(f->kind, r->wrong == 0,
           "micro-batch %d: range [%zu, %zu) does not end where the one before began (%zu)", k,
           r->wrong_off, r->wrong_off + r->wrong_count, r->next);
    if (kind->reports_grad_ready)
        expect(f->kind, r->next == 0, "micro-batch %d: [0, %zu) of the gradient never reported",
               k, r->next);
    else
        expect(f->kind, r->reports == 0,
               "reports %d gradient ranges but its kind says it reports none", r->reports);
}

/* The window's forward and backward passes, as a step runs them: the
 * gradient into `grad`. With `at_report`, the last backward keeps each
 * range's gradient as reported there and poisons its weights (restored
 * after). */
static int run_window(fixture *f, float *grad, float *loss, float *at_report)
{
    model *m = &f->m;
    int accum = (EFFECTIVE + MICRO - 1) / MICRO, rc = model_start_window(m, f->loss);
    for (int k = 0; k < accum && !rc; k++) {
        micro_batch_view mb = dataset_micro(&f->d, 0, MICRO, k);
        mb.first_of_window = k == 0;
        range_log log = {.f = f, .next = f->n, .at_report = k == accum - 1 ? at_report : NULL};
        if ((rc = model_forward(m, &f->micro, &mb, f->loss)))
            break;
        m->grad_ready = on_range;
        m->grad_ready_ctx = &log;
        rc = model_backward(m, &f->micro, &mb);
        m->grad_ready = NULL;
        m->grad_ready_ctx = NULL;
        check_ranges(f, &log, k);
    }
    if (!rc)
        rc = bk_download(f->b, grad, m->grads, f->n * sizeof(float));
    if (!rc)
        rc = bk_download(f->b, loss, f->loss, sizeof *loss);
    if (!rc && at_report)
        rc = bk_upload(f->b, m->params, f->w, f->n * sizeof(float));
    if (!rc && at_report && m->params_compute != (void *)m->params)
        rc = bk_convert(f->b, m->params, m->params_compute, f->b->compute_storage, f->n);
    return rc;
}

static int fixture_make(fixture *f, backend *b, const model_spec *s)
{
    memset(f, 0, sizeof *f);
    f->kind = s->kind->name;
    f->b = b;
    optimizer_config opt = {.kind = OPT_SGD, .lr = 1e-3f};
    input_spec in;
    model_input(s, &in);
    if (model_create(b, s, &opt, 7, &f->m) || dataset_create(b, &in, EFFECTIVE, 1, 11, &f->d) ||
        dataset_set_split(&f->d, MICRO, REDUCTION_SUM) ||
        activations_create(&f->m, MICRO, BK_ALLOC_HELD, &f->micro) ||
        activations_create(&f->m, EFFECTIVE, BK_ALLOC_HELD, &f->full) ||
        bk_alloc(b, sizeof(float), (void **)&f->loss)) {
        expect(f->kind, 0, "cannot be built at its test shape: %s", b->error);
        return -1;
    }
    /* fp32 on the CPU: the GEMMs read the master weights themselves. */
    CHECK((f->m.params_compute == (void *)f->m.params) == (b->compute_storage == STORAGE_F32));
    f->n = f->m.n_params;
    f->valid = dataset_valid_count(&f->d, 0, 0, EFFECTIVE);
    f->w = malloc(f->n * sizeof *f->w);
    rng r = {1234};
    for (size_t i = 0; i < f->n; i++)
        f->w[i] = f->m.initial[i] + rng_uniform(&r, -WEIGHT_NOISE, WEIGHT_NOISE);
    memcpy(f->m.initial, f->w, f->n * sizeof *f->w);
    return model_reset(&f->m) == BK_OK ? 0 : -1;
}

static void fixture_free(fixture *f)
{
    bk_free(f->b, f->loss, sizeof(float));
    activations_destroy(&f->m, &f->full, BK_ALLOC_HELD);
    activations_destroy(&f->m, &f->micro, BK_ALLOC_HELD);
    dataset_destroy(&f->d);
    model_destroy(&f->m);
    free(f->w);
}

/* ------------------------------------------------ window start, finality */

/* Elements where two gradients differ (NaN differs from everything). */
static size_t count_differ(const float *a, const float *b, size_t n, size_t *first)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(a[i] == b[i]) && !bad++)
            *first = i;
    return bad;
}

static void check_garbage_start(fixture *f, const float *clean)
{
    static const float garbage[] = {NAN, 1e30f};
    float *g = malloc(f->n * sizeof *g), *fill = malloc(f->n * sizeof *fill), loss;
    for (size_t v = 0; v < sizeof garbage / sizeof garbage[0]; v++) {
        for (size_t i = 0; i < f->n; i++)
            fill[i] = garbage[v];
        CHECK(bk_upload(f->b, f->m.grads, fill, f->n * sizeof *fill) == BK_OK);
        CHECK(run_window(f, g, &loss, NULL) == BK_OK);
        size_t first = 0, bad = count_differ(g, clean, f->n, &first);
        expect(f->kind, bad == 0,
               "a window started on %g in the gradient: %zu elements differ (first %zu: %g, "
               "not %g)%s", garbage[v], bad, first, g[first], clean[first],
               f->m.spec.kind->writes_first_gradient ? "; it sets writes_first_gradient" : "");
    }
    free(g), free(fill);
}

static void check_reported_final(fixture *f, const float *clean)
{
    float *g = malloc(f->n * sizeof *g), *kept = malloc(f->n * sizeof *kept), loss;
    memcpy(kept, clean, f->n * sizeof *kept); /* what no range reported keeps */
    CHECK(bk_zero(f->b, f->m.grads, f->n * sizeof(float)) == BK_OK);
    CHECK(run_window(f, g, &loss, kept) == BK_OK);
    size_t first = 0, bad = count_differ(g, clean, f->n, &first);
    expect(f->kind, bad == 0,
           "the last backward read weights it had reported final (NaN from then): %zu "
           "gradient elements differ (first %zu: %g, not %g)", bad, first, g[first],
           clean[first]);
    bad = count_differ(g, kept, f->n, &first);
    expect(f->kind, bad == 0,
           "%zu gradient elements changed after their range was reported final (first %zu)",
           bad, first);
    free(g), free(kept);
}

/* ----------------------------------------------------------------- FLOPs */

/* flops_per_step is what the window's matrix products do: the MFU's
 * numerator. */
static void check_flops(fixture *f)
{
    float *g = malloc(f->n * sizeof *g), loss;
    flop_count fc;
    flop_count_begin(&fc, f->b);
    CHECK(run_window(f, g, &loss, NULL) == BK_OK);
    double gemm_flops = flop_count_end(f->b);
    double want = model_flops_per_step(&f->m.spec, EFFECTIVE);
    double again = model_recompute_gemm_flops(&f->m.spec, EFFECTIVE);
    expect(f->kind, gemm_flops == want + again,
           "recompute %s: flops_per_step(%d) is %.17g and its recomputation's GEMMs %.17g; "
           "the window's GEMMs did %.17g", recompute_name(f->m.spec.recompute), EFFECTIVE,
           want, again, gemm_flops);
    expect(f->kind, (again > 0) == (f->m.spec.recompute == RECOMPUTE_BLOCK),
           "recompute %s: its recomputation's GEMMs are %.17g FLOPs",
           recompute_name(f->m.spec.recompute), again);
    expect(f->kind, (model_recompute_flops(&f->m.spec, EFFECTIVE) > 0) ==
                        (f->m.spec.recompute != RECOMPUTE_NONE),
           "recompute %s: the recomputation counts %.17g FLOPs",
           recompute_name(f->m.spec.recompute), model_recompute_flops(&f->m.spec, EFFECTIVE));
    free(g);
}

/* ------------------------------------------------- central differences */

/* The window's loss (the sum of its valid items') at the device weights,
 * in one forward pass over the whole window. */
static double loss_at(fixture *f)
{
    micro_batch_view mb = dataset_full_batch(&f->d, 0, MICRO);
    float loss = NAN;
    if (bk_zero(f->b, f->loss, sizeof(float)) || model_forward(&f->m, &f->full, &mb, f->loss) ||
        bk_download(f->b, &loss, f->loss, sizeof loss))
        expect(f->kind, 0, "forward over the window failed: %s", f->b->error);
    return loss;
}

static void set_weight(fixture *f, size_t i, float v)
{
    CHECK(bk_upload(f->b, f->m.params + i, &v, sizeof v) == BK_OK);
}

/* d(loss / valid)/d(w_i) by central differences over steps h and 2h (as
 * fp32 rounds them), extrapolated (Richardson): (4 D(h) - D(2h)) / 3
 * cancels the h^2 term, which lets h be large enough that fp32's
 * cancellation stays small. */
static double central(fixture *f, size_t i, double h)
{
    float keep = f->w[i], up = keep + (float)h, down = keep - (float)h;
    set_weight(f, i, up);
    double l_up = loss_at(f);
    set_weight(f, i, down);
    double l_down = loss_at(f);
    set_weight(f, i, keep);
    return (l_up - l_down) / ((double)up - (double)down) / f->valid;
}

static double difference(fixture *f, size_t i)
{
    return (4 * central(f, i, FD_STEP) - central(f, i, 2 * FD_STEP)) / 3;
}

/* Every element of a small tensor, SAMPLES distinct ones of a large one. */
static int pick_elements(const model_tensor *t, rng *r, size_t *at)
{
    size_t size = (size_t)(t->rows * t->cols);
    if (size <= SAMPLES) {
        for (size_t i = 0; i < size; i++)
            at[i] = t->offset + i;
        return (int)size;
    }
    for (int n = 0; n < SAMPLES;) {
        size_t i = t->offset + (size_t)rng_below(r, (int)size);
        int seen = 0;
        for (int j = 0; j < n; j++)
            seen |= at[j] == i;
        if (!seen)
            at[n++] = i;
    }
    return SAMPLES;
}

/* Returns the tensor's relative error. */
static double check_tensor(fixture *f, const model_tensor *t, const float *grad, rng *r)
{
    size_t at[SAMPLES];
    int n = pick_elements(t, r, at);
    double num = 0, den = 0, worst = 0, worst_fd = 0;
    size_t worst_at = t->offset;
    for (int j = 0; j < n; j++) {
        double fd = difference(f, at[j]), diff = grad[at[j]] - fd;
        num += diff * diff;
        den += fd * fd;
        if (!(fabs(diff) <= worst))
            worst = fabs(diff), worst_at = at[j], worst_fd = fd;
    }
    double err = sqrt(num) / fmax(sqrt(den), FD_FLOOR * sqrt((double)n));
    expect(f->kind, err <= FD_TOL,
           "gradient of '%s' against central differences: relative error %.3g over %d "
           "elements (worst at %zu: %.6g, differences %.6g)", t->name, err, n, worst_at,
           grad[worst_at], worst_fd);
    return err;
}

static void check_differences(fixture *f, const float *grad)
{
    const model_spec *s = &f->m.spec;
    int n = s->kind->tensors(s, NULL, 0);
    model_tensor *t = calloc((size_t)n, sizeof *t);
    s->kind->tensors(s, t, n);
    rng r = {99};
    double worst = 0;
    for (int i = 0; i < n; i++)
        worst = fmax(worst, check_tensor(f, &t[i], grad, &r));
    fprintf(stderr, "  %s (%s): %d tensors against central differences, worst relative "
            "error %.2g\n", f->kind, s->name, n, worst);
    free(t);
}

/* ------------------------------------------------------------ per kind */

/* The gradient under recomputation against none's: the same arithmetic
 * on the same values, so within rounding (the CPU's gives the same bits). */
static void check_same_gradient(const fixture *f, const float *g, const float *none)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < f->n; i++) {
        double d = (double)g[i] - none[i];
        num += d * d;
        den += (double)none[i] * none[i];
    }
    double err = sqrt(num / fmax(den, 1e-30));
    expect(f->kind, err <= 1e-6, "recompute %s: the gradient differs from none's by %.3g",
           recompute_name(f->m.spec.recompute), err);
}

/* Everything above at one recompute value; `none` holds none's gradient
 * (written when r is none, compared with otherwise). */
static void check_recompute(backend *b, model_spec s, recompute r, float *none)
{
    const char *kn = s.kind->name;
    s.recompute = r;
    check_memory(b, &s, OPT_SGD);
    check_memory(b, &s, OPT_ADAMW);
    fixture f;
    if (fixture_make(&f, b, &s) == 0) {
        float *clean = malloc(f.n * sizeof *clean), loss;
        CHECK(bk_zero(b, f.m.grads, f.n * sizeof(float)) == BK_OK);
        CHECK(run_window(&f, clean, &loss, NULL) == BK_OK);
        double full = loss_at(&f);
        expect(kn, fabs(loss - full) <= 1e-5 * fabs(full),
               "recompute %s: the window's loss sum %.9g, the full batch's %.9g",
               recompute_name(r), loss, full);
        if (r == RECOMPUTE_NONE)
            memcpy(none, clean, f.n * sizeof *clean);
        else
            check_same_gradient(&f, clean, none);
        check_garbage_start(&f, clean);
        check_reported_final(&f, clean);
        check_flops(&f);
        fprintf(stderr, "  recompute %s:\n", recompute_name(r));
        check_differences(&f, clean);
        free(clean);
    }
    fixture_free(&f);
    expect(kn, b->mem_in_use == 0, "%zu bytes left allocated", b->mem_in_use);
}

/* The bf16 window at one recompute value against fp32's gradient
 * (`none`, proven against the differences), as the run's gradient check
 * and gpu-check hold bf16 to its row of the dtype table. */
static void check_recompute_bf16(backend *b, model_spec s, recompute r, const float *none)
{
    const char *kn = s.kind->name;
    const dtype_info *dt = dtype_info_of(b->dtype);
    s.recompute = r;
    check_memory(b, &s, OPT_SGD);
    check_memory(b, &s, OPT_ADAMW);
    fixture f;
    if (fixture_make(&f, b, &s) == 0) {
        float *g = malloc(f.n * sizeof *g), loss;
        CHECK(bk_zero(b, f.m.grads, f.n * sizeof(float)) == BK_OK);
        CHECK(run_window(&f, g, &loss, NULL) == BK_OK);
        double full = loss_at(&f);
        expect(kn, fabs(loss - full) <= dt->grad_tolerance * fabs(full),
               "bf16, recompute %s: the window's loss sum %.9g, the full batch's %.9g",
               recompute_name(r), loss, full);
        double num = 0, den = 0;
        for (size_t i = 0; i < f.n; i++) {
            double d = (double)g[i] - none[i];
            num += d * d;
            den += (double)none[i] * none[i];
        }
        double err = sqrt(num / fmax(den, 1e-30));
        expect(kn, err <= dt->model_tolerance,
               "bf16, recompute %s: the gradient differs from fp32's by %.3g (tolerance %g)",
               recompute_name(r), err, dt->model_tolerance);
        fprintf(stderr, "  %s (%s) bf16, recompute %s: the gradient %.2g from fp32's\n", kn,
                s.name, recompute_name(r), err);
        check_garbage_start(&f, g);
        check_reported_final(&f, g);
        check_flops(&f);
        free(g);
    }
    fixture_free(&f);
    expect(kn, b->mem_in_use == 0, "%zu bytes left allocated", b->mem_in_use);
}

static void check_kind(backend *b, backend *b16, const model_kind *k)
{
    model_spec s;
    if (spec_of(k, &s))
        return;
    check_tensors(&s);
    float *none = calloc(model_param_count(&s), sizeof *none);
    for (recompute r = 0; r < recompute_axis.count; r++)
        if (r == RECOMPUTE_NONE || (k->recompute_caps & RECOMPUTE_BIT(r)))
            check_recompute(b, s, r, none);
    for (recompute r = 0; r < recompute_axis.count; r++)
        if (r == RECOMPUTE_NONE || (k->recompute_caps & RECOMPUTE_BIT(r)))
            check_recompute_bf16(b16, s, r, none);
    free(none);
}

int main(void)
{
    backend *b, *b16;
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    CHECK(cpu_backend_create(DTYPE_BF16, &b16, why, sizeof why) == BK_OK);
    if (!b || !b16)
        return check_finish("test_model_contract");
    int n;
    const model_kind *const *kinds = model_kinds(&n);
    CHECK(n >= 1);
    for (int i = 0; i < n; i++)
        check_kind(b, b16, kinds[i]);
    b->ops->destroy(b);
    b16->ops->destroy(b16);
    return check_finish("test_model_contract");
}
