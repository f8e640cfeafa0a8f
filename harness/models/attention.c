/* Causal self-attention on the backend table (attention.h).
 *
 * The unfused path: a permute (bk_permute_heads) makes each of q, k and v
 * B x H contiguous [hd x T] blocks, block q * H + h for head h of sequence
 * q, so that every product of attention is ONE strided-batched GEMM over
 * all sequences and heads (stride hd * T; the scores' [T x T] blocks in
 * the same order, one query per column, what the causal softmax reads).
 * Four GEMMs and two softmax launches a layer whatever the micro-batch and
 * the head count: what accumulation costs in launches stays visible, as
 * with a fused kernel. */
#include "attention.h"

#include <math.h>

#include "dispatch.h"

float attention_scale(int hd) { return 1.0f / sqrtf((float)hd); }

void *attention_qkv_at(const attention_pass *ap, void *kept, void *scratch)
{
    return ap->fused ? kept : scratch;
}

/* One product per (sequence, head) block: batch B * H, one stride per
 * operand (in elements). */
static int gemm_heads(const attention_pass *ap, int ta, int tb, int m, int n, int k,
                      const void *a, int lda, int64_t sa, const void *b, int ldb, int64_t sb,
                      void *c, int ldc, int64_t sc)
{
    gemm_desc g = {
        .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 1.0f, .a = a,
        .lda = lda, .b = b, .ldb = ldb, .beta = 0.0f, .c = c, .ldc = ldc,
        .ab_storage = ap->lp->cs, .c_storage = ap->lp->cs,
        .batch = ap->batch * ap->heads, .stride_a = sa, .stride_b = sb, .stride_c = sc,
    };
    return bk_gemm(ap->lp->b, &g);
}

int attention_forward(const attention_pass *ap, void *kept, void *probs, void *scores,
                      void *scratch, void *y)
{
    const layer_pass *lp = ap->lp;
    int hd = ap->hd, t = ap->t, nh = ap->heads, rc;
    float scale = attention_scale(hd);
    if (ap->fused)
        return bk_attention_forward(lp->b, kept, y, probs, scale, hd, nh, t, ap->batch);
    size_t part = (size_t)hd * nh * lp->n;
    int64_t s_blk = (int64_t)t * hd, s_tt = (int64_t)t * t;
    const void *q = kept, *k = layer_at(lp, kept, part), *v = layer_at(lp, kept, 2 * part);
    void *heads_out = layer_at(lp, scratch, 3 * part); /* the outputs per head */
    if ((rc = bk_permute_heads(lp->b, scratch, kept, hd, nh, t, ap->batch, 3, 0)) ||
        /* S[j, i] = k_j . q_i: K^T Q. */
        (rc = gemm_heads(ap, 1, 0, t, t, hd, k, hd, s_blk, q, hd, s_blk, scores, t, s_tt)) ||
        (rc = bk_causal_softmax_forward(lp->b, scores, probs, scale, t, nh * ap->batch)) ||
        /* y_i = sum_j P[j, i] v_j: V P. */
        (rc = gemm_heads(ap, 0, 0, hd, t, t, v, hd, s_blk, probs, t, s_tt, heads_out, hd,
                         s_blk)))
        return rc;
    return bk_permute_heads(lp->b, heads_out, y, hd, nh, t, ap->batch, 1, 1);
}

/* Unfused, `scratch` holds the gradients per head: dq, dk, dv, then dy;
 * `dscores` the gradients of the probabilities, then of the scores. */
int attention_backward(const attention_pass *ap, const void *kept, const void *probs,
                       const void *y, const void *dy, void *dscores, void *scratch, void *dqkv)
{
    const layer_pass *lp = ap->lp;
    int hd = ap->hd, t = ap->t, nh = ap->heads, rc;
    float scale = attention_scale(hd);
    if (ap->fused)
        return bk_attention_backward(lp->b, kept, y, probs, dy, dqkv, scale, hd, nh, t,
                                     ap->batch);
    size_t part = (size_t)hd * nh * lp->n;
    int64_t s_blk = (int64_t)t * hd, s_tt = (int64_t)t * t;
    const void *q = kept, *k = layer_at(lp, kept, part), *v = layer_at(lp, kept, 2 * part);
    void *dq = scratch, *dk = layer_at(lp, scratch, part), *dv = layer_at(lp, scratch, 2 * part);
    void *dyh = layer_at(lp, scratch, 3 * part);
    if ((rc = bk_permute_heads(lp->b, dy, dyh, hd, nh, t, ap->batch, 1, 0)) ||
        /* dP = V^T dY; dV = dY P^T. */
        (rc = gemm_heads(ap, 1, 0, t, t, hd, v, hd, s_blk, dyh, hd, s_blk, dscores, t, s_tt)) ||
        (rc = gemm_heads(ap, 0, 1, hd, t, t, dyh, hd, s_blk, probs, t, s_tt, dv, hd, s_blk)) ||
        (rc = bk_causal_softmax_backward(lp->b, probs, dscores, dscores, scale, t,
                                         nh * ap->batch)) ||
        /* dQ = K dS; dK = Q dS^T. */
        (rc = gemm_heads(ap, 0, 0, hd, t, t, k, hd, s_blk, dscores, t, s_tt, dq, hd, s_blk)) ||
        (rc = gemm_heads(ap, 0, 1, hd, t, t, q, hd, s_blk, dscores, t, s_tt, dk, hd, s_blk)))
        return rc;
    return bk_permute_heads(lp->b, scratch, dqkv, hd, nh, t, ap->batch, 3, 1);
}
