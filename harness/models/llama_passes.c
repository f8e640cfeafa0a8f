/* The Llama's passes on the backend table: the buffers of one
 * micro-batch, and the forward (through the loss) and backward passes over
 * them. The shapes, the weights and the accounting are in llama.c;
 * attention and the head are the decoders' (attention.h, decoder_head.h). */
#include "llama.h"

#include <limits.h>
#include <stdio.h>

#include "attention.h"
#include "decoder_head.h"
#include "dispatch.h"
#include "layers.h"

/* --------------------------------------------------------- activations */

/* The buffers of one micro-batch: the model-wide ones, then each block's.
 * What the backward pass reads is kept per block; the rest is scratch
 * reused by every block. */
enum {
    A_RES0,   /* [d x N] the embeddings: block 0's input */
    A_HEAD,   /* the head's chunk buffers (decoder_head.h) */
    A_SCORES = A_HEAD + DECODER_HEAD_BUFFERS, /* [T x T x H x B] scores; in
                 backward, their gradients (none where attention is fused) */
    A_DRES,   /* fp32 [d x N] the gradient of the residual stream: the
                 forward leaves the last block's output's there */
    A_DRES_C, /* [d x N] its compute-storage copy, what the GEMMs read
                 (none in fp32: A_DRES itself) */
    A_DX,     /* [d x N] the gradient of a norm's output, of attention's */
    A_DWIDE,  /* [max(ffn, 3d) x N] the gradient of the SwiGLU's output,
                 then of the gate; of q, k and v (token layout) */
    A_DUP,    /* [ffn x N] the gradient of the up projection */
    A_KV,     /* [2 kv_dim x N] k and v as projected (before the repeat),
                 and in the backward their gradients */
    A_HEADS,  /* [4d x N] attention's scratch (attention.h; none where
                 attention is fused) */
    A_GLOBAL
};
enum {
    B_NORM1,  /* [d x N] */
    B_RSTD1,  /* fp32 [N] */
    B_QKV,    /* [3d x N] q and k turned, k and v repeated for every query
                 head (attention.h: fused, the token layout; else the
                 heads' blocks) */
    B_PROBS,  /* [T x T x H x B] the attention weights; fused, fp32
                 [T x H x B]: each query's log-sum-exp */
    B_ATTY,   /* [d x N] the weighted sums, heads stacked */
    B_RES_MID, /* [d x N] the residual stream after attention */
    B_NORM2,  /* [d x N] */
    B_RSTD2,  /* fp32 [N] */
    B_GATE,   /* [ffn x N] */
    B_UP,     /* [ffn x N] */
    B_ACT,    /* [ffn x N] silu(gate) * up */
    B_RES_OUT, /* [d x N] the block's output */
    B_COUNT
};

_Static_assert(A_GLOBAL + LLAMA_MAX_LAYERS * B_COUNT <= MODEL_MAX_ACTIVATIONS,
               "the deepest Llama's activations fit the activations table");

/* Recomputation keeps the order of the buffers and gives those it does not
 * keep 0 bytes. block: every block keeps its output (the next block's
 * input) alone, and block 0's buffers serve every block: the forward
 * writes each block there, and the backward recomputes block i's forward
 * into them (all but the down projection, which its backward does not
 * read) just before block i's backward. */
static int block_keeps(const model_spec *s, int l, int which)
{
    if (s->recompute == RECOMPUTE_BLOCK)
        return l == 0 || which == B_RES_OUT;
    return 1;
}

/* The final RMSNorm and the LM head (the embedding when tied). */
static decoder_head head_of(const llama_layout *l, const model_spec *s)
{
    return (decoder_head){.d = l->d, .seq = l->seq, .vocab = l->vocab, .norm_g = l->norm_f,
                          .norm_b = DECODER_HEAD_RMSNORM, .head_w = l->head,
                          .chunk_bytes = s->head_chunk_bytes};
}

int llama_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes)
{
    llama_layout l;
    llama_layout_of(s, &l);
    size_t es = storage_bytes(st), d = (size_t)l.d, t = (size_t)l.seq, h = (size_t)l.heads;
    size_t f = (size_t)l.ffn, kv = (size_t)l.kv_dim;
    size_t n = (size_t)capacity * t, scores = t * t * h * (size_t)capacity * es;
    size_t rstd = n * sizeof(float), lse = h * n * sizeof(float);
    int fused = s->fused_attention;
    decoder_head head = head_of(&l, s);
    bytes[A_RES0] = d * n * es;
    decoder_head_sizes(&head, st, capacity, bytes + A_HEAD);
    bytes[A_SCORES] = fused ? 0 : scores;
    /* fp32 whatever the storage: every RMSNorm backward adds into it. */
    bytes[A_DRES] = d * n * sizeof(float);
    bytes[A_DRES_C] = es == sizeof(float) ? 0 : d * n * es;
    bytes[A_DX] = d * n * es;
    bytes[A_DWIDE] = (f > 3 * d ? f : 3 * d) * n * es;
    bytes[A_DUP] = f * n * es;
    bytes[A_KV] = 2 * kv * n * es;
    bytes[A_HEADS] = fused ? 0 : 4 * d * n * es;
    int count = A_GLOBAL;
    for (int i = 0; i < l.layers; i++, count += B_COUNT) {
        size_t *blk = bytes + count;
        blk[B_NORM1] = d * n * es;
        blk[B_RSTD1] = rstd;
        blk[B_QKV] = 3 * d * n * es;
        blk[B_PROBS] = fused ? lse : scores;
        blk[B_ATTY] = d * n * es;
        blk[B_RES_MID] = d * n * es;
        blk[B_NORM2] = d * n * es;
        blk[B_RSTD2] = rstd;
        blk[B_GATE] = f * n * es;
        blk[B_UP] = f * n * es;
        blk[B_ACT] = f * n * es;
        blk[B_RES_OUT] = d * n * es;
        for (int w = 0; w < B_COUNT; w++)
            if (!block_keeps(s, i, w))
                blk[w] = 0;
    }
    return count;
}

/* Over `examples` sequences, block: every block's forward but its down
 * projection: q and o 2 d^2 each, k and v 2 d kv_dim each, attention's
 * two products 4 d T, gate and up 2 d ffn each, FLOPs a token. No GELU:
 * the SwiGLU's elements recomputed are not counted as FLOPs, as the
 * norms' are not. */
void llama_recompute_cost(const model_spec *s, int examples, double *gemm, double *gelu)
{
    llama_layout l;
    llama_layout_of(s, &l);
    double d = l.d, t = l.seq, kv = l.kv_dim, f = l.ffn;
    double tokens = (double)examples * t;
    *gemm = *gelu = 0;
    if (s->recompute == RECOMPUTE_BLOCK)
        *gemm = (4 * d * d + 4 * d * kv + 4 * d * t + 4 * d * f) * tokens * l.layers;
}

static void *act(const activations *a, int which) { return a->buf[which]; }
/* Where block l's buffer `which` is (see block_keeps). */
static void *blk(const model_spec *s, const activations *a, int l, int which)
{
    if (!block_keeps(s, l, which))
        l = 0;
    return a->buf[A_GLOBAL + l * B_COUNT + which];
}
/* Block l's input: the embeddings, or the block before's output. */
static void *res_in(const activations *a, int l)
{
    return l == 0 ? act(a, A_RES0) : a->buf[A_GLOBAL + (l - 1) * B_COUNT + B_RES_OUT];
}

/* ------------------------------------------------------------- passes */

/* One micro-batch's numbers, worked out once per pass. */
typedef struct pass {
    layer_pass lp;
    attention_pass ap;
    const llama_layout *l;
    int batch; /* sequences */
} pass;

static int pass_init(model *m, const micro_batch_view *mb, pass *p)
{
    const llama_layout *l = m->impl;
    /* The ops count a pass's tokens in an int (a GEMM's n, a norm's rows);
     * memory runs out long before, but say so rather than wrap. */
    if ((size_t)mb->count * (size_t)l->seq > INT_MAX) {
        snprintf(m->b->error, sizeof m->b->error, "a micro-batch of %d sequences of %d "
                 "tokens is more tokens than one pass can index", mb->count, l->seq);
        return BK_UNSUPPORTED;
    }
    *p = (pass){.lp = layer_pass_of(m, mb, mb->count * l->seq), .l = l, .batch = mb->count};
    p->ap = (attention_pass){.lp = &p->lp, .hd = l->head_dim, .heads = l->heads, .t = l->seq,
                             .batch = mb->count, .fused = m->spec.fused_attention};
    return BK_OK;
}

static size_t block_off(const llama_layout *l, int i, size_t off)
{
    return l->layer0 + (size_t)i * l->layer_size + off;
}

/* ---- projections: y = W x, no bias, W [out x in] at w_off. The
 * leading dimensions let q, k and v be written into and read from their
 * rows of a wider buffer. */

static int proj_forward(const pass *p, size_t w_off, int out, int in, const void *x, void *y,
                        int ldy)
{
    return layer_gemm(&p->lp, 0, 0, out, p->lp.n, in, layer_weight(&p->lp, w_off), out, x, in,
                      0.0f, y, ldy, 0);
}

/* dx (+)= W^T dy: written when beta is 0, added to when 1. */
static int proj_input_grad(const pass *p, size_t w_off, int out, int in, const void *dy,
                           int ldy, void *dx, float beta)
{
    return layer_gemm(&p->lp, 1, 0, in, p->lp.n, out, layer_weight(&p->lp, w_off), out, dy, ldy,
                      beta, dx, in, 0);
}

/* dW (+)= dy x^T under the window-start rule, then W reported final. */
static int proj_weight_grad_final(const pass *p, size_t w_off, int out, int in, const void *x,
                                  const void *dy, int ldy)
{
    model *m = p->lp.m;
    int rc = layer_gemm(&p->lp, 0, 1, out, in, p->lp.n, dy, ldy, x, in, layer_grad_beta(&p->lp),
                        model_grad(m, w_off), out, 1);
    return rc ? rc : model_grad_ready(m, w_off, (size_t)out * (size_t)in);
}

/* An RMSNorm's backward at gain offset g_off (dres += its input
 * gradient), then its gain reported final. */
static int rmsnorm_backward_final(const pass *p, const void *dy, const void *x, size_t g_off,
                                  const float *rstd, float *dres)
{
    model *m = p->lp.m;
    int d = p->l->d;
    int rc = bk_rmsnorm_backward(p->lp.b, dy, x, m->params + g_off, rstd, dres,
                                 model_grad(m, g_off), d, p->lp.n);
    return rc ? rc : model_grad_ready(m, g_off, (size_t)d);
}

/* The residual stream's gradient as the GEMMs read it: the fp32 sum itself
 * in fp32, else rounded once into its compute-storage copy. */
static int dres_compute(const pass *p, activations *a, void **out)
{
    *out = act(a, A_DRES);
    if (p->lp.cs == STORAGE_F32)
        return BK_OK;
    *out = act(a, A_DRES_C);
    return bk_convert(p->lp.b, act(a, A_DRES), *out, p->lp.cs, (size_t)p->l->d * p->lp.n);
}

/* Block i's buffers, where they are (see block_keeps). */
typedef struct block_bufs {
    void *at[B_COUNT];
} block_bufs;

static block_bufs block_bufs_of(const model *m, const activations *a, int i)
{
    block_bufs bb;
    for (int w = 0; w < B_COUNT; w++)
        bb.at[w] = blk(&m->spec, a, i, w);
    return bb;
}

/* ---- attention ---- */

/* q, k and v of the block's first norm's output, turned (rotary) and the
 * key and value heads repeated for the query heads, then attention into
 * B_ATTY. k and v are projected into A_KV ([k; v], 2 kv_dim rows) and
 * turned there, before the repeat: each kv head is turned once. */
static int block_attention_forward(const pass *p, activations *a, void **k, int i)
{
    const llama_layout *l = p->l;
    const layer_pass *lp = &p->lp;
    int d = l->d, kv = l->kv_dim, hd = l->head_dim, n = lp->n, rc;
    void *qkv = attention_qkv_at(&p->ap, k[B_QKV], act(a, A_HEADS)), *kvb = act(a, A_KV);
    if ((rc = proj_forward(p, block_off(l, i, l->q_w), d, d, k[B_NORM1], qkv, 3 * d)) ||
        (rc = proj_forward(p, block_off(l, i, l->k_w), kv, d, k[B_NORM1], kvb, 2 * kv)) ||
        (rc = proj_forward(p, block_off(l, i, l->v_w), kv, d, k[B_NORM1],
                           layer_at(lp, kvb, (size_t)kv), 2 * kv)) ||
        (rc = bk_rotary_forward(lp->b, qkv, 3 * d, l->heads, hd, l->seq, n, LLAMA_ROPE_THETA)) ||
        (rc = bk_rotary_forward(lp->b, kvb, 2 * kv, l->kv_heads, hd, l->seq, n,
                                LLAMA_ROPE_THETA)) ||
        (rc = bk_repeat_kv_forward(lp->b, kvb, layer_at(lp, qkv, (size_t)d), 3 * d, hd,
                                   l->kv_heads, l->heads / l->kv_heads, 2, n)))
        return rc;
    return attention_forward(&p->ap, k[B_QKV], k[B_PROBS], act(a, A_SCORES), act(a, A_HEADS),
                             k[B_ATTY]);
}

/* From dy (A_DX), the gradient of B_ATTY, to the gradient of the first
 * norm's output in A_DX, with q, k and v's weight gradients reported
 * final (v, k, q: from the end of the vector). */
static int block_attention_backward(const pass *p, activations *a, void **k, int i)
{
    const llama_layout *l = p->l;
    const layer_pass *lp = &p->lp;
    int d = l->d, kv = l->kv_dim, hd = l->head_dim, n = lp->n, rc;
    void *dqkv = act(a, A_DWIDE), *dkv = act(a, A_KV), *dx = act(a, A_DX);
    void *dk = dkv, *dv = layer_at(lp, dkv, (size_t)kv);
    if ((rc = attention_backward(&p->ap, k[B_QKV], k[B_PROBS], k[B_ATTY], dx,
                                 act(a, A_SCORES), act(a, A_HEADS), dqkv)) ||
        (rc = bk_repeat_kv_backward(lp->b, layer_at(lp, dqkv, (size_t)d), 3 * d, dkv, hd,
                                    l->kv_heads, l->heads / l->kv_heads, 2, n)) ||
        (rc = bk_rotary_backward(lp->b, dqkv, 3 * d, l->heads, hd, l->seq, n,
                                 LLAMA_ROPE_THETA)) ||
        (rc = bk_rotary_backward(lp->b, dkv, 2 * kv, l->kv_heads, hd, l->seq, n,
                                 LLAMA_ROPE_THETA)) ||
        /* dx = Wq^T dq + Wk^T dk + Wv^T dv, before the weights are final. */
        (rc = proj_input_grad(p, block_off(l, i, l->q_w), d, d, dqkv, 3 * d, dx, 0.0f)) ||
        (rc = proj_input_grad(p, block_off(l, i, l->k_w), kv, d, dk, 2 * kv, dx, 1.0f)) ||
        (rc = proj_input_grad(p, block_off(l, i, l->v_w), kv, d, dv, 2 * kv, dx, 1.0f)) ||
        (rc = proj_weight_grad_final(p, block_off(l, i, l->v_w), kv, d, k[B_NORM1], dv, 2 * kv)) ||
        (rc = proj_weight_grad_final(p, block_off(l, i, l->k_w), kv, d, k[B_NORM1], dk, 2 * kv)))
        return rc;
    return proj_weight_grad_final(p, block_off(l, i, l->q_w), d, d, k[B_NORM1], dqkv, 3 * d);
}
/* ---- end of attention ---- */

/* Block i's forward; `whole` 0 stops before the down projection and the
 * residual add (the block's output, which a recomputation for the
 * backward does not need: it is kept). */
static int block_forward(model *m, const pass *p, activations *a, int i, int whole)
{
    const llama_layout *l = p->l;
    const layer_pass *lp = &p->lp;
    int d = l->d, f = l->ffn, n = lp->n, rc;
    float *w = m->params;
    block_bufs bb = block_bufs_of(m, a, i);
    void **k = bb.at;
    void *x = res_in(a, i), *mid = k[B_RES_MID], *out = k[B_RES_OUT];
    size_t nd = (size_t)d * n;
    if ((rc = bk_rmsnorm_forward(lp->b, x, w + block_off(l, i, l->norm1), k[B_NORM1],
                                 k[B_RSTD1], d, n)) ||
        (rc = block_attention_forward(p, a, k, i)) ||
        (rc = proj_forward(p, block_off(l, i, l->o_w), d, d, k[B_ATTY], mid, d)) ||
        (rc = bk_add(lp->b, mid, x, nd)) ||
        (rc = bk_rmsnorm_forward(lp->b, mid, w + block_off(l, i, l->norm2), k[B_NORM2],
                                 k[B_RSTD2], d, n)) ||
        (rc = proj_forward(p, block_off(l, i, l->gate_w), f, d, k[B_NORM2], k[B_GATE], f)) ||
        (rc = proj_forward(p, block_off(l, i, l->up_w), f, d, k[B_NORM2], k[B_UP], f)) ||
        (rc = bk_swiglu_forward(lp->b, k[B_GATE], k[B_UP], k[B_ACT], (size_t)f * n)) ||
        !whole || (rc = proj_forward(p, block_off(l, i, l->down_w), d, f, k[B_ACT], out, d)))
        return rc;
    return bk_add(lp->b, out, mid, nd);
}

/* dres holds the gradient of block i's output; leaves the gradient of its
 * input there (the norms' backward adds into it: the residual path is the
 * identity). Each projection and norm is reported final as its backward
 * ends, from the block's end down (its weights are read no more): the
 * ranges ZeRO-2's buckets are made of (grad_ring.h). */
static int block_backward(model *m, const pass *p, activations *a, int i)
{
    const llama_layout *l = p->l;
    const layer_pass *lp = &p->lp;
    int d = l->d, f = l->ffn, n = lp->n, rc;
    float *dres = act(a, A_DRES);
    block_bufs bb = block_bufs_of(m, a, i);
    void **k = bb.at;
    void *dres_c, *dx = act(a, A_DX), *dh = act(a, A_DWIDE), *dup = act(a, A_DUP);
    if (m->spec.recompute == RECOMPUTE_BLOCK && (rc = block_forward(m, p, a, i, 0)))
        return rc;
    /* The MLP: dh = Wd^T dres, then through the SwiGLU (dh becomes the
     * gate's gradient), then dx = Wg^T dgate + Wu^T dup. */
    if ((rc = dres_compute(p, a, &dres_c)) ||
        (rc = proj_input_grad(p, block_off(l, i, l->down_w), d, f, dres_c, d, dh, 0.0f)) ||
        (rc = proj_weight_grad_final(p, block_off(l, i, l->down_w), d, f, k[B_ACT], dres_c, d)) ||
        (rc = bk_swiglu_backward(lp->b, k[B_GATE], k[B_UP], dh, dh, dup, (size_t)f * n)) ||
        (rc = proj_input_grad(p, block_off(l, i, l->gate_w), f, d, dh, f, dx, 0.0f)) ||
        (rc = proj_input_grad(p, block_off(l, i, l->up_w), f, d, dup, f, dx, 1.0f)) ||
        (rc = proj_weight_grad_final(p, block_off(l, i, l->up_w), f, d, k[B_NORM2], dup, f)) ||
        (rc = proj_weight_grad_final(p, block_off(l, i, l->gate_w), f, d, k[B_NORM2], dh, f)) ||
        (rc = rmsnorm_backward_final(p, dx, k[B_RES_MID], block_off(l, i, l->norm2), k[B_RSTD2],
                                     dres)))
        return rc;
    /* Attention: dx = Wo^T dres, the gradient of B_ATTY. */
    if ((rc = dres_compute(p, a, &dres_c)) ||
        (rc = proj_input_grad(p, block_off(l, i, l->o_w), d, d, dres_c, d, dx, 0.0f)) ||
        (rc = proj_weight_grad_final(p, block_off(l, i, l->o_w), d, d, k[B_ATTY], dres_c, d)) ||
        (rc = block_attention_backward(p, a, k, i)))
        return rc;
    return rmsnorm_backward_final(p, dx, res_in(a, i), block_off(l, i, l->norm1), k[B_RSTD1],
                                  dres);
}

static const int *tokens_of(const pass *p, const micro_batch_view *mb)
{
    return (const int *)mb->x + (size_t)mb->first * p->l->seq;
}

int llama_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    pass p;
    int rc = pass_init(m, mb, &p);
    if (rc)
        return rc;
    const llama_layout *l = p.l;
    size_t items = (size_t)mb->first * l->seq;
    /* No position table: the positions are in the rotary turns. */
    if ((rc = bk_embedding_forward(p.lp.b, tokens_of(&p, mb), m->params + l->embed, NULL,
                                   act(a, A_RES0), l->d, l->seq, p.batch)))
        return rc;
    for (int i = 0; i < l->layers && !rc; i++)
        rc = block_forward(m, &p, a, i, 1);
    if (rc)
        return rc;
    /* The final RMSNorm, the LM head and the loss, with their backward:
     * the logits' gradient is consumed a chunk at a time as it is made. */
    decoder_head_io io = {.buf = a->buf + A_HEAD, .capacity = a->capacity,
                          .x = res_in(a, l->layers), .dres = act(a, A_DRES),
                          .labels = mb->labels + items, .valid = mb->valid + items,
                          .scale = mb->scale, .loss_sum = loss_sum};
    decoder_head head = head_of(l, &m->spec);
    return decoder_head_forward_backward(&p.lp, &head, &io);
}

int llama_backward(model *m, activations *a, const micro_batch_view *mb)
{
    pass p;
    int rc = pass_init(m, mb, &p);
    if (rc)
        return rc;
    const llama_layout *l = p.l;
    void *dres_c;
    /* The forward went through the head's backward (decoder_head.c):
     * A_DRES holds the last block's output's gradient, and the LM head
     * (untied: the end of the vector) and the final norm are final. */
    if (!l->tied && (rc = model_grad_ready(m, l->head, (size_t)l->d * l->vocab)))
        return rc;
    if ((rc = model_grad_ready(m, l->norm_f, (size_t)l->d)))
        return rc;
    for (int i = l->layers - 1; i >= 0 && !rc; i--)
        rc = block_backward(m, &p, a, i);
    if (rc || (rc = dres_compute(&p, a, &dres_c)) ||
        (rc = bk_embedding_backward(p.lp.b, tokens_of(&p, mb), dres_c, model_grad(m, l->embed),
                                    NULL, l->d, l->seq, p.batch)))
        return rc;
    /* The embedding (tied: also the LM head's) comes first in the vector
     * and is final last. */
    return model_grad_ready(m, l->embed, l->layer0 - l->embed);
}
