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
 * The products are the GEMM library's, each whole on one thread
 * (cpu_sgemm_in_loop), reading q, k and v where the projection wrote them
 * (its token layout, leading dimension 3d) and writing the output and the
 * gradients there too: no permute. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "elementwise.h"
#include "cpu_lanes.h"

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
 * are a [kend x nq] block, one query per column, each column padded to
 * whole lanes (ld). */
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

/* s[j, c] = k_j . q_{q0 + c}. */
static void block_scores(const attention_args *a, const float *q, query_block qb, float *s)
{
    int d = a->heads * a->hd, ld = 3 * d;
    cpu_sgemm_in_loop(1, 0, qb.kend, qb.nq, a->hd, 1.0f, q + d, ld, q + (size_t)qb.q0 * ld, ld,
                      0.0f, s, qb.ld);
}

#define ATTENTION_INLINE static inline __attribute__((always_inline))

/* The column's lanes that hold query i's keys (j <= i), and 0 past them
 * up to kend. The causal columns are short (32 keys on average at T = 64),
 * so every loop here runs in whole lanes, the last block masked
 * (lanes_upto): with scalar tails of up to 15 elements, the softmax was a
 * third of the op. What lies past kend in the padding is never read
 * unmasked. */
ATTENTION_INLINE int seen_blocks(int i)
{
    return i / LANES + 1;
}

ATTENTION_INLINE void zero_past(float *col, int blocks, int kend)
{
    for (int j = blocks * LANES; j < kend; j++)
        col[j] = 0.0f;
}

/* exp(col[j] * scale - shift) for the keys j <= i, 0 for the rest of their
 * lanes; returns their sum. */
ATTENTION_INLINE float exp_seen(float *col, float scale, float shift, int i)
{
    lanes sum = {0};
    for (int b = 0; b < seen_blocks(i); b++) {
        float *e = col + b * LANES;
        for (int k = 0; k < LANES; k++) /* a loop of its own: it vectorises */
            e[k] = ew_exp(e[k] * scale - shift);
        lanes v = lanes_select(lanes_upto(b * LANES, i), lanes_load(e), lanes_splat(0.0f));
        lanes_store(e, v);
        sum += v;
    }
    return lanes_sum(sum);
}

/* Query i's column of scores into its probabilities; returns the
 * log-sum-exp of its scaled scores. */
ATTENTION_INLINE float probs_of(float *col, float scale, int i, int kend)
{
    int blocks = seen_blocks(i);
    lanes m = lanes_splat(-INFINITY);
    for (int b = 0; b < blocks; b++)
        m = lanes_max2(lanes_select(lanes_upto(b * LANES, i),
                                    lanes_load(col + b * LANES) * scale,
                                    lanes_splat(-INFINITY)), m);
    float maxv = lanes_max(m), sum = exp_seen(col, scale, maxv, i), inv_sum = 1.0f / sum;
    for (int b = 0; b < blocks; b++)
        lanes_store(col + b * LANES, lanes_load(col + b * LANES) * inv_sum);
    zero_past(col, blocks, kend);
    return maxv + logf(sum);
}

/* The same probabilities again from the log-sum-exp (to rounding). */
ATTENTION_INLINE void probs_again(float *col, float scale, float lse, int i, int kend)
{
    exp_seen(col, scale, lse, i);
    zero_past(col, seen_blocks(i), kend);
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

/* A chunk's scratch of `count` score blocks (t x QUERY_BLOCK, the columns
 * padded to whole lanes), or NULL (and the op fails) where the host has no
 * memory for it. */
static size_t scratch_block(const attention_args *a)
{
    return (size_t)whole_lanes(a->t) * (size_t)(a->t < QUERY_BLOCK ? a->t : QUERY_BLOCK);
}

static float *scratch_of(attention_args *a, int count)
{
    float *s = malloc((size_t)count * scratch_block(a) * sizeof *s);
    if (!s)
        __atomic_store_n(&a->out_of_memory, 1, __ATOMIC_RELAXED);
    return s;
}

CPU_HOT static void attention_forward_heads(void *ctx, size_t first, size_t last)
{
    attention_args *a = ctx;
    int t = a->t, d = a->heads * a->hd, ld = 3 * d;
    float *p = scratch_of(a, 1);
    if (!p)
        return;
    for (size_t unit = first; unit < last; unit++) {
        head_at at = head_of(a, unit);
        const float *q = a->qkv + at.qkv;
        for (int index = 0; index * QUERY_BLOCK < t; index++) {
            query_block qb = block_of(t, index);
            block_scores(a, q, qb, p);
            for (int c = 0; c < qb.nq; c++)
                a->lse[at.lse + qb.q0 + c] = probs_of(p + (size_t)c * qb.ld, a->scale,
                                                      qb.q0 + c, qb.kend);
            /* y_i = sum_j P[j, i] v_j: V P. */
            cpu_sgemm_in_loop(0, 0, a->hd, qb.nq, qb.kend, 1.0f, q + 2 * d, ld, p, qb.ld,
                              0.0f, a->y + at.tok + (size_t)qb.q0 * d, d);
        }
    }
    free(p);
}

/* The blocks go last first: the last sees every key, so its products of
 * dK and dV write them whole (beta 0) and the earlier blocks add theirs. */
CPU_HOT static void attention_backward_heads(void *ctx, size_t first, size_t last)
{
    attention_args *a = ctx;
    int t = a->t, hd = a->hd, d = a->heads * hd, ld = 3 * d;
    int blocks = (t + QUERY_BLOCK - 1) / QUERY_BLOCK;
    float *p = scratch_of(a, 2);
    if (!p)
        return;
    float *ds = p + scratch_block(a);
    for (size_t unit = first; unit < last; unit++) {
        head_at at = head_of(a, unit);
        const float *q = a->qkv + at.qkv, *k = q + d, *v = q + 2 * d;
        float *dq = a->dqkv + at.qkv, *dk = dq + d, *dv = dq + 2 * d;
        for (int index = blocks - 1; index >= 0; index--) {
            query_block qb = block_of(t, index);
            int n = qb.nq, kend = qb.kend, lds = qb.ld;
            float beta = index == blocks - 1 ? 0.0f : 1.0f;
            const float *dy = a->dy + at.tok + (size_t)qb.q0 * d, *qi = q + (size_t)qb.q0 * ld;
            block_scores(a, q, qb, p);
            for (int c = 0; c < n; c++)
                probs_again(p + (size_t)c * lds, a->scale, a->lse_in[at.lse + qb.q0 + c],
                            qb.q0 + c, kend);
            /* dP = V^T dY; dV += dY P^T. */
            cpu_sgemm_in_loop(1, 0, kend, n, hd, 1.0f, v, ld, dy, d, 0.0f, ds, lds);
            cpu_sgemm_in_loop(0, 1, hd, kend, n, 1.0f, dy, d, p, lds, beta, dv, ld);
            for (int c = 0; c < n; c++)
                dscores_of(p + (size_t)c * lds, ds + (size_t)c * lds, ds + (size_t)c * lds,
                           a->scale, qb.q0 + c, kend);
            /* dQ = K dS; dK += Q dS^T. */
            cpu_sgemm_in_loop(0, 0, hd, n, kend, 1.0f, k, ld, ds, lds, 0.0f,
                              dq + (size_t)qb.q0 * ld, ld);
            cpu_sgemm_in_loop(0, 1, hd, kend, n, 1.0f, qi, ld, ds, lds, beta, dk, ld);
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
             "scores", scratch_block(a));
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

int cpu_attention_backward(backend *b, storage s, const void *qkv, const float *lse,
                           const void *dy, void *dqkv, float scale, int hd, int heads, int t,
                           int batch)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    attention_args a = {.qkv = qkv, .lse_in = lse, .dy = dy, .dqkv = dqkv, .scale = scale,
                        .hd = hd, .heads = heads, .t = t};
    return run_heads(b, &a, batch, attention_backward_heads);
}
