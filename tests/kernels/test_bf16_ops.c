/* The CPU backend's ops in bf16 storage against the same ops in fp32.
 *
 * Every input is a bf16 value (random, rounded), given to the fp32
 * backend as floats and to the bf16 backend as its bits, so both read the
 * same numbers and compute the same fp32 math (the fp32 ops are tested
 * against float64 in test_transformer_ops.c, test_llama_ops.c,
 * test_elementwise.c and test_gemm.c). What the bf16 op adds is the
 * rounding of each output it stores: at most 2^-9 of the value (round to
 * nearest even), so a relative L2 error within ROUNDED = 2^-8 leaves room
 * for an output computed from another rounded one (GELU from the stored
 * pre-activation). What it keeps in fp32 (the parameter gradients, the
 * residual's input gradient, the norms' statistics, the loss) must match
 * within FP32 = 1e-5: only the order of fp32 sums may differ. A bug (a
 * wrong index, a lost term, bytes read as the wrong storage) is off by
 * 1e-1 or more. Sizes pass the ops' thresholds for their threads (2^16
 * elements) and the GEMM's 256-wide tiles, with tails. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dispatch.h"
#include "elementwise.h"
#include "rng.h"
#include "test_cpu_backend.h"

#define ROUNDED 0x1p-8
#define FP32 1e-5

typedef unsigned short bf16_bits;

static rng r = {77};
static backend *b32, *b16;

/* One operand: the same bf16 values as floats (f, for the fp32 backend)
 * and as bits (h, for the bf16 one). */
typedef struct pair {
    float *f;
    bf16_bits *h;
    size_t n;
} pair;

static pair make(size_t n, float lo, float hi)
{
    pair p = {malloc((n ? n : 1) * sizeof(float)), malloc((n ? n : 1) * sizeof(bf16_bits)), n};
    for (size_t i = 0; i < n; i++) {
        p.h[i] = ew_f32_to_bf16_bits(rng_uniform(&r, lo, hi));
        p.f[i] = ew_bf16_bits_to_f32(p.h[i]);
    }
    return p;
}

static void drop(pair *p)
{
    free(p->f), free(p->h);
}

static float *floats(size_t n, float lo, float hi)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(&r, lo, hi);
    return v;
}

static float *copy(const float *x, size_t n)
{
    float *c = malloc((n ? n : 1) * sizeof *c);
    memcpy(c, x, n * sizeof *c);
    return c;
}

/* Relative L2 error of got against want (absolute where want is all zero). */
static double rel_l2(const float *got, const float *want, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)got[i] - want[i];
        num += d * d;
        den += (double)want[i] * want[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* The bf16 output p.h against the fp32 output p.f. */
static void expect_rounded(const char *what, const pair *p)
{
    float *got = malloc((p->n ? p->n : 1) * sizeof *got);
    for (size_t i = 0; i < p->n; i++)
        got[i] = ew_bf16_bits_to_f32(p->h[i]);
    double err = rel_l2(got, p->f, p->n);
    check_count++;
    if (!(err <= ROUNDED)) {
        check_failures++;
        fprintf(stderr, "  %s: bf16 against fp32, relative error %.3g (over %g)\n", what, err,
                ROUNDED);
    }
    free(got);
}

static void expect_fp32(const char *what, const float *got, const float *want, size_t n)
{
    double err = rel_l2(got, want, n);
    check_count++;
    if (!(err <= FP32)) {
        check_failures++;
        fprintf(stderr, "  %s: bf16 run's fp32 output, relative error %.3g (over %g)\n", what,
                err, FP32);
    }
}

/* ---------------------------------------------------------------- GEMM */

/* C = alpha op(A) op(B) + beta C, with C in fp32 (a weight gradient,
 * beta 1) or in bf16 (an activation), batched or not. */
static void test_gemm(int ta, int tb, int m, int n, int k, float beta, storage cs, int batch)
{
    int lda = (ta ? k : m) + 3, ldb = (tb ? n : k) + 1, ldc = m + 2;
    size_t sa = (size_t)lda * (ta ? m : k), sb = (size_t)ldb * (tb ? k : n);
    size_t sc = (size_t)ldc * n, nb = batch > 1 ? (size_t)batch : 1;
    pair a = make(sa * nb, -1, 1), bm = make(sb * nb, -1, 1), c = make(sc * nb, -1, 1);
    float *c16 = copy(c.f, sc * nb); /* the bf16 run's C where C is fp32 */
    gemm_desc g = {ta, tb, m, n, k, 0.75f, a.f, lda, bm.f, ldb, beta, c.f, ldc, STORAGE_F32,
                   STORAGE_F32, batch, (int64_t)sa, (int64_t)sb, (int64_t)sc};
    CHECK(bk_gemm(b32, &g) == BK_OK);
    g.a = a.h, g.b = bm.h, g.ab_storage = STORAGE_BF16, g.c_storage = cs;
    g.c = cs == STORAGE_BF16 ? (void *)c.h : (void *)c16;
    CHECK(bk_gemm(b16, &g) == BK_OK);
    char what[96];
    snprintf(what, sizeof what, "gemm %c%c %dx%dx%d beta %g batch %d, C %s", ta ? 'T' : 'N',
             tb ? 'T' : 'N', m, n, k, beta, batch, cs == STORAGE_BF16 ? "bf16" : "fp32");
    if (cs == STORAGE_BF16)
        expect_rounded(what, &c);
    else
        expect_fp32(what, c16, c.f, sc * nb);
    drop(&a), drop(&bm), drop(&c), free(c16);
}

/* ----------------------------------------------------- the MLP's ops */

static void test_mlp_ops(int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    float *bias = floats((size_t)rows, -0.5f, 0.5f);
    pair z = make(n, -3, 3), h = make(n, 0, 0), dh = make(n, -1, 1);
    CHECK(bk_bias_gelu_forward(b32, z.f, bias, h.f, rows, cols, 1) == BK_OK);
    CHECK(bk_bias_gelu_forward(b16, z.h, bias, h.h, rows, cols, 1) == BK_OK);
    expect_rounded("bias_gelu: z", &z);
    expect_rounded("bias_gelu: h", &h);
    drop(&z), z = make(n, -3, 3);
    CHECK(bk_bias_gelu_forward(b32, z.f, bias, NULL, rows, cols, 0) == BK_OK);
    CHECK(bk_bias_gelu_forward(b16, z.h, bias, NULL, rows, cols, 0) == BK_OK);
    expect_rounded("bias alone", &z);
    CHECK(bk_gelu_forward(b32, z.f, h.f, n) == BK_OK);
    CHECK(bk_gelu_forward(b16, z.h, h.h, n) == BK_OK);
    expect_rounded("gelu", &h);
    CHECK(bk_gelu_backward(b32, z.f, dh.f, dh.f, n) == BK_OK); /* in place, as the MLP's */
    CHECK(bk_gelu_backward(b16, z.h, dh.h, dh.h, n) == BK_OK);
    expect_rounded("gelu_backward", &dh);
    drop(&dh), dh = make(n, -1, 1);
    float *db = floats((size_t)rows, -1, 1), *db16 = copy(db, (size_t)rows);
    CHECK(bk_bias_grad(b32, dh.f, db, rows, cols) == BK_OK);
    CHECK(bk_bias_grad(b16, dh.h, db16, rows, cols) == BK_OK);
    expect_fp32("bias_grad", db16, db, (size_t)rows);
    drop(&z), drop(&h), drop(&dh), free(bias), free(db), free(db16);
}

static void test_softmax_xent(int classes, int count)
{
    size_t n = (size_t)classes * count;
    pair l = make(n, -4, 4), dl = make(n, 0, 0);
    int *labels = malloc((size_t)count * sizeof *labels), *valid = malloc((size_t)count * 4);
    for (int j = 0; j < count; j++)
        labels[j] = (j * 7919) % classes, valid[j] = j % 3 != 1;
    float scale = 0.125f, loss = 1.5f, loss16 = 1.5f;
    CHECK(bk_softmax_xent(b32, l.f, dl.f, labels, valid, &scale, &loss, classes, count) ==
          BK_OK);
    CHECK(bk_softmax_xent(b16, l.h, dl.h, labels, valid, &scale, &loss16, classes, count) ==
          BK_OK);
    expect_rounded("softmax_xent: dlogits", &dl);
    expect_fp32("softmax_xent: loss", &loss16, &loss, 1);
    drop(&l), drop(&dl), free(labels), free(valid);
}

/* ------------------------------------------------ the transformer's ops */

static void test_layernorm(int dim, int rows)
{
    size_t n = (size_t)dim * rows;
    pair x = make(n, -2, 2), y = make(n, 0, 0), dy = make(n, -1, 1);
    float *gamma = floats((size_t)dim, 0.5f, 1.5f), *beta = floats((size_t)dim, -0.5f, 0.5f);
    float *mean = floats((size_t)rows, 0, 0), *rstd = floats((size_t)rows, 0, 0);
    float *mean16 = copy(mean, (size_t)rows), *rstd16 = copy(rstd, (size_t)rows);
    CHECK(bk_layernorm_forward(b32, x.f, gamma, beta, y.f, mean, rstd, dim, rows) == BK_OK);
    CHECK(bk_layernorm_forward(b16, x.h, gamma, beta, y.h, mean16, rstd16, dim, rows) == BK_OK);
    expect_rounded("layernorm: y", &y);
    expect_fp32("layernorm: mean", mean16, mean, (size_t)rows);
    expect_fp32("layernorm: rstd", rstd16, rstd, (size_t)rows);
    float *dx = floats(n, -1, 1), *dx16 = copy(dx, n);
    float *dg = floats((size_t)dim, -1, 1), *dg16 = copy(dg, (size_t)dim);
    float *dbt = floats((size_t)dim, -1, 1), *dbt16 = copy(dbt, (size_t)dim);
    CHECK(bk_layernorm_backward(b32, dy.f, x.f, gamma, mean, rstd, dx, dg, dbt, dim, rows) ==
          BK_OK);
    CHECK(bk_layernorm_backward(b16, dy.h, x.h, gamma, mean, rstd, dx16, dg16, dbt16, dim,
                                rows) == BK_OK);
    expect_fp32("layernorm_backward: dx", dx16, dx, n);
    expect_fp32("layernorm_backward: dgamma", dg16, dg, (size_t)dim);
    expect_fp32("layernorm_backward: dbeta", dbt16, dbt, (size_t)dim);
    drop(&x), drop(&y), drop(&dy);
    free(gamma), free(beta), free(mean), free(rstd), free(mean16), free(rstd16);
    free(dx), free(dx16), free(dg), free(dg16), free(dbt), free(dbt16);
}

static void test_causal_softmax(int t, int count)
{
    size_t n = (size_t)t * t * count;
    pair s = make(n, -3, 3), p = make(n, 0, 0), dp = make(n, -1, 1);
    CHECK(bk_causal_softmax_forward(b32, s.f, p.f, 0.5f, t, count) == BK_OK);
    CHECK(bk_causal_softmax_forward(b16, s.h, p.h, 0.5f, t, count) == BK_OK);
    expect_rounded("causal_softmax", &p);
    /* The backward from the rounded probabilities both runs hold. */
    for (size_t i = 0; i < n; i++)
        p.f[i] = ew_bf16_bits_to_f32(p.h[i]);
    CHECK(bk_causal_softmax_backward(b32, p.f, dp.f, dp.f, 0.5f, t, count) == BK_OK);
    CHECK(bk_causal_softmax_backward(b16, p.h, dp.h, dp.h, 0.5f, t, count) == BK_OK);
    expect_rounded("causal_softmax_backward", &dp);
    drop(&s), drop(&p), drop(&dp);
}

static void test_embeddings(int dim, int t, int batch, int vocab, int positions)
{
    size_t n = (size_t)dim * t * batch;
    int *tokens = malloc((size_t)t * batch * sizeof *tokens);
    for (int c = 0; c < t * batch; c++)
        tokens[c] = (c * 31) % vocab;
    float *wte = floats((size_t)dim * vocab, -1, 1), *wpe = floats((size_t)dim * t, -1, 1);
    pair out = make(n, 0, 0), dout = make(n, -1, 1);
    float *pe = positions ? wpe : NULL;
    CHECK(bk_embedding_forward(b32, tokens, wte, pe, out.f, dim, t, batch) == BK_OK);
    CHECK(bk_embedding_forward(b16, tokens, wte, pe, out.h, dim, t, batch) == BK_OK);
    expect_rounded(positions ? "embedding" : "embedding without positions", &out);
    float *dte = floats((size_t)dim * vocab, -1, 1), *dte16 = copy(dte, (size_t)dim * vocab);
    float *dpe = floats((size_t)dim * t, -1, 1), *dpe16 = copy(dpe, (size_t)dim * t);
    CHECK(bk_embedding_backward(b32, tokens, dout.f, dte, positions ? dpe : NULL, dim, t,
                                batch) == BK_OK);
    CHECK(bk_embedding_backward(b16, tokens, dout.h, dte16, positions ? dpe16 : NULL, dim, t,
                                batch) == BK_OK);
    expect_fp32("embedding_backward: dwte", dte16, dte, (size_t)dim * vocab);
    expect_fp32("embedding_backward: dwpe", dpe16, dpe, (size_t)dim * t);
    drop(&out), drop(&dout), free(tokens), free(wte), free(wpe);
    free(dte), free(dte16), free(dpe), free(dpe16);
}

static void test_add_and_permute(int hd, int heads, int t, int batch)
{
    size_t n = (size_t)3 * heads * hd * t * batch;
    pair y = make(n, -1, 1), x = make(n, -1, 1), heads_out = make(n, 0, 0);
    CHECK(bk_add(b32, y.f, x.f, n) == BK_OK);
    CHECK(bk_add(b16, y.h, x.h, n) == BK_OK);
    expect_rounded("add", &y);
    /* A permute moves bits: the bf16 result is the fp32 one exactly. */
    for (int to_tokens = 0; to_tokens <= 1; to_tokens++) {
        CHECK(bk_permute_heads(b32, x.f, heads_out.f, hd, heads, t, batch, 3, to_tokens) ==
              BK_OK);
        CHECK(bk_permute_heads(b16, x.h, heads_out.h, hd, heads, t, batch, 3, to_tokens) ==
              BK_OK);
        size_t wrong = 0;
        for (size_t i = 0; i < n; i++)
            wrong += ew_bf16_bits_to_f32(heads_out.h[i]) != heads_out.f[i];
        CHECK(wrong == 0);
    }
    drop(&y), drop(&x), drop(&heads_out);
}

/* ----------------------------------------------------- the Llama's ops */

static void test_rmsnorm(int dim, int rows)
{
    size_t n = (size_t)dim * rows;
    pair x = make(n, -2, 2), y = make(n, 0, 0), dy = make(n, -1, 1);
    float *gamma = floats((size_t)dim, 0.5f, 1.5f), *rstd = floats((size_t)rows, 0, 0);
    float *rstd16 = copy(rstd, (size_t)rows);
    CHECK(bk_rmsnorm_forward(b32, x.f, gamma, y.f, rstd, dim, rows) == BK_OK);
    CHECK(bk_rmsnorm_forward(b16, x.h, gamma, y.h, rstd16, dim, rows) == BK_OK);
    expect_rounded("rmsnorm: y", &y);
    expect_fp32("rmsnorm: rstd", rstd16, rstd, (size_t)rows);
    float *dx = floats(n, -1, 1), *dx16 = copy(dx, n);
    float *dg = floats((size_t)dim, -1, 1), *dg16 = copy(dg, (size_t)dim);
    CHECK(bk_rmsnorm_backward(b32, dy.f, x.f, gamma, rstd, dx, dg, dim, rows) == BK_OK);
    CHECK(bk_rmsnorm_backward(b16, dy.h, x.h, gamma, rstd, dx16, dg16, dim, rows) == BK_OK);
    expect_fp32("rmsnorm_backward: dx", dx16, dx, n);
    expect_fp32("rmsnorm_backward: dgamma", dg16, dg, (size_t)dim);
    drop(&x), drop(&y), drop(&dy), free(gamma), free(rstd), free(rstd16);
    free(dx), free(dx16), free(dg), free(dg16);
}

static void test_swiglu(size_t n)
{
    pair gate = make(n, -4, 4), up = make(n, -2, 2), h = make(n, 0, 0), dh = make(n, -1, 1);
    pair dup = make(n, 0, 0);
    CHECK(bk_swiglu_forward(b32, gate.f, up.f, h.f, n) == BK_OK);
    CHECK(bk_swiglu_forward(b16, gate.h, up.h, h.h, n) == BK_OK);
    expect_rounded("swiglu", &h);
    CHECK(bk_swiglu_backward(b32, gate.f, up.f, dh.f, dh.f, dup.f, n) == BK_OK);
    CHECK(bk_swiglu_backward(b16, gate.h, up.h, dh.h, dh.h, dup.h, n) == BK_OK);
    expect_rounded("swiglu_backward: dgate", &dh);
    expect_rounded("swiglu_backward: dup", &dup);
    drop(&gate), drop(&up), drop(&h), drop(&dh), drop(&dup);
}

static void test_rotary_and_repeat(int hd, int kv_heads, int group, int t, int cols)
{
    int heads = kv_heads * group, ld = 3 * heads * hd;
    size_t n = (size_t)ld * cols;
    pair x = make(n, -1, 1);
    CHECK(bk_rotary_forward(b32, x.f, ld, heads, hd, t, cols, 10000.0f) == BK_OK);
    CHECK(bk_rotary_forward(b16, x.h, ld, heads, hd, t, cols, 10000.0f) == BK_OK);
    expect_rounded("rotary", &x);
    CHECK(bk_rotary_backward(b32, x.f, ld, heads, hd, t, cols, 10000.0f) == BK_OK);
    CHECK(bk_rotary_backward(b16, x.h, ld, heads, hd, t, cols, 10000.0f) == BK_OK);
    expect_rounded("rotary_backward", &x);
    size_t kvn = (size_t)2 * kv_heads * hd * cols;
    pair kv = make(kvn, -1, 1), dst = make(n, 0, 0), dkv = make(kvn, 0, 0);
    CHECK(bk_repeat_kv_forward(b32, kv.f, dst.f, ld, hd, kv_heads, group, 2, cols) == BK_OK);
    CHECK(bk_repeat_kv_forward(b16, kv.h, dst.h, ld, hd, kv_heads, group, 2, cols) == BK_OK);
    expect_rounded("repeat_kv", &dst);
    CHECK(bk_repeat_kv_backward(b32, x.f, ld, dkv.f, hd, kv_heads, group, 2, cols) == BK_OK);
    CHECK(bk_repeat_kv_backward(b16, x.h, ld, dkv.h, hd, kv_heads, group, 2, cols) == BK_OK);
    expect_rounded("repeat_kv_backward", &dkv);
    drop(&x), drop(&kv), drop(&dst), drop(&dkv);
}

/* ------------------------------------------------------ the conversions */

/* convert rounds to nearest, ties to even, keeps NaN a NaN; to_f32 is
 * exact; both across the threads' cut. */
static void test_convert(void)
{
    const float in[] = {1.0f + 0x1p-8f,        /* a tie: to 1 (even) */
                        1.0f + 3 * 0x1p-8f,    /* a tie: up to 1 + 2^-6 */
                        1.0f + 0x1p-8f + 0x1p-12f, /* past the tie: up */
                        -2.5f, 0.0f, NAN};
    const bf16_bits want[] = {0x3f80, 0x3f82, 0x3f81, 0xc020, 0x0000};
    bf16_bits got[6];
    CHECK(b16->ops->convert(b16, in, got, STORAGE_BF16, 6) == BK_OK);
    for (int i = 0; i < 5; i++)
        CHECK(got[i] == want[i]);
    CHECK(isnan(ew_bf16_bits_to_f32(got[5])));
    size_t n = ((size_t)1 << 17) + 3;
    float *x = floats(n, -100, 100), *back = malloc(n * sizeof *back);
    bf16_bits *h = malloc(n * sizeof *h);
    CHECK(bk_convert(b16, x, h, STORAGE_BF16, n) == BK_OK);
    CHECK(b16->ops->to_f32(b16, h, STORAGE_BF16, back, n) == BK_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += h[i] != ew_f32_to_bf16_bits(x[i]) || back[i] != ew_bf16_bits_to_f32(h[i]);
    CHECK(wrong == 0);
    free(x), free(back), free(h);
}

int main(void)
{
    b32 = test_cpu_backend();
    b16 = test_cpu_backend_of(DTYPE_BF16);
    if (!b32 || !b16)
        return 1;
    CHECK(b16->compute_storage == STORAGE_BF16);
    /* bf16 takes the unfused attention: the fused op reads fp32 alone. */
    CHECK(!b16->ops->attention_forward && !b16->ops->attention_backward);
    test_convert();
    for (int ta = 0; ta <= 1; ta++)
        for (int tb = 0; tb <= 1; tb++) {
            test_gemm(ta, tb, 300, 270, 520, 1.0f, STORAGE_F32, 1);
            test_gemm(ta, tb, 300, 270, 520, 0.0f, STORAGE_BF16, 1);
            test_gemm(ta, tb, 70, 33, 40, 0.5f, STORAGE_BF16, 1);
        }
    test_gemm(1, 0, 64, 64, 32, 0.0f, STORAGE_BF16, 6); /* attention's batched products */
    test_gemm(0, 1, 32, 64, 64, 1.0f, STORAGE_F32, 6);
    test_gemm(0, 0, 5, 3, 0, 0.5f, STORAGE_BF16, 1);    /* k = 0: C = beta C */
    test_mlp_ops(1024, 70);
    test_mlp_ops(13, 5);
    test_softmax_xent(2048, 33);
    test_softmax_xent(7, 5);
    test_layernorm(200, 700);
    test_layernorm(19, 3);
    test_causal_softmax(70, 5);
    test_embeddings(128, 64, 9, 300, 1);
    test_embeddings(20, 5, 2, 7, 0);
    test_add_and_permute(16, 4, 64, 9);
    test_rmsnorm(200, 700);
    test_swiglu(((size_t)1 << 16) + 5);
    test_rotary_and_repeat(16, 2, 3, 64, 130);
    b32->ops->destroy(b32);
    b16->ops->destroy(b16);
    return check_finish("test_bf16_ops");
}
