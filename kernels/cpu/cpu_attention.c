/* The CPU backend's fused causal attention (backend_ops.attention_forward),
 * arranged as flash attention arranges it. Each (sequence, head) is one
 * thread's. Its queries go in blocks of QUERY_BLOCK: a block's scores
 * against the keys it sees (up to its last query) are made in a scratch
 * that stays in the core's cache, turned into probabilities there and
 * multiplied into the output at once. So the scores never go to memory,
 * and the keys past a block's last query are never multiplied. The
 * backward makes each block's probabilities again from the forward's
 * log-sum-exp.
 *
 * Why: on gpt-cpu's shape the materialised path (permute_heads, three
 * strided-batched products and the causal softmax) wrote and read back
 * 1 MiB of scores and 1 MiB of probabilities a layer, and its products ran
 * at 60-90 GFLOP/s in the step against 150-270 alone and warm.
 *
 * The products are small and run on the calling thread
 * (cpu_small_product.h): in registers where their rows are whole lanes,
 * which also skips what the causal mask zeros at a finer grain than the
 * blocks; through the GEMM library otherwise. They read q, k and v where
 * the projection wrote them (its token layout, leading dimension 3d) and
 * write the output and the gradients there too: no permute. Only k and v
 * are transposed, once per (sequence, head), for the products whose rows
 * run over the keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "cpu_lanes.h"
#include "cpu_small_product.h"
#include "elementwise.h"

/* Queries a block: 64 x 64 scores (16 KiB) at gpt-cpu's T = 64, and a
 * 64 x 1024 block (256 KiB, in L2) at GPT-2's T = 1024, of which the keys
 * past the block are never multiplied (about half of them over all the
 * blocks). */
#define QUERY_BLOCK 64

typedef struct attention_args {
    const float *qkv, *lse_in, *dy;
    float *y, *lse, *dqkv;
    float scale;
    int hd, heads, t;
    int out_of_memory; /* set by a chunk that could not get its scratch */
} attention_args;

/* One (sequence, head), `unit` = sequence * heads + head: where its q
 * starts in the qkv (k and v follow d and 2d rows below, in the same
 * column), where its output starts in a [d x N] buffer, and where its
 * queries' log-sum-exps start. */
typedef struct head_at {
    size_t qkv, tok, lse;
} head_at;

static head_at head_of(const attention_args *a, size_t unit)
{
    size_t hd = (size_t)a->hd, t = (size_t)a->t, d = (size_t)a->heads * hd;
    size_t seq = unit / (size_t)a->heads, h = unit % (size_t)a->heads;
    return (head_at){seq * t * 3 * d + h * hd, seq * t * d + h * hd, unit * t};
}

/* Queries q0 .. q0 + nq of one block, seeing keys 0 .. kend. Its scores
 * are a row a query, each row kend keys padded to whole lanes (ld). */
typedef struct query_block {
    int q0, nq, kend, ld;
} query_block;

static int whole_lanes(int n)
{
    return (n + LANES - 1) / LANES * LANES;
}

static query_block block_of(int t, int index)
{
    int q0 = index * QUERY_BLOCK, nq = t - q0 < QUERY_BLOCK ? t - q0 : QUERY_BLOCK;
    return (query_block){q0, nq, q0 + nq, whole_lanes(q0 + nq)};
}

/* Row c of the block's scores: query q0 + c against every key (its
 * columns), s[c, j] = q . k_j, from kt, the keys transposed: rows of the
 * head dimension, ld whole_lanes(t). The same product makes dP = dY V^T
 * from v transposed. Keys past each query are skipped (and masked after). */
static void block_scores(const attention_args *a, const float *q, size_t q_ld,
                         const float *kt, query_block qb, float *s)
{
    small_product g = {.m = qb.nq, .n = qb.ld, .k = a->hd, .a = q + (size_t)qb.q0 * q_ld,
                       .a_row = q_ld, .a_term = 1, .b = kt, .ldb = (size_t)whole_lanes(a->t),
                       .c = s, .ldc = (size_t)qb.ld, .limit = LIMIT_COLUMNS_UPTO,
                       .shift = qb.q0};
    small_product_run(&g);
}

/* Rows c of the block's queries (out(c, :) at out + (q0 + c) * out_ld),
 * (+)= sum over keys j <= q0 + c of w[c, j] x(j, :): the weighted sum of
 * v (y = P V) and of k (dQ = dS K). */
static void over_keys(const attention_args *a, const float *w, const float *x, size_t x_ld,
                      float *out, size_t out_ld, query_block qb)
{
    small_product g = {.m = qb.nq, .n = a->hd, .k = qb.kend, .a = w, .a_row = (size_t)qb.ld,
                       .a_term = 1, .b = x, .ldb = x_ld, .c = out + (size_t)qb.q0 * out_ld,
                       .ldc = out_ld, .limit = LIMIT_TERMS_UPTO, .shift = qb.q0};
    small_product_run(&g);
}

/* Rows j < kend of a key's gradient (out(j, :) at out + j * out_ld),
 * (+)= sum over the block's queries c >= j - q0 of w[c, j] x(q0 + c, :):
 * dV += P^T dY and dK += dS^T Q. */
static void over_queries(const attention_args *a, const float *w, const float *x, size_t x_ld,
                         float *out, size_t out_ld, query_block qb, int accumulate)
{
    small_product g = {.m = qb.kend, .n = a->hd, .k = qb.nq, .a = w, .a_row = 1,
                       .a_term = (size_t)qb.ld, .b = x + (size_t)qb.q0 * x_ld, .ldb = x_ld,
                       .c = out, .ldc = out_ld, .accumulate = accumulate,
                       .limit = LIMIT_TERMS_FROM, .shift = -qb.q0};
    small_product_run(&g);
}

/* x(j, e) = src[j * ld + e] for the t keys into rows e of dst (ld
 * whole_lanes(t)), the padding zero. */
static void transpose_keys(const attention_args *a, const float *src, size_t ld, float *dst)
{
    size_t tp = (size_t)whole_lanes(a->t);
    for (int e = 0; e < a->hd; e++) {
        float *row = dst + (size_t)e * tp;
        for (int j = 0; j < a->t; j++)
            row[j] = src[(size_t)j * ld + (size_t)e];
        for (size_t j = (size_t)a->t; j < tp; j++)
            row[j] = 0.0f;
    }
}

#define ATTENTION_INLINE static inline __attribute__((always_inline))

/* The row's lanes that hold query i's keys (j <= i), and 0 past them
 * up to kend. The causal rows are short (32 keys on average at T = 64),
 * so every loop here runs in whole lanes, the last block masked
 * (lanes_upto): with scalar tails of up to 15 elements, the softmax was a
 * third of the op. What lies past kend in the padding is never read
 * unmasked. */
ATTENTION_INLINE int seen_blocks(int i)
{
    return i / LANES + 1;
}

ATTENTION_INLINE void zero_past(float *row, int blocks, int kend)
{
    for (int j = blocks * LANES; j < kend; j++)
        row[j] = 0.0f;
}

/* exp(row[j] * scale - shift) for the keys j <= i, 0 for the rest of their
 * lanes; returns their sum. */
ATTENTION_INLINE float exp_seen(float *row, float scale, float shift, int i)
{
    lanes sum = {0};
    for (int b = 0; b < seen_blocks(i); b++) {
        float *e = row + b * LANES;
        for (int k = 0; k < LANES; k++) /* a loop of its own: it vectorises */
            e[k] = ew_exp(e[k] * scale - shift);
        lanes v = lanes_select(lanes_upto(b * LANES, i), lanes_load(e), lanes_splat(0.0f));
        lanes_store(e, v);
        sum += v;
    }
    return lanes_sum(sum);
}

/* Query i's row of scores into its probabilities; returns the
 * log-sum-exp of its scaled scores. */
ATTENTION_INLINE float probs_of(float *row, float scale, int i, int kend)
{
    int blocks = seen_blocks(i);
    lanes m = lanes_splat(-INFINITY);
    for (int b = 0; b < blocks; b++)
        m = lanes_max2(lanes_select(lanes_upto(b * LANES, i),
                                    lanes_load(row + b * LANES) * scale,
                                    lanes_splat(-INFINITY)), m);
    float maxv = lanes_max(m), sum = exp_seen(row, scale, maxv, i), inv_sum = 1.0f / sum;
    for (int b = 0; b < blocks; b++)
        lanes_store(row + b * LANES, lanes_load(row + b * LANES) * inv_sum);
    zero_past(row, blocks, kend);
    return maxv + logf(sum);
}

/* The same probabilities again from the log-sum-exp (to rounding). */
ATTENTION_INLINE void probs_again(float *row, float scale, float lse, int i, int kend)
{
    exp_seen(row, scale, lse, i);
    zero_past(row, seen_blocks(i), kend);
}

/* ds = scale p (dp - sum_j p_j dp_j) over the keys j <= i, 0 past them:
 * ew_causal_softmax_dscore, in masked lanes. ds may alias dp. */
ATTENTION_INLINE void dscores_of(const float *p, const float *dp, float *ds, float scale, int i,
                                 int kend)
{
    int blocks = seen_blocks(i);
    lanes acc = {0}, zero = lanes_splat(0.0f);
    for (int b = 0; b < blocks; b++)
        acc += lanes_select(lanes_upto(b * LANES, i),
                            lanes_load(p + b * LANES) * lanes_load(dp + b * LANES), zero);
    float dot = lanes_sum(acc);
    for (int b = 0; b < blocks; b++) {
        lanes v = lanes_load(p + b * LANES) * (lanes_load(dp + b * LANES) - dot) * scale;
        lanes_store(ds + b * LANES, lanes_select(lanes_upto(b * LANES, i), v, zero));
    }
    zero_past(ds, blocks, kend);
}

/* A chunk's scratch: `blocks` blocks of scores (QUERY_BLOCK rows of
 * whole_lanes(t)) and `transposed` keys-as-columns copies of hd rows, or
 * NULL (and the op fails) where the host has no memory for it. */
static size_t scores_floats(const attention_args *a)
{
    return (size_t)whole_lanes(a->t) * (size_t)(a->t < QUERY_BLOCK ? a->t : QUERY_BLOCK);
}

static size_t transposed_floats(const attention_args *a)
{
    return (size_t)whole_lanes(a->t) * (size_t)a->hd;
}

static float *scratch_of(attention_args *a, int blocks, int transposed)
{
    size_t n = (size_t)blocks * scores_floats(a) + (size_t)transposed * transposed_floats(a);
    float *s = malloc(n * sizeof *s);
    if (!s)
        __atomic_store_n(&a->out_of_memory, 1, __ATOMIC_RELAXED);
    return s;
}

CPU_HOT static void attention_forward_heads(void *ctx, size_t first, size_t last)
{
    attention_args *a = ctx;
    int t = a->t, d = a->heads * a->hd;
    size_t ld = 3 * (size_t)d;
    float *p = scratch_of(a, 1, 1);
    if (!p)
        return;
    float *kt = p + scores_floats(a);
    for (size_t unit = first; unit < last; unit++) {
        head_at at = head_of(a, unit);
        const float *q = a->qkv + at.qkv;
        transpose_keys(a, q + d, ld, kt);
        for (int index = 0; index * QUERY_BLOCK < t; index++) {
            query_block qb = block_of(t, index);
            block_scores(a, q, ld, kt, qb, p);
            for (int c = 0; c < qb.nq; c++)
                a->lse[at.lse + qb.q0 + c] = probs_of(p + (size_t)c * qb.ld, a->scale,
                                                      qb.q0 + c, qb.kend);
            over_keys(a, p, q + 2 * d, ld, a->y + at.tok, (size_t)d, qb);
        }
    }
    free(p);
}

/* The blocks go last first: the last sees every key, so its products of
 * dK and dV write them whole and the earlier blocks add theirs. */
CPU_HOT static void attention_backward_heads(void *ctx, size_t first, size_t last)
{
    attention_args *a = ctx;
    int t = a->t, d = a->heads * a->hd;
    size_t ld = 3 * (size_t)d;
    int blocks = (t + QUERY_BLOCK - 1) / QUERY_BLOCK;
    float *p = scratch_of(a, 2, 2);
    if (!p)
        return;
    float *ds = p + scores_floats(a), *kt = ds + scores_floats(a);
    float *vt = kt + transposed_floats(a);
    for (size_t unit = first; unit < last; unit++) {
        head_at at = head_of(a, unit);
        const float *q = a->qkv + at.qkv, *k = q + d;
        float *dq = a->dqkv + at.qkv, *dk = dq + d, *dv = dq + 2 * d;
        const float *dy = a->dy + at.tok;
        transpose_keys(a, k, ld, kt);
        transpose_keys(a, q + 2 * d, ld, vt);
        for (int index = blocks - 1; index >= 0; index--) {
            query_block qb = block_of(t, index);
            int later = index < blocks - 1;
            block_scores(a, q, ld, kt, qb, p);
            for (int c = 0; c < qb.nq; c++)
                probs_again(p + (size_t)c * qb.ld, a->scale, a->lse_in[at.lse + qb.q0 + c],
                            qb.q0 + c, qb.kend);
            block_scores(a, dy, (size_t)d, vt, qb, ds); /* dP = dY V^T */
            over_queries(a, p, dy, (size_t)d, dv, ld, qb, later);
            for (int c = 0; c < qb.nq; c++)
                dscores_of(p + (size_t)c * qb.ld, ds + (size_t)c * qb.ld,
                           ds + (size_t)c * qb.ld, a->scale, qb.q0 + c, qb.kend);
            over_keys(a, ds, k, ld, dq, ld, qb);
            over_queries(a, ds, q, ld, dk, ld, qb, later);
        }
    }
    free(p);
}

static int run_heads(backend *b, attention_args *a, int batch, cpu_range_fn fn)
{
    if (a->hd <= 0 || a->heads <= 0 || a->t <= 0 || batch <= 0)
        return BK_OK;
    cpu_gemm_parallel_for((size_t)batch * (size_t)a->heads, 1, fn, a);
    if (!a->out_of_memory)
        return BK_OK;
    snprintf(b->error, sizeof b->error, "out of host memory for attention's scratch of %zu "
             "floats", 2 * scores_floats(a) + 2 * transposed_floats(a));
    return BK_OOM;
}

int cpu_attention_forward(backend *b, storage s, const void *qkv, void *y, float *lse,
                          float scale, int hd, int heads, int t, int batch)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    attention_args a = {.qkv = qkv, .y = y, .lse = lse, .scale = scale, .hd = hd,
                        .heads = heads, .t = t};
    return run_heads(b, &a, batch, attention_forward_heads);
}

/* y is not read: a block's whole rows of probabilities and of dP are at
 * hand here, and D (dscores_of's dot) comes from them. */
int cpu_attention_backward(backend *b, storage s, const void *qkv, const void *y,
                           const float *lse, const void *dy, void *dqkv, float scale, int hd,
                           int heads, int t, int batch)
{
    (void)y;
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    attention_args a = {.qkv = qkv, .lse_in = lse, .dy = dy, .dqkv = dqkv, .scale = scale,
                        .hd = hd, .heads = heads, .t = t};
    return run_heads(b, &a, batch, attention_backward_heads);
}
