/* gpu-check: the CUDA backend against the CPU reference.
 *
 *   gpu-check [--dtype LIST] [--csv FILE] [--device cuda|cpu] [--seed N]
 *
 * For each dtype, op by op on fresh random inputs (the GEMM in every
 * transpose, bias+GELU, GELU backward, the bias gradient, softmax
 * cross-entropy, AdamW, SGD, the bf16 conversion), then the model: one
 * forward and backward, and one accumulated window at several splits,
 * against the CPU's full-batch gradient; then the execution modes (sync,
 * graph, alloc, alloc-async) against async on the device itself, and the
 * memory probe through a real out-of-memory failure.
 *
 * Inputs are rounded to the device's storage first, so both sides compute
 * on the same numbers; the CPU computes in fp32. The error is the relative
 * L2 error ||device - cpu|| / ||cpu||; NaN never passes. Tolerances by
 * dtype: fp32 1e-5, tf32 1e-3, bf16 1e-2 for single ops; the model's
 * gradients pass through every layer twice, so tf32 and bf16 get three times
 * as much there.
 *
 * `--device cpu` checks a second CPU backend against the first (fp32 only):
 * the checking code itself, on a machine without a GPU.
 *
 * Exit status: 0 all passed, 1 a check failed, 2 no usable device or bad
 * usage. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "dataset.h"
#include "dispatch.h"
#include "gradcheck.h"
#include "model.h"
#include "names.h"
#include "probe.h"
#include "rng.h"
#include "step.h"

/* ------------------------------------------------------------ results */

typedef struct check_result {
    char check[48], dtype[8], split[24];
    double error, tolerance;
    int passed;
    char note[200];
} check_result;

#define MAX_RESULTS 256
static check_result results[MAX_RESULTS];
static int n_results;

static double op_tolerance(dtype d)
{
    return d == DTYPE_BF16 ? 1e-2 : d == DTYPE_TF32 ? 1e-3 : 1e-5;
}

static double model_tolerance(dtype d)
{
    return d == DTYPE_FP32 ? 1e-5 : 3 * op_tolerance(d);
}

static void record(const char *check, dtype d, const char *split, double error,
                   double tolerance, const char *note)
{
    if (n_results == MAX_RESULTS)
        return;
    check_result *r = &results[n_results++];
    snprintf(r->check, sizeof r->check, "%s", check);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype_name(d));
    snprintf(r->split, sizeof r->split, "%s", split ? split : "");
    r->error = error;
    r->tolerance = tolerance;
    r->passed = error <= tolerance; /* NaN compares false */
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    printf("%-4s %-22s %-5s %-8s error %-10.3g tol %-7.0e %s\n", r->passed ? "ok" : "FAIL",
           r->check, r->dtype, r->split, error, tolerance, r->note);
    fflush(stdout);
}

/* A check that could not run: the backend said why. */
static void record_failure(const char *check, dtype d, const char *split, const backend *b)
{
    record(check, d, split, NAN, 0, b->error);
}

/* Relative L2 error, NaN when either side has a NaN. */
static double rel_err(const float *got, const float *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(got[i]) || isnan(want[i]))
            return NAN;
    return relative_error(got, want, n);
}

/* ------------------------------------------------------------ buffers */

/* Device buffers of one check, freed together. */
#define ARENA_MAX 16
typedef struct arena {
    backend *b;
    int n;
    void *p[ARENA_MAX];
    size_t bytes[ARENA_MAX];
} arena;

static int arena_alloc(arena *a, size_t bytes, void **out)
{
    *out = NULL;
    if (a->n == ARENA_MAX) {
        snprintf(a->b->error, sizeof a->b->error, "gpu-check: arena full");
        return BK_ERROR;
    }
    int rc = bk_alloc(a->b, bytes, out);
    if (rc == BK_OK) {
        a->p[a->n] = *out;
        a->bytes[a->n++] = bytes;
    }
    return rc;
}

static void arena_free(arena *a)
{
    for (int i = a->n - 1; i >= 0; i--)
        bk_free(a->b, a->p[i], a->bytes[i]);
    a->n = 0;
}

/* A device buffer holding host[0..n) in storage s. */
static int put(arena *a, storage s, const float *host, size_t n, void **out)
{
    int rc = arena_alloc(a, n * storage_bytes(s), out);
    if (rc)
        return rc;
    if (s == STORAGE_F32)
        return bk_upload(a->b, *out, host, n * sizeof(float));
    unsigned short *bits = malloc(n * sizeof *bits);
    if (!bits) {
        snprintf(a->b->error, sizeof a->b->error, "gpu-check: out of host memory");
        return BK_OOM;
    }
    for (size_t i = 0; i < n; i++)
        bits[i] = ew_f32_to_bf16_bits(host[i]);
    rc = bk_upload(a->b, *out, bits, n * sizeof *bits);
    if (!rc)
        rc = a->b->ops->sync(a->b); /* bits must outlive the copy */
    free(bits);
    return rc;
}

/* host[0..n) = the device buffer in storage s, widened to fp32. */
static int get(backend *b, storage s, const void *dev, size_t n, float *host)
{
    if (s == STORAGE_F32)
        return bk_download(b, host, dev, n * sizeof(float));
    unsigned short *bits = malloc(n * sizeof *bits);
    if (!bits) {
        snprintf(b->error, sizeof b->error, "gpu-check: out of host memory");
        return BK_OOM;
    }
    int rc = bk_download(b, bits, dev, n * sizeof *bits);
    for (size_t i = 0; !rc && i < n; i++)
        host[i] = ew_bf16_bits_to_f32(bits[i]);
    free(bits);
    return rc;
}

/* n random values in [lo, hi), rounded to storage s (so both sides start
 * from the same numbers). */
static float *random_values(rng *r, size_t n, float lo, float hi, storage s)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        v[i] = rng_uniform(r, lo, hi);
        if (s == STORAGE_BF16)
            v[i] = ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(v[i]));
    }
    return v;
}

/* The two sides of an op check: the CPU reference and the device. */
typedef struct sides {
    backend *cpu, *dev;
    dtype dt;
    storage s; /* the device's compute storage */
    rng r;
} sides;

/* Runs `call` on side b; on failure records the check as failed and jumps
 * to the check's cleanup. */
#define TRY(b, check, call)                                                   \
    do {                                                                      \
        if ((call) != BK_OK) {                                                \
            record_failure(check, x->dt, split, (b));                         \
            goto done;                                                        \
        }                                                                     \
    } while (0)

/* --------------------------------------------------------------- GEMM */

/* C = alpha op(A) op(B) + beta C in every transpose. A and B start one
 * element past an aligned address when `offset` (the plan cache keys on
 * alignment). With c_f32 the output is fp32 and beta = 1 (the weight
 * gradient's accumulation), else it is in the compute storage. */
static void check_gemm(sides *x, int ta, int tb, int m, int n, int k, int offset, int c_f32)
{
    char check[48], split[24] = "";
    snprintf(check, sizeof check, "gemm %c%c %s%s", ta ? 'T' : 'N', tb ? 'T' : 'N',
             c_f32 ? "acc-f32" : "out", offset ? " +1" : "");
    snprintf(split, sizeof split, "%dx%dx%d", m, n, k);
    storage cs = c_f32 ? STORAGE_F32 : x->s;
    int lda = ta ? k : m, ldb = tb ? n : k;
    size_t na = (size_t)lda * (ta ? m : k) + 1, nb = (size_t)ldb * (tb ? k : n) + 1;
    size_t nc = (size_t)m * n;
    float *ha = random_values(&x->r, na, -1, 1, x->s), *hb = random_values(&x->r, nb, -1, 1, x->s);
    float *hc = random_values(&x->r, nc, -1, 1, cs);
    float *want = malloc(nc * sizeof *want), *got = malloc(nc * sizeof *got);
    arena ac = {.b = x->cpu}, ad = {.b = x->dev};
    if (!ha || !hb || !hc || !want || !got) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    void *ca, *cb, *cc, *da, *db, *dc;
    TRY(x->cpu, check, put(&ac, STORAGE_F32, ha, na, &ca));
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hb, nb, &cb));
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hc, nc, &cc));
    TRY(x->dev, check, put(&ad, x->s, ha, na, &da));
    TRY(x->dev, check, put(&ad, x->s, hb, nb, &db));
    TRY(x->dev, check, put(&ad, cs, hc, nc, &dc));
    float beta = c_f32 ? 1.0f : 0.0f;
    gemm_desc g = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 0.75f,
                   .lda = lda, .ldb = ldb, .beta = beta, .ldc = m};
    g.a = (float *)ca + offset;
    g.b = (float *)cb + offset;
    g.c = cc;
    g.ab_storage = g.c_storage = STORAGE_F32;
    TRY(x->cpu, check, bk_gemm(x->cpu, &g));
    g.a = (char *)da + offset * storage_bytes(x->s);
    g.b = (char *)db + offset * storage_bytes(x->s);
    g.c = dc;
    g.ab_storage = x->s;
    g.c_storage = cs;
    TRY(x->dev, check, bk_gemm(x->dev, &g));
    TRY(x->cpu, check, get(x->cpu, STORAGE_F32, cc, nc, want));
    TRY(x->dev, check, get(x->dev, cs, dc, nc, got));
    record(check, x->dt, split, rel_err(got, want, nc), op_tolerance(x->dt), NULL);
done:
    arena_free(&ac);
    arena_free(&ad);
    free(ha);
    free(hb);
    free(hc);
    free(want);
    free(got);
}

/* ------------------------------------------------------ element-wise */

static void check_bias_gelu(sides *x, int rows, int cols, int gelu)
{
    const char *check = gelu ? "bias_gelu_forward" : "bias_forward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", rows, cols);
    size_t n = (size_t)rows * cols;
    float *hz = random_values(&x->r, n, -4, 4, x->s);
    float *hb = random_values(&x->r, (size_t)rows, -1, 1, STORAGE_F32);
    float *wz = malloc(n * sizeof(float)), *wh = malloc(n * sizeof(float));
    float *gz = malloc(n * sizeof(float)), *gh = malloc(n * sizeof(float));
    arena ac = {.b = x->cpu}, ad = {.b = x->dev};
    if (!hz || !hb || !wz || !wh || !gz || !gh) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    void *cz, *cb, *ch = NULL, *dz, *db, *dh = NULL;
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hz, n, &cz));
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hb, (size_t)rows, &cb));
    TRY(x->dev, check, put(&ad, x->s, hz, n, &dz));
    TRY(x->dev, check, put(&ad, STORAGE_F32, hb, (size_t)rows, &db));
    if (gelu) {
        TRY(x->cpu, check, arena_alloc(&ac, n * sizeof(float), &ch));
        TRY(x->dev, check, arena_alloc(&ad, n * storage_bytes(x->s), &dh));
    }
    TRY(x->cpu, check, x->cpu->ops->bias_gelu_forward(x->cpu, STORAGE_F32, cz, cb, ch, rows,
                                                      cols, gelu));
    TRY(x->dev, check, bk_bias_gelu_forward(x->dev, dz, db, dh, rows, cols, gelu));
    TRY(x->cpu, check, get(x->cpu, STORAGE_F32, cz, n, wz));
    TRY(x->dev, check, get(x->dev, x->s, dz, n, gz));
    double err = rel_err(gz, wz, n);
    if (gelu) {
        TRY(x->cpu, check, get(x->cpu, STORAGE_F32, ch, n, wh));
        TRY(x->dev, check, get(x->dev, x->s, dh, n, gh));
        double e2 = rel_err(gh, wh, n);
        err = isnan(e2) || e2 > err ? e2 : err;
    }
    record(check, x->dt, split, err, op_tolerance(x->dt), NULL);
done:
    arena_free(&ac);
    arena_free(&ad);
    free(hz);
    free(hb);
    free(wz);
    free(wh);
    free(gz);
    free(gh);
}

/* dz = dh * gelu'(z), into a separate buffer or in place over dh. */
static void check_gelu_backward(sides *x, size_t n, int in_place)
{
    const char *check = in_place ? "gelu_backward in-place" : "gelu_backward";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    float *hz = random_values(&x->r, n, -4, 4, x->s), *hd = random_values(&x->r, n, -1, 1, x->s);
    float *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    arena ac = {.b = x->cpu}, ad = {.b = x->dev};
    if (!hz || !hd || !want || !got) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    void *cz, *cd, *co, *dz, *dd, *dout;
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hz, n, &cz));
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hd, n, &cd));
    TRY(x->dev, check, put(&ad, x->s, hz, n, &dz));
    TRY(x->dev, check, put(&ad, x->s, hd, n, &dd));
    co = cd;
    dout = dd;
    if (!in_place) {
        TRY(x->cpu, check, arena_alloc(&ac, n * sizeof(float), &co));
        TRY(x->dev, check, arena_alloc(&ad, n * storage_bytes(x->s), &dout));
    }
    TRY(x->cpu, check, x->cpu->ops->gelu_backward(x->cpu, STORAGE_F32, cz, cd, co, n));
    TRY(x->dev, check, bk_gelu_backward(x->dev, dz, dd, dout, n));
    TRY(x->cpu, check, get(x->cpu, STORAGE_F32, co, n, want));
    TRY(x->dev, check, get(x->dev, x->s, dout, n, got));
    record(check, x->dt, split, rel_err(got, want, n), op_tolerance(x->dt), NULL);
done:
    arena_free(&ac);
    arena_free(&ad);
    free(hz);
    free(hd);
    free(want);
    free(got);
}

/* db += row sums of dz, onto a db that already holds values. */
static void check_bias_grad(sides *x, int rows, int cols)
{
    const char *check = "bias_grad";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", rows, cols);
    size_t n = (size_t)rows * cols;
    float *hd = random_values(&x->r, n, -1, 1, x->s);
    float *hb = random_values(&x->r, (size_t)rows, -1, 1, STORAGE_F32);
    float *want = malloc((size_t)rows * sizeof(float)), *got = malloc((size_t)rows * sizeof(float));
    arena ac = {.b = x->cpu}, ad = {.b = x->dev};
    if (!hd || !hb || !want || !got) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    void *cd, *cb, *dd, *db;
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hd, n, &cd));
    TRY(x->cpu, check, put(&ac, STORAGE_F32, hb, (size_t)rows, &cb));
    TRY(x->dev, check, put(&ad, x->s, hd, n, &dd));
    TRY(x->dev, check, put(&ad, STORAGE_F32, hb, (size_t)rows, &db));
    TRY(x->cpu, check, x->cpu->ops->bias_grad_accumulate(x->cpu, STORAGE_F32, cd, cb, rows, cols));
    TRY(x->dev, check, bk_bias_grad(x->dev, dd, db, rows, cols));
    TRY(x->cpu, check, get(x->cpu, STORAGE_F32, cb, (size_t)rows, want));
    TRY(x->dev, check, get(x->dev, STORAGE_F32, db, (size_t)rows, got));
    /* Sums in fp32 in another order: the op tolerance of fp32 at least. */
    record(check, x->dt, split, rel_err(got, want, (size_t)rows), op_tolerance(x->dt), NULL);
done:
    arena_free(&ac);
    arena_free(&ad);
    free(hd);
    free(hb);
    free(want);
    free(got);
}

/* Gradients and the loss sum (added onto a non-zero sum) over a batch with
 * some examples invalid. */
static void check_softmax_xent(sides *x, int classes, int batch)
{
    const char *check = "softmax_xent";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", classes, batch);
    size_t n = (size_t)classes * batch;
    float *hl = random_values(&x->r, n, -6, 6, x->s);
    float *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    int *labels = malloc((size_t)batch * sizeof(int)), *valid = malloc((size_t)batch * sizeof(int));
    arena ac = {.b = x->cpu}, ad = {.b = x->dev};
    if (!hl || !want || !got || !labels || !valid) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    int n_valid = 0;
    for (int j = 0; j < batch; j++) {
        labels[j] = rng_below(&x->r, classes);
        valid[j] = rng_below(&x->r, 4) != 0;
        n_valid += valid[j];
    }
    float scale = n_valid ? 1.0f / (float)n_valid : 0.0f, loss0 = 0.5f;
    void *cl, *cdl, *clab, *cval, *csc, *closs, *dl, *ddl, *dlab, *dval, *dsc, *dloss;
    backend *sidesb[2] = {x->cpu, x->dev};
    arena *ar[2] = {&ac, &ad};
    storage st[2] = {STORAGE_F32, x->s};
    void **bufs[2][6] = {{&cl, &cdl, &clab, &cval, &csc, &closs},
                         {&dl, &ddl, &dlab, &dval, &dsc, &dloss}};
    for (int side = 0; side < 2; side++) {
        backend *b = sidesb[side];
        TRY(b, check, put(ar[side], st[side], hl, n, bufs[side][0]));
        TRY(b, check, arena_alloc(ar[side], n * storage_bytes(st[side]), bufs[side][1]));
        TRY(b, check, arena_alloc(ar[side], (size_t)batch * sizeof(int), bufs[side][2]));
        TRY(b, check, arena_alloc(ar[side], (size_t)batch * sizeof(int), bufs[side][3]));
        TRY(b, check, put(ar[side], STORAGE_F32, &scale, 1, bufs[side][4]));
        TRY(b, check, put(ar[side], STORAGE_F32, &loss0, 1, bufs[side][5]));
        TRY(b, check, bk_upload(b, *bufs[side][2], labels, (size_t)batch * sizeof(int)));
        TRY(b, check, bk_upload(b, *bufs[side][3], valid, (size_t)batch * sizeof(int)));
    }
    TRY(x->cpu, check, x->cpu->ops->softmax_xent(x->cpu, STORAGE_F32, cl, cdl, clab, cval, csc,
                                                 closs, classes, batch));
    TRY(x->dev, check, bk_softmax_xent(x->dev, dl, ddl, dlab, dval, dsc, dloss, classes, batch));
    TRY(x->cpu, check, get(x->cpu, STORAGE_F32, cdl, n, want));
    TRY(x->dev, check, get(x->dev, x->s, ddl, n, got));
    float loss_want, loss_got;
    TRY(x->cpu, check, get(x->cpu, STORAGE_F32, closs, 1, &loss_want));
    TRY(x->dev, check, get(x->dev, STORAGE_F32, dloss, 1, &loss_got));
    record(check, x->dt, split, rel_err(got, want, n), op_tolerance(x->dt), "gradient");
    record("softmax_xent loss", x->dt, split, rel_err(&loss_got, &loss_want, 1),
           op_tolerance(x->dt), NULL);
done:
    arena_free(&ac);
    arena_free(&ad);
    free(hl);
    free(want);
    free(got);
    free(labels);
    free(valid);
}

/* Two optimizer steps on fp32 weights, gradients and state. */
static void check_optimizer(sides *x, size_t n, int adamw)
{
    const char *check = adamw ? "adamw" : "sgd";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    float *hw = random_values(&x->r, n, -1, 1, STORAGE_F32);
    float *hg = random_values(&x->r, n, -1, 1, STORAGE_F32);
    float *hm = random_values(&x->r, n, -0.1f, 0.1f, STORAGE_F32);
    float *hv = random_values(&x->r, n, 0, 0.01f, STORAGE_F32);
    float *want = malloc(3 * n * sizeof(float)), *got = malloc(3 * n * sizeof(float));
    arena ac = {.b = x->cpu}, ad = {.b = x->dev};
    if (!hw || !hg || !hm || !hv || !want || !got) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    adamw_hparams h = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                       .weight_decay = 0.01f, .bias_correction1 = 0.19f,
                       .bias_correction2 = 0.001999f};
    backend *sb[2] = {x->cpu, x->dev};
    arena *ar[2] = {&ac, &ad};
    float *out[2] = {want, got};
    for (int side = 0; side < 2; side++) {
        backend *b = sb[side];
        void *w, *g, *m, *v, *hp;
        TRY(b, check, put(ar[side], STORAGE_F32, hw, n, &w));
        TRY(b, check, put(ar[side], STORAGE_F32, hg, n, &g));
        TRY(b, check, put(ar[side], STORAGE_F32, hm, n, &m));
        TRY(b, check, put(ar[side], STORAGE_F32, hv, n, &v));
        TRY(b, check, arena_alloc(ar[side], sizeof h, &hp));
        TRY(b, check, bk_upload(b, hp, &h, sizeof h));
        for (int step = 0; step < 2; step++) {
            if (adamw)
                TRY(b, check, bk_adamw(b, w, g, m, v, n, hp));
            else
                TRY(b, check, bk_sgd(b, w, g, n, 0.05f, 0.01f));
        }
        TRY(b, check, get(b, STORAGE_F32, w, n, out[side]));
        TRY(b, check, get(b, STORAGE_F32, m, n, out[side] + n));
        TRY(b, check, get(b, STORAGE_F32, v, n, out[side] + 2 * n));
    }
    /* The optimizer is fp32 in every dtype. */
    record(check, x->dt, split, rel_err(got, want, 3 * n), op_tolerance(DTYPE_FP32), NULL);
done:
    arena_free(&ac);
    arena_free(&ad);
    free(hw);
    free(hg);
    free(hm);
    free(hv);
    free(want);
    free(got);
}

/* convert (fp32 -> compute storage) then to_f32 back: exactly the host's
 * round-to-nearest-even, NaN kept NaN. */
static void check_convert(sides *x, size_t n)
{
    const char *check = "convert+to_f32";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    float *h = random_values(&x->r, n, -3e4f, 3e4f, STORAGE_F32);
    float *want = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    arena ad = {.b = x->dev};
    if (!h || !want || !got) {
        record(check, x->dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    h[0] = NAN;
    h[1] = INFINITY;
    for (size_t i = 0; i < n; i++)
        want[i] = x->s == STORAGE_BF16 ? ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(h[i])) : h[i];
    void *src, *mid, *back;
    TRY(x->dev, check, put(&ad, STORAGE_F32, h, n, &src));
    TRY(x->dev, check, arena_alloc(&ad, n * storage_bytes(x->s), &mid));
    TRY(x->dev, check, arena_alloc(&ad, n * sizeof(float), &back));
    TRY(x->dev, check, bk_convert(x->dev, src, mid, x->s, n));
    TRY(x->dev, check, x->dev->ops->to_f32(x->dev, mid, x->s, back, n));
    TRY(x->dev, check, get(x->dev, STORAGE_F32, back, n, got));
    size_t mismatches = !isnan(got[0]);
    for (size_t i = 1; i < n; i++)
        mismatches += memcmp(&got[i], &want[i], sizeof(float)) != 0;
    char note[64];
    snprintf(note, sizeof note, "%zu values differ bit for bit", mismatches);
    record(check, x->dt, split, (double)mismatches, 0, note);
done:
    arena_free(&ad);
    free(h);
    free(want);
    free(got);
}

static void check_ops(sides *x)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            check_gemm(x, ta, tb, 67, 45, 129, 0, 0);
            check_gemm(x, ta, tb, 256, 96, 512, 0, 1);
        }
    check_gemm(x, 0, 0, 512, 64, 1024, 1, 0); /* misaligned operands */
    check_gemm(x, 0, 1, 1024, 1024, 24, 0, 1); /* a weight gradient at a small micro-batch */
    check_bias_gelu(x, 300, 77, 1);
    check_bias_gelu(x, 1024, 256, 1);
    check_bias_gelu(x, 1000, 33, 0);
    check_gelu_backward(x, 100003, 0);
    check_gelu_backward(x, 4096, 1);
    check_bias_grad(x, 300, 77);
    check_bias_grad(x, 1024, 4096); /* the two-pass path */
    check_bias_grad(x, 40000, 3);
    check_softmax_xent(x, 1000, 77);
    check_softmax_xent(x, 16, 300);
    check_softmax_xent(x, 1024, 1);
    check_optimizer(x, 100003, 1);
    check_optimizer(x, 100003, 0);
    check_convert(x, 100003);
}

/* -------------------------------------------------------------- model */

#define MODEL_PRESET "S"
#define MODEL_EFFECTIVE 32
#define MODEL_SEED 7

/* A model with its data on one backend. */
typedef struct bench {
    model m;
    dataset d;
    int ready;
} bench;

static int bench_open(backend *b, optimizer_kind opt, int buffers, bench *x)
{
    memset(x, 0, sizeof *x);
    optimizer_config oc = {.kind = opt, .lr = opt == OPT_SGD ? 0.05f : 1e-3f, .beta1 = 0.9f,
                           .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    int rc = model_create(b, model_preset_find(MODEL_PRESET), &oc, MODEL_SEED, &x->m);
    if (rc)
        return rc;
    rc = dataset_create(b, &x->m.layout, MODEL_EFFECTIVE, buffers, MODEL_SEED, &x->d);
    if (rc) {
        model_destroy(&x->m);
        return rc;
    }
    x->ready = 1;
    return BK_OK;
}

static void bench_close(bench *x)
{
    if (!x->ready)
        return;
    dataset_destroy(&x->d);
    model_destroy(&x->m);
    x->ready = 0;
}

/* The window's gradient and loss at one split, from the starting weights. */
static int window_gradient(bench *x, int micro, float *grads, float *loss)
{
    backend *b = x->m.b;
    split sp;
    char why[200];
    if (split_make(MODEL_EFFECTIVE, micro, 1, &sp, why, sizeof why)) {
        snprintf(b->error, sizeof b->error, "%s", why);
        return BK_ERROR;
    }
    step_runner s;
    int rc = model_reset(&x->m);
    if (!rc)
        rc = step_runner_init(&s, &x->m, &x->d, &sp, MODE_ASYNC, REDUCTION_SUM);
    if (rc)
        return rc;
    rc = step_window(&s, 0);
    if (!rc)
        rc = bk_download(b, grads, x->m.grads, x->m.layout.n_params * sizeof(float));
    if (!rc)
        rc = bk_download(b, loss, s.loss_sum, sizeof *loss);
    step_runner_free(&s);
    return rc;
}

/* One forward and backward (E x 1) and accumulated windows at several
 * splits, the last uneven, each against the CPU's full-batch gradient. */
static void check_model(backend *dev, dtype dt, const float *ref_grads, float ref_loss,
                        size_t n_params)
{
    static const int micros[] = {MODEL_EFFECTIVE, 16, 8, 5, 1};
    float *g = malloc(n_params * sizeof *g);
    bench x;
    if (!g) {
        record("model", dt, "", NAN, 0, "out of host memory");
        return;
    }
    if (bench_open(dev, OPT_ADAMW, 1, &x)) {
        record_failure("model", dt, "", dev);
        free(g);
        return;
    }
    for (size_t i = 0; i < sizeof micros / sizeof micros[0]; i++) {
        char split[24];
        int accum = (MODEL_EFFECTIVE + micros[i] - 1) / micros[i];
        snprintf(split, sizeof split, "%dx%d", micros[i], accum);
        const char *check = micros[i] == MODEL_EFFECTIVE ? "forward+backward" : "window";
        float loss;
        if (window_gradient(&x, micros[i], g, &loss)) {
            record_failure(check, dt, split, dev);
            continue;
        }
        record(check, dt, split, rel_err(g, ref_grads, n_params), model_tolerance(dt), NULL);
        if (micros[i] == MODEL_EFFECTIVE)
            record("loss", dt, split, rel_err(&loss, &ref_loss, 1), model_tolerance(dt), NULL);
    }
    bench_close(&x);
    free(g);
}

/* Weights after a few SGD steps (rotating two input buffers) in `mode`. */
static int steps_in_mode(backend *dev, exec_mode mode, int micro, int steps, float *w0,
                         float *w)
{
    bench x;
    int rc = bench_open(dev, OPT_SGD, 2, &x);
    if (rc)
        return rc;
    split sp;
    char why[200];
    step_runner s;
    split_make(MODEL_EFFECTIVE, micro, 1, &sp, why, sizeof why);
    size_t bytes = x.m.layout.n_params * sizeof(float);
    rc = step_runner_init(&s, &x.m, &x.d, &sp, mode, REDUCTION_SUM);
    if (!rc) {
        rc = bk_download(dev, w0, x.m.params, bytes);
        for (int i = 0; i < steps && !rc; i++)
            rc = step_run(&s);
        if (!rc)
            rc = bk_download(dev, w, x.m.params, bytes);
        step_runner_free(&s);
    }
    bench_close(&x);
    return rc;
}

/* Every execution mode computes what async computes: compared by the
 * weights' change over three steps, on the device itself. */
static void check_modes(backend *dev, dtype dt, size_t n_params)
{
    static const exec_mode modes[] = {MODE_SYNC, MODE_GRAPH, MODE_ALLOC, MODE_ALLOC_ASYNC};
    const int micro = 8, steps = 3;
    float *w0 = malloc(n_params * sizeof(float)), *ref = malloc(n_params * sizeof(float));
    float *w = malloc(n_params * sizeof(float));
    char split[24];
    snprintf(split, sizeof split, "%dx%d", micro, MODEL_EFFECTIVE / micro);
    if (!w0 || !ref || !w) {
        record("mode", dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    if (steps_in_mode(dev, MODE_ASYNC, micro, steps, w0, ref)) {
        record_failure("mode async", dt, split, dev);
        goto done;
    }
    for (size_t i = 0; i < n_params; i++)
        ref[i] -= w0[i];
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        char check[48];
        snprintf(check, sizeof check, "mode %s vs async", mode_name(modes[k]));
        if (modes[k] == MODE_GRAPH && !dev->ops->graph_begin) {
            printf("skip %-22s %-5s (the %s backend has no graphs)\n", check, dtype_name(dt),
                   dev->name);
            continue;
        }
        if (steps_in_mode(dev, modes[k], micro, steps, w0, w)) {
            record_failure(check, dt, split, dev);
            continue;
        }
        for (size_t i = 0; i < n_params; i++)
            w[i] -= w0[i];
        record(check, dt, split, rel_err(w, ref, n_params), op_tolerance(DTYPE_FP32), NULL);
    }
done:
    free(w0);
    free(ref);
    free(w);
}

/* The probe on the real device: with no cap and a bound far past what the
 * device holds, the search goes through real allocation failures and must
 * come back with an answer, the device still usable afterwards; with a cap,
 * the answer is the arithmetic's. */
static void check_probe(backend *dev, dtype dt)
{
    model_layout l;
    model_layout_of(model_preset_find("XL"), &l);
    probe_request req = {.layout = &l, .dtype = dt, .optimizer = OPT_ADAMW,
                         .effective = 0, .input_buffers = 2, .max_micro = 1 << 22};
    probe_result r;
    int rc = probe_find_max_micro(dev, &req, &r);
    char note[200];
    void *p = NULL;
    if (rc == BK_OK)
        rc = bk_alloc(dev, 1 << 20, &p);
    if (rc == BK_OK)
        rc = bk_zero(dev, p, 1 << 20);
    if (rc == BK_OK)
        rc = dev->ops->sync(dev);
    bk_free(dev, p, 1 << 20);
    if (rc != BK_OK) {
        record_failure("probe device limit", dt, "XL", dev);
    } else {
        snprintf(note, sizeof note, "XL fits micro %d of %d considered; %zu bytes; %d probes",
                 r.micro, r.bound, r.need.total, r.probes);
        record("probe device limit", dt, "XL", r.micro > 0 && r.micro < r.bound ? 0 : 1, 0,
               note);
    }

    model_layout_of(model_preset_find("L"), &l);
    req.layout = &l;
    req.effective = 256;
    req.max_micro = 0;
    size_t cap = (size_t)16 << 30;
    int want = 0;
    for (int micro = 1; micro <= 256; micro++) {
        memory_need n;
        model_memory_need(&l, dt, OPT_ADAMW, micro, 256, 2, &n);
        if (n.total + dev->mem_in_use <= cap)
            want = micro;
    }
    dev->mem_cap = cap;
    rc = probe_find_max_micro(dev, &req, &r);
    dev->mem_cap = 0;
    if (rc != BK_OK && !(rc == BK_OOM && want == 0)) {
        record_failure("probe 16G cap", dt, "L", dev);
        return;
    }
    snprintf(note, sizeof note, "micro %d (arithmetic says %d), accumulation %d", r.micro, want,
             r.accum);
    record("probe 16G cap", dt, "L", r.micro == want ? 0 : 1, 0, note);
}

/* ----------------------------------------------------------------- main */

static int open_device(const char *which, dtype dt, backend **out, char *why, size_t len)
{
    if (strcmp(which, "cpu") == 0)
        return cpu_backend_create(dt, out, why, len);
#ifdef ACCUBENCH_HAVE_CUDA
    return cuda_backend_create(dt, out, why, len);
#else
    snprintf(why, len, "built without the CUDA backend");
    *out = NULL;
    return BK_UNSUPPORTED;
#endif
}

static int write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "# gpu-check: device against the CPU reference; error = relative L2\n");
    fprintf(f, "check,dtype,split,error,tolerance,status,note\n");
    for (int i = 0; i < n_results; i++) {
        check_result *r = &results[i];
        for (char *c = r->note; *c; c++) /* the note is the last column: no commas */
            if (*c == ',')
                *c = ';';
        fprintf(f, "%s,%s,%s,%.6g,%.6g,%s,%s\n", r->check, r->dtype, r->split, r->error,
                r->tolerance, r->passed ? "ok" : "FAIL", r->note);
    }
    return fclose(f);
}

static void usage(void)
{
    fprintf(stderr, "usage: gpu-check [--dtype LIST] [--csv FILE] [--device cuda|cpu] "
                    "[--seed N]\n");
}

int main(int argc, char **argv)
{
    const char *dtypes = "fp32,tf32,bf16", *csv = NULL, *device = "cuda";
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        if (strcmp(argv[i], "--dtype") == 0)
            dtypes = v;
        else if (strcmp(argv[i], "--csv") == 0)
            csv = v;
        else if (strcmp(argv[i], "--device") == 0)
            device = v;
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else {
            usage();
            return 2;
        }
        i++;
    }

    char why[320];
    backend *cpu = NULL;
    if (cpu_backend_create(DTYPE_FP32, &cpu, why, sizeof why) != BK_OK) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 2;
    }

    /* The CPU reference of the model, once for every dtype. */
    float *ref_grads = NULL, ref_loss = 0;
    size_t n_params = 0;
    char list[64];
    snprintf(list, sizeof list, "%s", dtypes);
    int opened = 0;
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        dtype dt;
        if (dtype_parse(name, &dt)) {
            fprintf(stderr, "gpu-check: unknown dtype '%s' (known: %s)\n", name, dtype_names());
            cpu->ops->destroy(cpu);
            free(ref_grads);
            return 2;
        }
        backend *dev = NULL;
        if (open_device(device, dt, &dev, why, sizeof why) != BK_OK) {
            fprintf(stderr, "gpu-check: %s\n", why);
            if (opened)
                continue; /* this dtype only: say so and go on */
            cpu->ops->destroy(cpu);
            return 2;
        }
        if (!opened++)
            printf("gpu-check: %s (%s) against %s\n", dev->device, dev->library, cpu->device);
        if (!ref_grads) {
            bench x;
            model_layout l;
            model_layout_of(model_preset_find(MODEL_PRESET), &l);
            n_params = l.n_params;
            ref_grads = malloc(n_params * sizeof *ref_grads);
            int rc = ref_grads ? bench_open(cpu, OPT_ADAMW, 1, &x) : BK_OOM;
            if (!rc)
                rc = window_gradient(&x, MODEL_EFFECTIVE, ref_grads, &ref_loss);
            bench_close(&x);
            if (rc) {
                fprintf(stderr, "gpu-check: the CPU reference failed: %s\n", cpu->error);
                dev->ops->destroy(dev);
                cpu->ops->destroy(cpu);
                free(ref_grads);
                return 1;
            }
        }
        sides x = {.cpu = cpu, .dev = dev, .dt = dt, .s = dev->compute_storage,
                   .r = {seed * 0x9e3779b97f4a7c15ull + (uint64_t)dt}};
        check_ops(&x);
        check_model(dev, dt, ref_grads, ref_loss, n_params);
        check_modes(dev, dt, n_params);
        if (strcmp(dev->name, "cuda") == 0 && dt == DTYPE_BF16)
            check_probe(dev, dt);
        if (dev->mem_in_use) {
            char note[96];
            snprintf(note, sizeof note, "%zu bytes still allocated after the checks",
                     dev->mem_in_use);
            record("leak", dt, "", (double)dev->mem_in_use, 0, note);
        }
        dev->ops->destroy(dev);
    }
    cpu->ops->destroy(cpu);
    free(ref_grads);

    int failed = 0;
    for (int i = 0; i < n_results; i++)
        failed += !results[i].passed;
    printf("gpu-check: %d checks, %d failed\n", n_results, failed);
    if (csv && write_csv(csv) != 0) {
        fprintf(stderr, "gpu-check: cannot write %s\n", csv);
        return 1;
    }
    return failed ? 1 : 0;
}
