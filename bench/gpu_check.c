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
 * gradients pass through every layer twice, so tf32 and bf16 get five times
 * as much there. GEMM inputs are rounded to TF32 too in a tf32 run: the op
 * check then measures the GEMM, not the rounding, which the model check
 * shows.
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
#include "elementwise.h"
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

/* A model gradient passes through about ten GEMMs, each rounding in tf32
 * or bf16: five times the op tolerance. A real bug (a transpose, a lost
 * scale) is off by far more. */
static double model_tolerance(dtype d)
{
    return d == DTYPE_FP32 ? 1e-5 : 5 * op_tolerance(d);
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
    printf("%-4s %-26s %-5s %-10s error %-10.3g tol %-7.0e %s\n", r->passed ? "ok" : "FAIL",
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

/* The two sides of an op check: [CPU] the reference, [DEV] the device. */
enum { CPU = 0, DEV = 1 };

typedef struct sides {
    backend *b[2];
    storage st[2]; /* each side's compute storage: fp32, and the device's */
    dtype dt;
    rng r;
} sides;

/* What one check holds, freed together: device buffers on each side and
 * host arrays. A host allocation that fails sets host_failed. */
#define SCRATCH_MAX 16
typedef struct scratch {
    backend *b[2];
    void *dev[2][SCRATCH_MAX];
    size_t bytes[2][SCRATCH_MAX];
    int n_dev[2];
    void *host[SCRATCH_MAX];
    int n_host, host_failed;
} scratch;

static int dev_alloc(scratch *sc, int side, size_t bytes, void **out)
{
    backend *b = sc->b[side];
    *out = NULL;
    if (sc->n_dev[side] == SCRATCH_MAX) {
        snprintf(b->error, sizeof b->error, "gpu-check: too many buffers in one check");
        return BK_ERROR;
    }
    int rc = bk_alloc(b, bytes, out);
    if (rc == BK_OK) {
        sc->dev[side][sc->n_dev[side]] = *out;
        sc->bytes[side][sc->n_dev[side]++] = bytes;
    }
    return rc;
}

static float *host_alloc(scratch *sc, size_t n)
{
    float *p = sc->n_host < SCRATCH_MAX ? malloc((n ? n : 1) * sizeof *p) : NULL;
    if (!p)
        sc->host_failed = 1;
    else
        sc->host[sc->n_host++] = p;
    return p;
}

/* x rounded to TF32 (10 mantissa bits, to nearest even): a value the tensor
 * cores take as it is, whether they round or truncate. */
static float round_tf32(float x)
{
    union { float f; uint32_t u; } v = {x};
    if ((v.u & 0x7f800000u) != 0x7f800000u) {
        v.u += 0x0fffu + ((v.u >> 13) & 1u);
        v.u &= ~0x1fffu;
    }
    return v.f;
}

/* n random values in [lo, hi), rounded to storage s (so that both sides
 * start from the same numbers), and to TF32 when `tf32`. */
static float *host_random_as(scratch *sc, rng *r, size_t n, float lo, float hi, storage s,
                             int tf32)
{
    float *v = host_alloc(sc, n);
    for (size_t i = 0; v && i < n; i++) {
        v[i] = rng_uniform(r, lo, hi);
        if (s == STORAGE_BF16)
            v[i] = ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(v[i]));
        if (tf32)
            v[i] = round_tf32(v[i]);
    }
    return v;
}

static float *host_random(scratch *sc, rng *r, size_t n, float lo, float hi, storage s)
{
    return host_random_as(sc, r, n, lo, hi, s, 0);
}

static void scratch_free(scratch *sc)
{
    for (int side = 0; side < 2; side++)
        for (int i = sc->n_dev[side] - 1; i >= 0; i--)
            bk_free(sc->b[side], sc->dev[side][i], sc->bytes[side][i]);
    for (int i = 0; i < sc->n_host; i++)
        free(sc->host[i]);
    memset(sc, 0, sizeof *sc);
}

/* A device buffer on `side` holding host[0..n) in storage s. */
static int put(scratch *sc, int side, storage s, const float *host, size_t n, void **out)
{
    backend *b = sc->b[side];
    int rc = dev_alloc(sc, side, n * storage_bytes(s), out);
    if (rc || s == STORAGE_F32)
        return rc ? rc : bk_upload(b, *out, host, n * sizeof(float));
    unsigned short *bits = malloc(n * sizeof *bits);
    if (!bits) {
        snprintf(b->error, sizeof b->error, "gpu-check: out of host memory");
        return BK_OOM;
    }
    for (size_t i = 0; i < n; i++)
        bits[i] = ew_f32_to_bf16_bits(host[i]);
    rc = bk_upload(b, *out, bits, n * sizeof *bits);
    if (!rc)
        rc = b->ops->sync(b); /* bits must outlive the copy */
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

/* Inside a check (which names `check`, `split`, `x` and `sc`): on failure
 * record the check as failed, with the backend's reason, and clean up. */
#define TRY(b, call)                                                          \
    do {                                                                      \
        if ((call) != BK_OK) {                                                \
            record_failure(check, x->dt, split, (b));                         \
            goto done;                                                        \
        }                                                                     \
    } while (0)

#define NEED_HOST()                                                           \
    do {                                                                      \
        if (sc.host_failed) {                                                 \
            record(check, x->dt, split, NAN, 0, "out of host memory");        \
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
    char check[48], split[24];
    snprintf(check, sizeof check, "gemm %c%c %s%s", ta ? 'T' : 'N', tb ? 'T' : 'N',
             c_f32 ? "acc-f32" : "out", offset ? " +1" : "");
    snprintf(split, sizeof split, "%dx%dx%d", m, n, k);
    int lda = ta ? k : m, ldb = tb ? n : k;
    size_t na = (size_t)lda * (ta ? m : k) + 1, nb = (size_t)ldb * (tb ? k : n) + 1;
    size_t nc = (size_t)m * n;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    storage cs_dev = c_f32 ? STORAGE_F32 : x->st[DEV];
    int tf32 = x->dt == DTYPE_TF32;
    float *ha = host_random_as(&sc, &x->r, na, -1, 1, x->st[DEV], tf32);
    float *hb = host_random_as(&sc, &x->r, nb, -1, 1, x->st[DEV], tf32);
    float *hc = host_random(&sc, &x->r, nc, -1, 1, cs_dev);
    float *out[2] = {host_alloc(&sc, nc), host_alloc(&sc, nc)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side], cs = c_f32 ? STORAGE_F32 : s;
        void *da, *db, *dc;
        TRY(b, put(&sc, side, s, ha, na, &da));
        TRY(b, put(&sc, side, s, hb, nb, &db));
        TRY(b, put(&sc, side, cs, hc, nc, &dc));
        gemm_desc g = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 0.75f,
                       .a = (char *)da + offset * storage_bytes(s), .lda = lda,
                       .b = (char *)db + offset * storage_bytes(s), .ldb = ldb,
                       .beta = c_f32 ? 1.0f : 0.0f, .c = dc, .ldc = m, .ab_storage = s,
                       .c_storage = cs};
        TRY(b, bk_gemm(b, &g));
        TRY(b, get(b, cs, dc, nc, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], nc), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* ------------------------------------------------------ element-wise */

/* z += bias per row, then h = gelu(z): both outputs compared. */
static void check_bias_gelu(sides *x, int rows, int cols, int gelu)
{
    const char *check = gelu ? "bias_gelu_forward" : "bias_forward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", rows, cols);
    size_t n = (size_t)rows * cols;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hz = host_random(&sc, &x->r, n, -4, 4, x->st[DEV]);
    float *hb = host_random(&sc, &x->r, (size_t)rows, -1, 1, STORAGE_F32);
    float *out[2] = {host_alloc(&sc, 2 * n), host_alloc(&sc, 2 * n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dz, *dbias, *dh = NULL;
        TRY(b, put(&sc, side, s, hz, n, &dz));
        TRY(b, put(&sc, side, STORAGE_F32, hb, (size_t)rows, &dbias));
        if (gelu)
            TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dh));
        TRY(b, b->ops->bias_gelu_forward(b, s, dz, dbias, dh, rows, cols, gelu));
        TRY(b, get(b, s, dz, n, out[side]));
        if (gelu)
            TRY(b, get(b, s, dh, n, out[side] + n));
    }
    size_t compared = gelu ? 2 * n : n;
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], compared), op_tolerance(x->dt),
           NULL);
done:
    scratch_free(&sc);
}

/* dz = dh * gelu'(z), into a separate buffer or in place over dh. */
static void check_gelu_backward(sides *x, size_t n, int in_place)
{
    const char *check = in_place ? "gelu_backward in-place" : "gelu_backward";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hz = host_random(&sc, &x->r, n, -4, 4, x->st[DEV]);
    float *hd = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dz, *dh, *dout;
        TRY(b, put(&sc, side, s, hz, n, &dz));
        TRY(b, put(&sc, side, s, hd, n, &dh));
        dout = dh;
        if (!in_place)
            TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dout));
        TRY(b, b->ops->gelu_backward(b, s, dz, dh, dout, n));
        TRY(b, get(b, s, dout, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* db += row sums of dz, onto a db that already holds values. */
static void check_bias_grad(sides *x, int rows, int cols)
{
    const char *check = "bias_grad";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", rows, cols);
    size_t n = (size_t)rows * cols, nr = (size_t)rows;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hd = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *hb = host_random(&sc, &x->r, nr, -1, 1, STORAGE_F32);
    float *out[2] = {host_alloc(&sc, nr), host_alloc(&sc, nr)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        void *dd, *db;
        TRY(b, put(&sc, side, x->st[side], hd, n, &dd));
        TRY(b, put(&sc, side, STORAGE_F32, hb, nr, &db));
        TRY(b, b->ops->bias_grad_accumulate(b, x->st[side], dd, db, rows, cols));
        TRY(b, get(b, STORAGE_F32, db, nr, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], nr), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* Gradients and the loss sum (added onto a non-zero sum) over a batch with
 * some examples invalid. */
static void check_softmax_xent(sides *x, int classes, int batch)
{
    const char *check = "softmax_xent";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", classes, batch);
    size_t n = (size_t)classes * batch, nb = (size_t)batch;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hl = host_random(&sc, &x->r, n, -6, 6, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    int *labels = (int *)host_alloc(&sc, nb), *valid = (int *)host_alloc(&sc, nb);
    NEED_HOST();
    int n_valid = 0;
    for (int j = 0; j < batch; j++) {
        labels[j] = rng_below(&x->r, classes);
        valid[j] = rng_below(&x->r, 4) != 0;
        n_valid += valid[j];
    }
    float scale = n_valid ? 1.0f / (float)n_valid : 0.0f, loss0 = 0.5f, loss[2];
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dl, *ddl, *dlab, *dval, *dsc, *dloss;
        TRY(b, put(&sc, side, s, hl, n, &dl));
        TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &ddl));
        TRY(b, dev_alloc(&sc, side, nb * sizeof(int), &dlab));
        TRY(b, dev_alloc(&sc, side, nb * sizeof(int), &dval));
        TRY(b, bk_upload(b, dlab, labels, nb * sizeof(int)));
        TRY(b, bk_upload(b, dval, valid, nb * sizeof(int)));
        TRY(b, put(&sc, side, STORAGE_F32, &scale, 1, &dsc));
        TRY(b, put(&sc, side, STORAGE_F32, &loss0, 1, &dloss));
        TRY(b, b->ops->softmax_xent(b, s, dl, ddl, dlab, dval, dsc, dloss, classes, batch));
        TRY(b, get(b, s, ddl, n, out[side]));
        TRY(b, get(b, STORAGE_F32, dloss, 1, &loss[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt),
           "gradient");
    record("softmax_xent loss", x->dt, split, rel_err(&loss[DEV], &loss[CPU], 1),
           op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* Two optimizer steps on fp32 weights, gradients and state: fp32 in every
 * dtype, so held to the fp32 tolerance. With `offset` every array starts one
 * element past an aligned address (the kernels' element-by-element path). */
static void check_optimizer(sides *x, size_t n, int adamw, int offset)
{
    const char *check = adamw ? (offset ? "adamw +1" : "adamw") : (offset ? "sgd +1" : "sgd");
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    size_t len = n + (size_t)offset;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hw = host_random(&sc, &x->r, len, -1, 1, STORAGE_F32);
    float *hg = host_random(&sc, &x->r, len, -1, 1, STORAGE_F32);
    float *hm = host_random(&sc, &x->r, len, -0.1f, 0.1f, STORAGE_F32);
    float *hv = host_random(&sc, &x->r, len, 0, 0.01f, STORAGE_F32);
    float *out[2] = {host_alloc(&sc, 3 * len), host_alloc(&sc, 3 * len)};
    NEED_HOST();
    adamw_hparams h = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                       .weight_decay = 0.01f, .bias_correction1 = 0.19f,
                       .bias_correction2 = 0.001999f};
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        void *w, *g, *m, *v, *hp;
        TRY(b, put(&sc, side, STORAGE_F32, hw, len, &w));
        TRY(b, put(&sc, side, STORAGE_F32, hg, len, &g));
        TRY(b, put(&sc, side, STORAGE_F32, hm, len, &m));
        TRY(b, put(&sc, side, STORAGE_F32, hv, len, &v));
        TRY(b, dev_alloc(&sc, side, sizeof h, &hp));
        TRY(b, bk_upload(b, hp, &h, sizeof h));
        float *wo = (float *)w + offset, *go = (float *)g + offset;
        float *mo = (float *)m + offset, *vo = (float *)v + offset;
        for (int step = 0; step < 2; step++) {
            if (adamw)
                TRY(b, bk_adamw(b, wo, go, mo, vo, n, hp));
            else
                TRY(b, bk_sgd(b, wo, go, n, 0.05f, 0.01f));
        }
        TRY(b, get(b, STORAGE_F32, w, len, out[side]));
        TRY(b, get(b, STORAGE_F32, m, len, out[side] + len));
        TRY(b, get(b, STORAGE_F32, v, len, out[side] + 2 * len));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], 3 * len),
           op_tolerance(DTYPE_FP32), NULL);
done:
    scratch_free(&sc);
}

/* convert (fp32 -> compute storage) then to_f32 back, on the device alone:
 * exactly the host's round-to-nearest-even, NaN kept NaN. */
static void check_convert(sides *x, size_t n)
{
    const char *check = "convert+to_f32";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    backend *b = x->b[DEV];
    storage s = x->st[DEV];
    float *h = host_random(&sc, &x->r, n, -3e4f, 3e4f, STORAGE_F32);
    float *want = host_alloc(&sc, n), *got = host_alloc(&sc, n);
    NEED_HOST();
    h[0] = NAN;
    h[1] = INFINITY;
    for (size_t i = 0; i < n; i++)
        want[i] = s == STORAGE_BF16 ? ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(h[i])) : h[i];
    void *src, *mid, *back;
    TRY(b, put(&sc, DEV, STORAGE_F32, h, n, &src));
    TRY(b, dev_alloc(&sc, DEV, n * storage_bytes(s), &mid));
    TRY(b, dev_alloc(&sc, DEV, n * sizeof(float), &back));
    TRY(b, bk_convert(b, src, mid, s, n));
    TRY(b, b->ops->to_f32(b, mid, s, back, n));
    TRY(b, get(b, STORAGE_F32, back, n, got));
    size_t mismatches = !isnan(got[0]);
    for (size_t i = 1; i < n; i++)
        mismatches += memcmp(&got[i], &want[i], sizeof(float)) != 0;
    char note[64];
    snprintf(note, sizeof note, "%zu values differ bit for bit", mismatches);
    record(check, x->dt, split, (double)mismatches, 0, note);
done:
    scratch_free(&sc);
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
    check_optimizer(x, 100003, 1, 0);
    check_optimizer(x, 100003, 0, 0);
    check_optimizer(x, 4099, 1, 1);
    check_optimizer(x, 4099, 0, 1);
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
            printf("skip %-26s %-5s (the %s backend has no graphs)\n", check, dtype_name(dt),
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

    /* Under a 16 GiB cap, unaccumulated: L's weights and state take about
     * 10 GB, each example about 0.35 MB, so the cap binds near 20000. */
    model_layout_of(model_preset_find("L"), &l);
    req.layout = &l;
    req.max_micro = 0;
    size_t cap = (size_t)16 << 30;
    int want = 0;
    for (int micro = 1; micro <= PROBE_DEFAULT_MAX_MICRO; micro++) {
        memory_need n;
        model_memory_need(&l, dt, OPT_ADAMW, micro, micro, 2, &n);
        if (n.total + dev->mem_in_use > cap)
            break;
        want = micro;
    }
    dev->mem_cap = cap;
    rc = probe_find_max_micro(dev, &req, &r);
    dev->mem_cap = 0;
    if (rc != BK_OK) {
        record_failure("probe 16G cap", dt, "L", dev);
        return;
    }
    snprintf(note, sizeof note, "micro %d (the arithmetic says %d) in %d probes", r.micro, want,
             r.probes);
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

/* The CPU's full-batch gradient and loss of the model: the reference every
 * dtype's windows are held to. */
static int cpu_reference(backend *cpu, float **grads, float *loss, size_t *n_params)
{
    model_layout l;
    model_layout_of(model_preset_find(MODEL_PRESET), &l);
    *n_params = l.n_params;
    *grads = malloc(l.n_params * sizeof **grads);
    if (!*grads) {
        snprintf(cpu->error, sizeof cpu->error, "out of host memory");
        return BK_OOM;
    }
    bench x;
    int rc = bench_open(cpu, OPT_ADAMW, 1, &x);
    if (!rc)
        rc = window_gradient(&x, MODEL_EFFECTIVE, *grads, loss);
    bench_close(&x);
    return rc;
}

/* Every check of one dtype on an open device. */
static void check_dtype(backend *cpu, backend *dev, dtype dt, unsigned long long seed,
                        const float *ref_grads, float ref_loss, size_t n_params)
{
    sides x = {.b = {cpu, dev}, .st = {STORAGE_F32, dev->compute_storage}, .dt = dt,
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
}

int main(int argc, char **argv)
{
    const char *csv = NULL, *device = "cuda";
    char list[64] = "fp32,tf32,bf16", why[320];
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && strcmp(argv[i], "--dtype") == 0)
            snprintf(list, sizeof list, "%s", v);
        else if (v && strcmp(argv[i], "--csv") == 0)
            csv = v;
        else if (v && strcmp(argv[i], "--device") == 0)
            device = v;
        else if (v && strcmp(argv[i], "--seed") == 0)
            seed = strtoull(v, NULL, 10);
        else {
            usage();
            return 2;
        }
    }
    dtype dts[8];
    int n_dts = 0;
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        if (n_dts == 8 || dtype_parse(name, &dts[n_dts])) {
            fprintf(stderr, "gpu-check: unknown dtype '%s' (known: %s)\n", name, dtype_names());
            return 2;
        }
        n_dts++;
    }

    backend *cpu = NULL;
    if (cpu_backend_create(DTYPE_FP32, &cpu, why, sizeof why) != BK_OK) {
        fprintf(stderr, "gpu-check: %s\n", why);
        return 2;
    }
    float *ref_grads = NULL, ref_loss = 0;
    size_t n_params = 0;
    for (int i = 0; i < n_dts; i++) {
        backend *dev = NULL;
        int rc = open_device(device, dts[i], &dev, why, sizeof why);
        if (rc != BK_OK && i == 0) {
            /* No device at all: say so, nothing else to check. */
            fprintf(stderr, "gpu-check: %s\n", why);
            cpu->ops->destroy(cpu);
            return 2;
        }
        if (rc != BK_OK) {
            record("open", dts[i], "", NAN, 0, why);
            continue;
        }
        if (i == 0) {
            printf("gpu-check: %s (%s) against %s\n", dev->device, dev->library, cpu->device);
            if (cpu_reference(cpu, &ref_grads, &ref_loss, &n_params) != BK_OK) {
                record("cpu reference", DTYPE_FP32, "", NAN, 0, cpu->error);
                dev->ops->destroy(dev);
                break;
            }
        }
        check_dtype(cpu, dev, dts[i], seed, ref_grads, ref_loss, n_params);
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
