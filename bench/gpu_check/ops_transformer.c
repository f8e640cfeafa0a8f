/* The transformer ops and the strided-batched GEMM on the device against
 * the CPU reference, on the same random inputs rounded to the device's
 * storage: every output of each op compared, gradients added onto buffers
 * that already hold values (the ops accumulate), and the LayerNorm
 * statistics and softmax probabilities the backward passes read given the
 * same on both sides, so that each check judges one op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "elementwise.h"
#include "gpu_check.h"

/* ------------------------------------------------- strided-batched GEMM */

/* `batch` products C_i = alpha op(A_i) op(B_i) + beta C_i, in the compute
 * storage. Interleaved: the products side by side in one tall matrix
 * (attention's heads: stride = the rows of one, ld = the rows of all); else
 * one after the other, with a gap and padded leading dimensions. Every
 * element of C's buffer is compared, so a write between the products
 * shows. */
static void check_gemm_batched(sides *x, int ta, int tb, int m, int n, int k, int batch,
                               int interleave, float beta)
{
    char check[48], split[24];
    snprintf(check, sizeof check, "gemm batched %c%c %s%s", ta ? 'T' : 'N', tb ? 'T' : 'N',
             interleave ? "heads" : "strided", beta != 0.0f ? " acc" : "");
    snprintf(split, sizeof split, "%dx%dx%dx%d", m, n, k, batch);
    int rows_a = ta ? k : m, cols_a = ta ? m : k, rows_b = tb ? n : k, cols_b = tb ? k : n;
    int lda, ldb, ldc;
    int64_t str_a, str_b, str_c;
    if (interleave) {
        lda = rows_a * batch, ldb = rows_b * batch, ldc = m * batch;
        str_a = rows_a, str_b = rows_b, str_c = m;
    } else {
        lda = rows_a + 8, ldb = rows_b + 8, ldc = m + 8;
        str_a = (int64_t)lda * cols_a + 8, str_b = (int64_t)ldb * cols_b + 8;
        str_c = (int64_t)ldc * n + 8;
    }
    size_t na = (size_t)(str_a * (batch - 1)) + (size_t)lda * cols_a;
    size_t nb = (size_t)(str_b * (batch - 1)) + (size_t)ldb * cols_b;
    size_t nc = (size_t)(str_c * (batch - 1)) + (size_t)ldc * n;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    int tf32 = x->dt == DTYPE_TF32;
    float *ha = host_random_as(&sc, &x->r, na, -1, 1, x->st[DEV], tf32);
    float *hb = host_random_as(&sc, &x->r, nb, -1, 1, x->st[DEV], tf32);
    float *hc = host_random(&sc, &x->r, nc, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, nc), host_alloc(&sc, nc)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *da, *db, *dc;
        TRY(b, put(&sc, side, s, ha, na, &da));
        TRY(b, put(&sc, side, s, hb, nb, &db));
        TRY(b, put(&sc, side, s, hc, nc, &dc));
        gemm_desc g = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 0.75f,
                       .a = da, .lda = lda, .b = db, .ldb = ldb, .beta = beta, .c = dc,
                       .ldc = ldc, .ab_storage = s, .c_storage = s, .batch = batch,
                       .stride_a = str_a, .stride_b = str_b, .stride_c = str_c};
        TRY(b, bk_gemm(b, &g));
        TRY(b, get(b, s, dc, nc, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], nc), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* ------------------------------------------------------------ LayerNorm */

/* y, and the per-column mean and rstd (fp32). */
static void check_layernorm_forward(sides *x, int dim, int rows)
{
    const char *check = "layernorm_forward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", dim, rows);
    size_t n = (size_t)dim * rows, nr = (size_t)rows, nd = (size_t)dim;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hx = host_random(&sc, &x->r, n, -2, 3, x->st[DEV]);
    float *hg = host_random(&sc, &x->r, nd, 0.5f, 1.5f, STORAGE_F32);
    float *hb = host_random(&sc, &x->r, nd, -0.5f, 0.5f, STORAGE_F32);
    float *out[2] = {host_alloc(&sc, n + 2 * nr), host_alloc(&sc, n + 2 * nr)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dx, *dg, *db, *dy, *dmean, *drstd;
        TRY(b, put(&sc, side, s, hx, n, &dx));
        TRY(b, put(&sc, side, STORAGE_F32, hg, nd, &dg));
        TRY(b, put(&sc, side, STORAGE_F32, hb, nd, &db));
        TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dy));
        TRY(b, dev_alloc(&sc, side, nr * sizeof(float), &dmean));
        TRY(b, dev_alloc(&sc, side, nr * sizeof(float), &drstd));
        TRY(b, bk_layernorm_forward(b, dx, dg, db, dy, dmean, drstd, dim, rows));
        TRY(b, get(b, s, dy, n, out[side]));
        TRY(b, get(b, STORAGE_F32, dmean, nr, out[side] + n));
        TRY(b, get(b, STORAGE_F32, drstd, nr, out[side] + n + nr));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), "y");
    record("layernorm_forward mean", x->dt, split, rel_err(out[DEV] + n, out[CPU] + n, nr),
           op_tolerance(x->dt), NULL);
    record("layernorm_forward rstd", x->dt, split,
           rel_err(out[DEV] + n + nr, out[CPU] + n + nr, nr), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* dx, dgamma and dbeta, each added onto values already there, from the
 * same mean and rstd on both sides (computed here in double from x). */
static void check_layernorm_backward(sides *x, int dim, int rows)
{
    const char *check = "layernorm_backward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", dim, rows);
    size_t n = (size_t)dim * rows, nr = (size_t)rows, nd = (size_t)dim;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hx = host_random(&sc, &x->r, n, -2, 3, x->st[DEV]);
    float *hdy = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *hdx = host_random(&sc, &x->r, n, -1, 1, STORAGE_F32); /* fp32: see backend.h */
    float *hg = host_random(&sc, &x->r, nd, 0.5f, 1.5f, STORAGE_F32);
    float *hdg = host_random(&sc, &x->r, nd, -1, 1, STORAGE_F32);
    float *hdb = host_random(&sc, &x->r, nd, -1, 1, STORAGE_F32);
    float *hmean = host_alloc(&sc, nr), *hrstd = host_alloc(&sc, nr);
    float *out[2] = {host_alloc(&sc, n + 2 * nd), host_alloc(&sc, n + 2 * nd)};
    NEED_HOST();
    for (int c = 0; c < rows; c++) {
        const float *xc = hx + (size_t)c * dim;
        double mu = 0, var = 0;
        for (int i = 0; i < dim; i++)
            mu += xc[i];
        mu /= dim;
        for (int i = 0; i < dim; i++)
            var += (xc[i] - mu) * (xc[i] - mu);
        hmean[c] = (float)mu;
        hrstd[c] = (float)(1.0 / sqrt(var / dim + EW_LAYERNORM_EPS));
    }
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dx, *ddy, *ddx, *dg, *ddg, *ddb, *dmean, *drstd;
        TRY(b, put(&sc, side, s, hx, n, &dx));
        TRY(b, put(&sc, side, s, hdy, n, &ddy));
        TRY(b, put(&sc, side, STORAGE_F32, hdx, n, &ddx));
        TRY(b, put(&sc, side, STORAGE_F32, hg, nd, &dg));
        TRY(b, put(&sc, side, STORAGE_F32, hdg, nd, &ddg));
        TRY(b, put(&sc, side, STORAGE_F32, hdb, nd, &ddb));
        TRY(b, put(&sc, side, STORAGE_F32, hmean, nr, &dmean));
        TRY(b, put(&sc, side, STORAGE_F32, hrstd, nr, &drstd));
        TRY(b, bk_layernorm_backward(b, ddy, dx, dg, dmean, drstd, ddx, ddg, ddb, dim, rows));
        TRY(b, get(b, STORAGE_F32, ddx, n, out[side]));
        TRY(b, get(b, STORAGE_F32, ddg, nd, out[side] + n));
        TRY(b, get(b, STORAGE_F32, ddb, nd, out[side] + n + nd));
    }
    record("layernorm_backward dx", x->dt, split, rel_err(out[DEV], out[CPU], n),
           op_tolerance(x->dt), NULL);
    record("layernorm_backward dgamma", x->dt, split, rel_err(out[DEV] + n, out[CPU] + n, nd),
           op_tolerance(x->dt), NULL);
    record("layernorm_backward dbeta", x->dt, split,
           rel_err(out[DEV] + n + nd, out[CPU] + n + nd, nd), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* ------------------------------------------------------- causal softmax */

/* probs from scores; above the diagonal the scores hold values the op must
 * not read (the same on both sides), and probs must come out 0 there. */
static void check_causal_softmax_forward(sides *x, int t, int count, float scale)
{
    const char *check = "causal_softmax_forward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", t, count);
    size_t n = (size_t)t * t * count;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hs = host_random(&sc, &x->r, n, -6, 6, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *ds, *dp;
        TRY(b, put(&sc, side, s, hs, n, &ds));
        TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dp));
        TRY(b, bk_causal_softmax_forward(b, ds, dp, scale, t, count));
        TRY(b, get(b, s, dp, n, out[side]));
    }
    size_t above = 0;
    for (size_t c = 0; c < (size_t)t * count; c++)
        for (int j = (int)(c % (size_t)t) + 1; j < t; j++)
            above += out[DEV][c * t + j] != 0.0f;
    char note[64];
    snprintf(note, sizeof note, "%zu non-zero above the diagonal", above);
    record(check, x->dt, split, above ? NAN : rel_err(out[DEV], out[CPU], n),
           op_tolerance(x->dt), note);
done:
    scratch_free(&sc);
}

/* dscores from the same probabilities on both sides (random columns that
 * sum to 1, zero above the diagonal), into a separate buffer or in place
 * over dprobs. */
static void check_causal_softmax_backward(sides *x, int t, int count, float scale,
                                          int in_place)
{
    const char *check =
        in_place ? "causal_softmax_backward in-place" : "causal_softmax_backward";
    char split[24];
    snprintf(split, sizeof split, "%dx%d", t, count);
    size_t n = (size_t)t * t * count;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hp = host_random(&sc, &x->r, n, 0.05f, 1, STORAGE_F32);
    float *hdp = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (size_t c = 0; c < (size_t)t * count; c++) {
        int i = (int)(c % (size_t)t);
        float *col = hp + c * t;
        double sum = 0;
        for (int j = 0; j <= i; j++)
            sum += col[j];
        for (int j = 0; j < t; j++) {
            float p = j <= i ? (float)(col[j] / sum) : 0.0f;
            col[j] = x->st[DEV] == STORAGE_BF16 ? ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(p))
                                                : p;
        }
    }
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dp, *ddp, *dds;
        TRY(b, put(&sc, side, s, hp, n, &dp));
        TRY(b, put(&sc, side, s, hdp, n, &ddp));
        dds = ddp;
        if (!in_place)
            TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dds));
        TRY(b, bk_causal_softmax_backward(b, dp, ddp, dds, scale, t, count));
        TRY(b, get(b, s, dds, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* ----------------------------------------------------------- embeddings */

/* out from the tables; then dwte and dwpe added onto values already there.
 * Token ids drawn from `distinct` values (1: one token everywhere), so
 * that they repeat across the micro-batch. */
static void check_embedding(sides *x, int dim, int vocab, int t, int batch, int distinct)
{
    char split[24];
    snprintf(split, sizeof split, "%dx%dx%d", dim, t, batch);
    const char *check = distinct == 1 ? "embedding one token" : "embedding";
    size_t cols = (size_t)t * batch, n = cols * dim;
    size_t nte = (size_t)dim * vocab, npe = (size_t)dim * t;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hte = host_random(&sc, &x->r, nte, -1, 1, STORAGE_F32);
    float *hpe = host_random(&sc, &x->r, npe, -1, 1, STORAGE_F32);
    float *hdout = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *hdte = host_random(&sc, &x->r, nte, -1, 1, STORAGE_F32);
    float *hdpe = host_random(&sc, &x->r, npe, -1, 1, STORAGE_F32);
    int *tokens = (int *)host_alloc(&sc, cols);
    float *out[2] = {host_alloc(&sc, n + nte + npe), host_alloc(&sc, n + nte + npe)};
    NEED_HOST();
    for (size_t c = 0; c < cols; c++)
        tokens[c] = rng_below(&x->r, distinct) * 7 % vocab;
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dtok, *dte, *dpe, *dout, *ddout, *ddte, *ddpe;
        TRY(b, dev_alloc(&sc, side, cols * sizeof(int), &dtok));
        TRY(b, bk_upload(b, dtok, tokens, cols * sizeof(int)));
        TRY(b, put(&sc, side, STORAGE_F32, hte, nte, &dte));
        TRY(b, put(&sc, side, STORAGE_F32, hpe, npe, &dpe));
        TRY(b, put(&sc, side, s, hdout, n, &ddout));
        TRY(b, put(&sc, side, STORAGE_F32, hdte, nte, &ddte));
        TRY(b, put(&sc, side, STORAGE_F32, hdpe, npe, &ddpe));
        TRY(b, dev_alloc(&sc, side, n * storage_bytes(s), &dout));
        TRY(b, bk_embedding_forward(b, dtok, dte, dpe, dout, dim, t, batch));
        TRY(b, bk_embedding_backward(b, dtok, ddout, ddte, ddpe, dim, t, batch));
        TRY(b, get(b, s, dout, n, out[side]));
        TRY(b, get(b, STORAGE_F32, ddte, nte, out[side] + n));
        TRY(b, get(b, STORAGE_F32, ddpe, npe, out[side] + n + nte));
    }
    char name[48];
    snprintf(name, sizeof name, "%s forward", check);
    record(name, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), NULL);
    snprintf(name, sizeof name, "%s dwte", check);
    record(name, x->dt, split, rel_err(out[DEV] + n, out[CPU] + n, nte), op_tolerance(x->dt),
           NULL);
    snprintf(name, sizeof name, "%s dwpe", check);
    record(name, x->dt, split, rel_err(out[DEV] + n + nte, out[CPU] + n + nte, npe),
           op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* ------------------------------------------------------------ residual */

static void check_add(sides *x, size_t n)
{
    const char *check = "add";
    char split[24];
    snprintf(split, sizeof split, "%zu", n);
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hy = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *hx = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *dy, *dx;
        TRY(b, put(&sc, side, s, hy, n, &dy));
        TRY(b, put(&sc, side, s, hx, n, &dx));
        TRY(b, bk_add(b, dy, dx, n));
        TRY(b, get(b, s, dy, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), op_tolerance(x->dt), NULL);
done:
    scratch_free(&sc);
}

/* ------------------------------------------------------ head arrangement */

/* The tokens' layout into per-head blocks and back (one direction each
 * call), the output filled with NaN first: an element the kernel never
 * writes fails. A copy: the error must be 0 in every dtype. */
static void check_permute_heads(sides *x, int hd, int heads, int t, int batch, int parts,
                                int to_tokens)
{
    const char *check = to_tokens ? "heads to tokens" : "tokens to heads";
    char split[24];
    snprintf(split, sizeof split, "%dx%dx%dx%dx%d", hd, heads, t, batch, parts);
    size_t n = (size_t)hd * heads * t * batch * parts;
    scratch sc = {.b = {x->b[CPU], x->b[DEV]}};
    float *hs = host_random(&sc, &x->r, n, -1, 1, x->st[DEV]), *nan = host_alloc(&sc, n);
    float *out[2] = {host_alloc(&sc, n), host_alloc(&sc, n)};
    NEED_HOST();
    for (size_t i = 0; i < n; i++)
        nan[i] = NAN;
    for (int side = 0; side < 2; side++) {
        backend *b = sc.b[side];
        storage s = x->st[side];
        void *src, *dst;
        TRY(b, put(&sc, side, s, hs, n, &src));
        TRY(b, put(&sc, side, s, nan, n, &dst));
        TRY(b, bk_permute_heads(b, src, dst, hd, heads, t, batch, parts, to_tokens));
        TRY(b, get(b, s, dst, n, out[side]));
    }
    record(check, x->dt, split, rel_err(out[DEV], out[CPU], n), 0, NULL);
done:
    scratch_free(&sc);
}

void check_transformer_ops(sides *x)
{
    /* GPT-2 small's q, k, v (head_dim 64: 16-byte units in bf16), and an odd
     * head size (2- or 4-byte units). */
    for (int back = 0; back < 2; back++) {
        check_permute_heads(x, 64, 12, 128, 3, 3, back);
        check_permute_heads(x, 7, 3, 33, 2, 1, back);
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            check_gemm_batched(x, ta, tb, 40, 24, 33, 5, 0, 0.0f);
            check_gemm_batched(x, ta, tb, 32, 48, 64, 6, 1, 0.0f);
        }
    /* Attention's products at GPT-2 small's head size: scores = K^T Q and
     * the weighted sum V P, heads side by side; one accumulating. */
    check_gemm_batched(x, 1, 0, 256, 256, 64, 12, 1, 0.0f);
    check_gemm_batched(x, 0, 0, 64, 256, 256, 12, 1, 0.0f);
    check_gemm_batched(x, 0, 1, 64, 64, 256, 12, 0, 1.0f);
    /* 768: the column in registers (cuda_norm_regs.cuh) in both dtypes;
     * 100 in fp32 too; 2050 (not whole 16-byte vectors) and 100 in bf16:
     * the loop kernels. */
    check_layernorm_forward(x, 768, 300);
    check_layernorm_forward(x, 100, 7);
    check_layernorm_forward(x, 2050, 9);
    check_layernorm_backward(x, 768, 300); /* the two-pass parameter gradient */
    check_layernorm_backward(x, 100, 7);   /* one pass */
    check_layernorm_backward(x, 2050, 9);
    check_causal_softmax_forward(x, 256, 24, 0.125f);
    check_causal_softmax_forward(x, 37, 5, 0.5f);
    check_causal_softmax_backward(x, 256, 24, 0.125f, 0);
    check_causal_softmax_backward(x, 37, 5, 0.5f, 1);
    check_embedding(x, 768, 512, 128, 4, 50);
    check_embedding(x, 64, 16, 33, 3, 1);
    check_add(x, 100003); /* an element a thread */
    check_add(x, 98304);  /* 16 bytes a lane */
}

/* GPT-2 small's sizes: the causal softmax at T = 1024 over its 12 heads,
 * LayerNorm over 16K rows of 768 (a micro-batch of 16 sequences), and the
 * head arrangement of one micro-batch of 8. */
void check_transformer_ops_real(sides *x)
{
    check_causal_softmax_forward(x, 1024, 12, 0.125f);
    check_causal_softmax_backward(x, 1024, 12, 0.125f, 1);
    check_layernorm_forward(x, 768, 16384);
    check_layernorm_backward(x, 768, 16384);
    check_permute_heads(x, 64, 12, 1024, 8, 3, 0);
    check_permute_heads(x, 64, 12, 1024, 8, 1, 1);
}
