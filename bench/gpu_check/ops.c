/* Op checks: each backend op on the device against the CPU reference, on
 * the same random inputs rounded to the device's storage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "elementwise.h"
#include "gpu_check.h"
#include "plural.h"

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

/* h = gelu(z): what a recomputing backward makes again from the kept z. */
static void check_gelu_forward(sides *x, size_t n)
{
    const char *check = "gelu_forward";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hz = host_random(&sc, &x->r, n, -4, 4, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dz, *dh;
        TRY(b, put(&sc, side, s, hz, n, &dz));
        TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dh));
        TRY(b, b->ops->gelu_forward(b, s, dz, dh, n));
        TRY(b, get(b, s, dh, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), NULL);
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
 * some examples invalid; the op twice on the device, its loss the same to
 * the bit (a sum in the order the blocks finish would not be). */
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
    float scale = n_valid ? 1.0f / (float)n_valid : 0.0f, loss0 = 0.5f, loss[2][2];
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
        for (int rep = 0; rep < 2; rep++) {
            if (rep)
                TRY(b, bk_upload(b, dloss, &loss0, sizeof loss0));
            TRY(b, b->ops->softmax_xent(b, s, dl, ddl, dlab, dval, dsc, dloss, classes, batch));
            TRY(b, get(b, STORAGE_F32, dloss, 1, &loss[side][rep]));
        }
        TRY(b, get(b, s, ddl, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt),
           "gradient");
    char note[80] = "";
    int repeats = memcmp(&loss[DEV][0], &loss[DEV][1], sizeof(float)) == 0;
    if (!repeats)
        snprintf(note, sizeof note, "the device's two losses differ: %.9g, %.9g",
                 (double)loss[DEV][0], (double)loss[DEV][1]);
    record("softmax_xent loss", x->dt, split,
           repeats ? rel_err(&loss[DEV][0], &loss[CPU][0], 1) : 1.0, op_tolerance(x->dt),
           repeats ? NULL : note);
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

/* The noise pass's reductions on fp32 vectors: y += alpha x, then |y|^2
 * into a device double, twice on the device (the fixed order repeats to
 * the bit). With `offset` both start one element past an aligned address
 * (the element-by-element paths). fp32 in every dtype. */
static void check_noise_reductions(sides *x, size_t n, int offset)
{
    const char *check = offset ? "axpy+sum_squares +1" : "axpy+sum_squares";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    size_t len = n + (size_t)offset;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hx = host_random(&sc, &x->r, len, -1, 1, STORAGE_F32);
    float *hy = host_random(&sc, &x->r, len, -1, 1, STORAGE_F32);
    float *out[2] = {host_alloc(&sc, len + 1), host_alloc(&sc, len + 1)};
    double sq[2][2] = {{0, 0}, {0, 0}};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        void *dx, *dy, *dsq;
        TRY(b, put(&sc, side, STORAGE_F32, hx, len, &dx));
        TRY(b, put(&sc, side, STORAGE_F32, hy, len, &dy));
        TRY(b, dev_alloc(&sc, side, sizeof(double), &dsq));
        float *xo = (float *)dx + offset, *yo = (float *)dy + offset;
        TRY(b, bk_axpy(b, yo, 3.0f, xo, n));
        for (int rep = 0; rep < 2; rep++) {
            TRY(b, bk_sum_squares(b, yo, n, dsq));
            TRY(b, bk_download(b, &sq[side][rep], dsq, sizeof(double)));
        }
        TRY(b, get(b, STORAGE_F32, dy, len, out[side]));
        out[side][len] = (float)sq[side][0];
    }
    /* The vector and its norm against the CPU; a norm that moves between
     * two runs on the device is a race, whatever its size. */
    char note[80] = "";
    int repeats = memcmp(&sq[DEV][0], &sq[DEV][1], sizeof(double)) == 0;
    if (!repeats)
        snprintf(note, sizeof note, "the device's two sums differ: %.17g, %.17g", sq[DEV][0],
                 sq[DEV][1]);
    record(check, x->dt, split, repeats ? rel_err(out[DEV], out[CPU], len + 1) : 1.0,
           op_tolerance(DTYPE_FP32), repeats ? NULL : note);
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
    snprintf(note, sizeof note, "%zu %s bit for bit", mismatches,
             plural((long long)mismatches, "value differs", "values differ"));
    record(check, x->dt, split, (double)mismatches, 0, note);
done:
    scratch_free(&sc);
}

void check_ops(sides *x)
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
    check_gelu_forward(x, 100003);
    check_gelu_backward(x, 100003, 0);
    check_gelu_backward(x, 4096, 1);
    check_bias_grad(x, 300, 77);
    check_bias_grad(x, 1024, 4096); /* the two-pass path */
    check_bias_grad(x, 40000, 3);
    check_softmax_xent(x, 1000, 77);
    check_softmax_xent(x, 16, 300);
    check_softmax_xent(x, 1024, 1);
    check_softmax_xent(x, 1001, 33); /* rows not 16-byte aligned: one element a load */
    check_optimizer(x, 100003, 1, 0);
    check_optimizer(x, 100003, 0, 0);
    check_optimizer(x, 4099, 1, 1);
    check_optimizer(x, 4099, 0, 1);
    check_convert(x, 100003);
    check_noise_reductions(x, 1000003, 0);
    check_noise_reductions(x, 4099, 1);
    check_transformer_ops(x);
    check_llama_ops(x);
    check_attention_ops(x);
}

/* Cross-entropy at GPT-2 small's vocabulary of 50304: one micro-batch of
 * 1024 tokens, and logits of more than 2^31 elements (42700 tokens: 8 GiB
 * of bf16 logits; any 32-bit index into them wraps). The second needs tens
 * of GiB of host memory for both sides' copies: not where the device's
 * memory is the host's. Then the transformer ops at GPT-2 small's sizes. */
void check_ops_real(sides *x)
{
    check_softmax_xent(x, 50304, 1024);
    if (x->b[DEV]->caps & BK_CAP_SHARES_HOST_MEMORY)
        printf("skip %-26s %-5s (logits of 2^31 elements: the %s backend's memory is the "
               "host's)\n", "softmax_xent", dtype_name(x->dt), x->b[DEV]->name);
    else
        check_softmax_xent(x, 50304, 42700);
    check_transformer_ops_real(x);
}
