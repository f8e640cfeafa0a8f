/* The GPT's final LayerNorm, LM head and cross-entropy, forward and
 * backward, a chunk of tokens at a time (gpt_head.h). */
#include "gpt_head.h"

#include "dispatch.h"

/* A chunk is whole sequences: at least one, and as many more as keep its
 * logits within the backend's head_chunk_bytes (model_spec_on), or
 * HEAD_CHUNK_BYTES where the spec met no backend. Whole sequences, so that
 * a GPU's GEMMs keep at least T columns (1024 for GPT-2: a [50304 x 1024 x
 * 768] product, large enough to run near its peak), and the arithmetic is
 * the same on every backend; the buffers are sized for one chunk, so the
 * memory need follows the rule to the byte.
 *
 * The default, 1 MiB, is the CPU's: the chunk's logits and their gradient
 * (2 MiB together) are written by one GEMM and read by the next three ops;
 * with the head's GEMMs cut between two cores, each core's half (1 MiB)
 * stays in its own L2 (2 MiB on the Xeons this was measured on, 1-2 MiB on
 * most x86 servers) beside the panels of the tied embedding it streams. On
 * the gpt-cpu shape (vocab 2048, seq 64) that is 2 sequences, 128 tokens:
 * 8 chunks at 16x1 instead of logits of 16 MiB (with their gradient) that
 * pass through L3 or memory. A GPU sets its own (cuda_backend.cu). */
#define HEAD_CHUNK_BYTES ((size_t)1 << 20)

static int chunk_tokens(const model_spec *s, storage st)
{
    size_t t = (size_t)s->dims[GPT_SEQ];
    size_t seq_bytes = t * (size_t)s->dims[GPT_VOCAB] * storage_bytes(st);
    size_t budget = s->head_chunk_bytes ? s->head_chunk_bytes : HEAD_CHUNK_BYTES;
    size_t seqs = budget / seq_bytes;
    return (int)((seqs > 1 ? seqs : 1) * t);
}

int gpt_head_chunk(const model_spec *s, storage st, int capacity)
{
    size_t n = (size_t)capacity * (size_t)s->dims[GPT_SEQ], c = (size_t)chunk_tokens(s, st);
    return (int)(c < n ? c : n);
}

void gpt_head_sizes(const model_spec *s, storage st, int capacity, size_t *bytes)
{
    size_t es = storage_bytes(st), d = (size_t)s->dims[GPT_D], v = (size_t)s->dims[GPT_VOCAB];
    size_t c = (size_t)gpt_head_chunk(s, st, capacity);
    bytes[GPT_HEAD_X] = d * c * es;
    bytes[GPT_HEAD_STATS] = 2 * c * sizeof(float);
    bytes[GPT_HEAD_LOGITS] = v * c * es;
    bytes[GPT_HEAD_DLOGITS] = v * c * es;
    bytes[GPT_HEAD_DX] = d * c * es;
}

/* Tokens [first, first + n) of the micro-batch; `cap` is the chunk the
 * statistics buffer was sized for (its rstd half starts there). */
static int head_chunk(const layer_pass *lp, const gpt_layout *l, const gpt_head_io *io,
                      int first, int n, int cap)
{
    model *m = lp->m;
    backend *b = lp->b;
    int d = l->d, v = l->vocab, rc;
    void *y = io->buf[GPT_HEAD_X], *logits = io->buf[GPT_HEAD_LOGITS];
    void *dlogits = io->buf[GPT_HEAD_DLOGITS], *dy = io->buf[GPT_HEAD_DX];
    float *stats = io->buf[GPT_HEAD_STATS], *gamma = m->params + l->lnf_g;
    const void *x = layer_at(lp, io->x, (size_t)first * d), *wte = layer_weight(lp, l->wte);
    float *dx = io->dres + (size_t)first * d;
    /* The head's weight gradient starts the window (beta 0 where the kind
     * writes its first gradient) on the first chunk; the rest add to it. */
    float beta = first == 0 ? layer_grad_beta(lp) : 1.0f;
    if ((rc = bk_layernorm_forward(b, x, gamma, m->params + l->lnf_b, y, stats, stats + cap, d,
                                   n)) ||
        /* logits = wte^T y, the tied embedding read from the compute copy. */
        (rc = layer_gemm(lp, 1, 0, v, n, d, wte, d, y, d, 0.0f, logits, v, 0)) ||
        (rc = bk_softmax_xent(b, logits, dlogits, io->labels + first, io->valid + first,
                              io->scale, io->loss_sum, v, n)) ||
        /* dwte += y dlogits^T (the embedding's own gradient adds to it at
         * the end of the backward); dy = wte dlogits. */
        (rc = layer_gemm(lp, 0, 1, d, v, n, y, d, dlogits, v, beta, model_grad(m, l->wte), d,
                         1)) ||
        (rc = layer_gemm(lp, 0, 0, d, n, v, wte, d, dlogits, v, 0.0f, dy, d, 0)) ||
        /* The final LayerNorm's backward adds into dx: it starts at 0. */
        (rc = bk_zero(b, dx, (size_t)d * n * sizeof(float))))
        return rc;
    float *dbeta = model_grad(m, l->lnf_b); /* the end of the vector first: the buckets */
    return bk_layernorm_backward(b, dy, x, gamma, stats, stats + cap, dx, model_grad(m, l->lnf_g),
                                 dbeta, d, n);
}

int gpt_head_forward_backward(const layer_pass *lp, const gpt_layout *l, const gpt_head_io *io)
{
    int cap = gpt_head_chunk(&lp->m->spec, lp->cs, io->capacity), rc = BK_OK;
    for (int first = 0; first < lp->n && !rc; first += cap)
        rc = head_chunk(lp, l, io, first, lp->n - first < cap ? lp->n - first : cap, cap);
    return rc;
}
