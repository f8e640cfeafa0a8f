/* The GPT's passes on the backend table: the buffers of one micro-batch,
 * and the forward (through the loss) and backward passes over them. The
 * shapes, the weights and the accounting are in gpt.c. */
#include "gpt.h"

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
    A_RES0,      /* [d x N] the embeddings: block 0's input */
    A_HEAD,      /* the head's chunk buffers (decoder_head.h) */
    A_SCORES = A_HEAD + DECODER_HEAD_BUFFERS, /* [T x T x H x B] scores; in
                    backward, their gradients (none where attention is
                    fused) */
    A_DRES,      /* fp32 [d x N] the gradient of the residual stream: the
                    forward leaves the last block's output's there */
    A_DRES_C,    /* [d x N] its compute-storage copy, what the GEMMs read
                    (none in fp32: A_DRES itself) */
    A_DX,        /* [d x N] the gradient of a LayerNorm's output, of the
                    attention's output */
    A_DWIDE,     /* [4d x N] the MLP's hidden gradient; [3d x N] of qkv */
    A_HEADS,     /* [4d x N] attention's scratch (see attention_forward;
                    none where attention is fused), and where recompute
                    gelu puts the GELU's output */
    A_GLOBAL
};
enum {
    B_LN1,       /* [d x N] */
    B_LN1_STATS, /* fp32 [2 x N] */
    B_QKV,       /* [3d x N]: q, k, v, each as B x H blocks of [hd x T];
                    fused, the projection's token layout */
    B_PROBS,     /* [T x T x H x B] the attention weights; fused, fp32
                    [T x H x B]: each query's log-sum-exp */
    B_ATTY,      /* [d x N] the weighted sums, heads stacked */
    B_RES_MID,   /* [d x N] the residual stream after attention */
    B_LN2,       /* [d x N] */
    B_LN2_STATS, /* fp32 [2 x N] */
    B_FC_Z,      /* [4d x N] before the GELU */
    B_FC_H,      /* [4d x N] after it */
    B_RES_OUT,   /* [d x N] the block's output */
    B_COUNT
};

_Static_assert(A_GLOBAL + GPT_MAX_LAYERS * B_COUNT <= MODEL_MAX_ACTIVATIONS,
               "the deepest GPT's activations fit the activations table");

/* Recomputation keeps the order of the buffers and gives those it does not
 * keep 0 bytes. gelu: no block keeps B_FC_H; the GELU's output goes to
 * A_HEADS (free once attention is done, in the forward and in the
 * backward alike), recomputed from B_FC_Z where the MLP's backward needs
 * it. block: every block keeps its output (the next block's input) alone,
 * and block 0's buffers serve every block: the forward writes each block
 * there, and the backward recomputes block i's forward into them (all but
 * the MLP's output projection, which its backward does not read) just
 * before block i's backward. */
static int block_keeps(const model_spec *s, int l, int which)
{
    if (s->recompute == RECOMPUTE_GELU)
        return which != B_FC_H;
    if (s->recompute == RECOMPUTE_BLOCK)
        return l == 0 || which == B_RES_OUT;
    return 1;
}

/* The final LayerNorm and the LM head, tied to the token embedding. */
static decoder_head gpt_head_of(const gpt_layout *l, const model_spec *s)
{
    return (decoder_head){.d = l->d, .seq = l->seq, .vocab = l->vocab, .norm_g = l->lnf_g,
                          .norm_b = l->lnf_b, .head_w = l->wte,
                          .chunk_bytes = s->head_chunk_bytes};
}

int gpt_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes)
{
    size_t es = storage_bytes(st), d = (size_t)s->dims[GPT_D], t = (size_t)s->dims[GPT_SEQ];
    size_t h = (size_t)s->dims[GPT_HEADS];
    size_t n = (size_t)capacity * t, scores = t * t * h * (size_t)capacity * es;
    size_t stats = 2 * n * sizeof(float), lse = h * n * sizeof(float);
    int fused = s->fused_attention;
    bytes[A_RES0] = d * n * es;
    gpt_layout l;
    gpt_layout_of(s, &l);
    decoder_head head = gpt_head_of(&l, s);
    decoder_head_sizes(&head, st, capacity, bytes + A_HEAD);
    bytes[A_SCORES] = fused ? 0 : scores;
    /* fp32 whatever the storage: every LayerNorm backward adds into it. */
    bytes[A_DRES] = d * n * sizeof(float);
    bytes[A_DRES_C] = es == sizeof(float) ? 0 : d * n * es;
    bytes[A_DX] = d * n * es;
    bytes[A_DWIDE] = 4 * d * n * es;
    bytes[A_HEADS] = fused && s->recompute != RECOMPUTE_GELU ? 0 : 4 * d * n * es;
    int count = A_GLOBAL;
    for (int l = 0; l < s->dims[GPT_LAYERS]; l++, count += B_COUNT) {
        size_t *blk = bytes + count;
        blk[B_LN1] = d * n * es;
        blk[B_LN1_STATS] = stats;
        blk[B_QKV] = 3 * d * n * es;
        blk[B_PROBS] = fused ? lse : scores;
        blk[B_ATTY] = d * n * es;
        blk[B_RES_MID] = d * n * es;
        blk[B_LN2] = d * n * es;
        blk[B_LN2_STATS] = stats;
        blk[B_FC_Z] = 4 * d * n * es;
        blk[B_FC_H] = 4 * d * n * es;
        blk[B_RES_OUT] = d * n * es;
        for (int w = 0; w < B_COUNT; w++)
            if (!block_keeps(s, l, w))
                blk[w] = 0;
    }
    return count;
}

/* Over `examples` sequences: gelu, the MLP's GELU of every block once;
 * block, every block's forward but its last projection (QKV 6 d^2,
 * attention's two products 4 d T, the output projection 2 d^2, the MLP's
 * first layer 8 d^2 FLOPs a token) and its GELU. */
void gpt_recompute_cost(const model_spec *s, int examples, double *gemm, double *gelu)
{
    double d = s->dims[GPT_D], t = s->dims[GPT_SEQ], layers = s->dims[GPT_LAYERS];
    double tokens = (double)examples * t;
    *gemm = *gelu = 0;
    if (s->recompute == RECOMPUTE_NONE)
        return;
    *gelu = 4 * d * tokens * layers;
    if (s->recompute == RECOMPUTE_BLOCK)
        *gemm = (16 * d * d + 4 * d * t) * tokens * layers;
}

static void *act(const activations *a, int which) { return a->buf[which]; }
/* Where block l's buffer `which` is (see block_keeps). */
static void *blk(const model_spec *s, const activations *a, int l, int which)
{
    if (s->recompute == RECOMPUTE_GELU && which == B_FC_H)
        return act(a, A_HEADS);
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

/* One micro-batch's numbers, worked out once per pass: the layers' view
 * of it (its columns are the tokens) and the sequences. */
typedef struct pass {
    layer_pass lp;
    const gpt_layout *l;
    int batch; /* sequences */
    int fused; /* the backend's fused attention (model_spec.fused_attention) */
} pass;

static size_t block_off(const gpt_layout *l, int i, size_t off)
{
    return l->layer0 + (size_t)i * l->layer_size + off;
}

static int pass_init(model *m, const micro_batch_view *mb, pass *p)
{
    const gpt_layout *l = m->impl;
    /* The ops count a pass's tokens in an int (a GEMM's n, a LayerNorm's
     * rows); memory runs out long before, but say so rather than wrap. */
    if ((size_t)mb->count * (size_t)l->seq > INT_MAX) {
        snprintf(m->b->error, sizeof m->b->error, "a micro-batch of %d sequences of %d "
                 "tokens is more tokens than one pass can index", mb->count, l->seq);
        return BK_UNSUPPORTED;
    }
    *p = (pass){.lp = layer_pass_of(m, mb, mb->count * l->seq), .l = l, .batch = mb->count,
                .fused = m->spec.fused_attention};
    return BK_OK;
}

/* ---- attention (attention.h) ---- */

static attention_pass attention_of(const pass *p)
{
    return (attention_pass){.lp = &p->lp, .hd = p->l->head_dim, .heads = p->l->heads,
                            .t = p->l->seq, .batch = p->batch, .fused = p->fused};
}

/* The block's QKV projection of its first LayerNorm's output, and
 * attention over it into B_ATTY. */
static int block_attention_forward(const pass *p, activations *a, void **k,
                                   const linear_layer *qkv)
{
    attention_pass ap = attention_of(p);
    void *heads = act(a, A_HEADS);
    int rc = linear_forward(&p->lp, qkv, k[B_LN1], attention_qkv_at(&ap, k[B_QKV], heads),
                            NULL);
    return rc ? rc
              : attention_forward(&ap, k[B_QKV], k[B_PROBS], act(a, A_SCORES), heads,
                                  k[B_ATTY]);
}

/* From dy, the gradient of B_ATTY, to dqkv ([3d x N], token layout). */
static int block_attention_backward(const pass *p, activations *a, void **k, const void *dy,
                                    void *dqkv)
{
    attention_pass ap = attention_of(p);
    return attention_backward(&ap, k[B_QKV], k[B_PROBS], k[B_ATTY], dy, act(a, A_SCORES),
                              act(a, A_HEADS), dqkv);
}

/* A linear layer of block i: weight at w, bias at b (offsets inside a
 * block), `out` x `in`. */
static linear_layer block_linear(const gpt_layout *l, int i, size_t w, size_t b, int out, int in)
{
    return (linear_layer){.w_off = block_off(l, i, w), .b_off = block_off(l, i, b), .out = out,
                          .in = in};
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

/* Block i's forward; `whole` 0 stops before the MLP's output projection
 * and the residual add (the block's output, which a recomputation for the
 * backward does not need: it is kept). */
static int block_forward(model *m, const pass *p, activations *a, int i, int whole)
{
    const gpt_layout *l = p->l;
    const layer_pass *lp = &p->lp;
    int d = l->d, n = lp->n, rc;
    float *w = m->params;
    block_bufs bb = block_bufs_of(m, a, i);
    void **k = bb.at;
    float *s1 = k[B_LN1_STATS], *s2 = k[B_LN2_STATS];
    void *x = res_in(a, i), *mid = k[B_RES_MID], *out = k[B_RES_OUT];
    size_t nd = (size_t)d * n;
    linear_layer qkv = block_linear(l, i, l->qkv_w, l->qkv_b, 3 * d, d);
    linear_layer proj = block_linear(l, i, l->proj_w, l->proj_b, d, d);
    linear_layer fc = block_linear(l, i, l->fc_w, l->fc_b, 4 * d, d);
    linear_layer fcp = block_linear(l, i, l->fcp_w, l->fcp_b, d, 4 * d);
    if ((rc = bk_layernorm_forward(lp->b, x, w + block_off(l, i, l->ln1_g),
                                   w + block_off(l, i, l->ln1_b), k[B_LN1], s1, s1 + n, d, n)) ||
        (rc = block_attention_forward(p, a, k, &qkv)) ||
        (rc = linear_forward(lp, &proj, k[B_ATTY], mid, NULL)) ||
        (rc = bk_add(lp->b, mid, x, nd)) ||
        (rc = bk_layernorm_forward(lp->b, mid, w + block_off(l, i, l->ln2_g),
                                   w + block_off(l, i, l->ln2_b), k[B_LN2], s2, s2 + n, d, n)) ||
        (rc = linear_forward(lp, &fc, k[B_LN2], k[B_FC_Z], k[B_FC_H])) || !whole ||
        (rc = linear_forward(lp, &fcp, k[B_FC_H], out, NULL)))
        return rc;
    return bk_add(lp->b, out, mid, nd);
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

/* What block i's backward reads and recomputation did not keep, made
 * again: the GELU's output (gelu), or the block's forward (block). */
static int block_recompute(model *m, const pass *p, activations *a, int i)
{
    const model_spec *s = &m->spec;
    if (s->recompute == RECOMPUTE_GELU)
        return bk_gelu_forward(p->lp.b, blk(s, a, i, B_FC_Z), blk(s, a, i, B_FC_H),
                               (size_t)4 * p->l->d * p->lp.n);
    if (s->recompute == RECOMPUTE_BLOCK)
        return block_forward(m, p, a, i, 0);
    return BK_OK;
}

/* A LayerNorm's backward at gain/bias offsets g_off, g_off + d (the bias
 * follows the gain), then its two reported final: one range. */
static int layernorm_backward_final(model *m, const pass *p, const void *dy, const void *x,
                                    size_t g_off, const float *stats, float *dres)
{
    int d = p->l->d, n = p->lp.n;
    float *dbeta = model_grad(m, g_off + (size_t)d); /* the end of the vector first */
    int rc = bk_layernorm_backward(p->lp.b, dy, x, m->params + g_off, stats, stats + n, dres,
                                   model_grad(m, g_off), dbeta, d, n);
    return rc ? rc : model_grad_ready(m, g_off, (size_t)2 * d);
}

/* dres holds the gradient of block i's output; leaves the gradient of its
 * input there (the LayerNorms' backward adds into it: the residual path
 * is the identity). Each linear layer and LayerNorm is reported final as
 * its backward ends, from the block's end down (its weights are read no
 * more): the ranges ZeRO-2's buckets are made of (grad_ring.h). */
static int block_backward(model *m, const pass *p, activations *a, int i)
{
    const gpt_layout *l = p->l;
    const layer_pass *lp = &p->lp;
    int d = l->d, n = lp->n, rc;
    float *dres = act(a, A_DRES);
    block_bufs bb = block_bufs_of(m, a, i);
    void **k = bb.at;
    void *dres_c, *dx = act(a, A_DX), *dwide = act(a, A_DWIDE);
    linear_layer qkv = block_linear(l, i, l->qkv_w, l->qkv_b, 3 * d, d);
    linear_layer proj = block_linear(l, i, l->proj_w, l->proj_b, d, d);
    linear_layer fc = block_linear(l, i, l->fc_w, l->fc_b, 4 * d, d);
    linear_layer fcp = block_linear(l, i, l->fcp_w, l->fcp_b, d, 4 * d);
    /* The MLP. */
    if ((rc = block_recompute(m, p, a, i)) || (rc = dres_compute(p, a, &dres_c)) ||
        (rc = linear_backward_final(lp, &fcp, k[B_FC_H], dres_c, dwide)) ||
        (rc = bk_gelu_backward(lp->b, k[B_FC_Z], dwide, dwide, (size_t)4 * d * n)) ||
        (rc = linear_backward_final(lp, &fc, k[B_LN2], dwide, dx)) ||
        (rc = layernorm_backward_final(m, p, dx, k[B_RES_MID], block_off(l, i, l->ln2_g),
                                       k[B_LN2_STATS], dres)))
        return rc;
    /* Attention: dwide is dqkv now, [3d x N]. */
    if ((rc = dres_compute(p, a, &dres_c)) ||
        (rc = linear_backward_final(lp, &proj, k[B_ATTY], dres_c, dx)) ||
        (rc = block_attention_backward(p, a, k, dx, dwide)) ||
        (rc = linear_backward_final(lp, &qkv, k[B_LN1], dwide, dx)))
        return rc;
    return layernorm_backward_final(m, p, dx, res_in(a, i), block_off(l, i, l->ln1_g),
                                    k[B_LN1_STATS], dres);
}

static const int *tokens_of(const pass *p, const micro_batch_view *mb)
{
    return (const int *)mb->x + (size_t)mb->first * p->l->seq;
}

int gpt_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    pass p;
    int rc = pass_init(m, mb, &p);
    if (rc)
        return rc;
    const gpt_layout *l = p.l;
    float *w = m->params;
    size_t items = (size_t)mb->first * l->seq;
    if ((rc = bk_embedding_forward(p.lp.b, tokens_of(&p, mb), w + l->wte, w + l->wpe,
                                   act(a, A_RES0), l->d, l->seq, p.batch)))
        return rc;
    for (int i = 0; i < l->layers && !rc; i++)
        rc = block_forward(m, &p, a, i, 1);
    if (rc)
        return rc;
    /* The final LayerNorm, the LM head and the loss, with their backward:
     * the logits' gradient is consumed a chunk at a time as it is made. */
    decoder_head_io head = {.buf = a->buf + A_HEAD, .capacity = a->capacity,
                        .x = res_in(a, l->layers), .dres = act(a, A_DRES),
                        .labels = mb->labels + items, .valid = mb->valid + items,
                        .scale = mb->scale, .loss_sum = loss_sum};
    decoder_head shape = gpt_head_of(l, &m->spec);
    return decoder_head_forward_backward(&p.lp, &shape, &head);
}

int gpt_backward(model *m, activations *a, const micro_batch_view *mb)
{
    pass p;
    int rc = pass_init(m, mb, &p);
    if (rc)
        return rc;
    const gpt_layout *l = p.l;
    int d = l->d;
    void *dres_c;
    /* The forward went through the head's backward (decoder_head.c): A_DRES
     * holds the last block's output's gradient, and the final LayerNorm's
     * gradient is final. */
    if ((rc = model_grad_ready(m, l->lnf_g, (size_t)2 * d)))
        return rc;
    /* Each block reports its layers final as their backward ends (a
     * data-parallel step all-reduces them behind the rest), from the last
     * block down. The embeddings are the last range. */
    for (int i = l->layers - 1; i >= 0 && !rc; i--)
        rc = block_backward(m, &p, a, i);
    float *dwpe = rc ? NULL : model_grad(m, l->wpe); /* above wte: first */
    if (rc || (rc = dres_compute(&p, a, &dres_c)) ||
        (rc = bk_embedding_backward(p.lp.b, tokens_of(&p, mb), dres_c, model_grad(m, l->wte),
                                    dwpe, d, l->seq, p.batch)))
        return rc;
    /* The embeddings (wte, tied to the LM head, then wpe) come first in
     * the vector and are final last. */
    return model_grad_ready(m, l->wte, l->layer0 - l->wte);
}
