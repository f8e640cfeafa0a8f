/* A decoder's final norm, LM head and cross-entropy, forward and
 * backward, a chunk of tokens at a time (decoder_head.h). */
#include "decoder_head.h"

#include "dispatch.h"

/* A chunk is whole sequences: at least one, and as many more as keep its
 * logits within the backend's chunk_bytes (model_spec_on), or
 * HEAD_CHUNK_BYTES where it sets none. Whole sequences, so that a GPU's
 * GEMMs keep at least T columns (1024 for GPT-2: a [50304 x 1024 x 768]
 * product, large enough to run near its peak), and the arithmetic is the
 * same on every backend; the buffers are sized for one chunk, so the
 * memory need follows the rule to the byte.
 *
 * The default, 1 MiB, is the CPU's: the chunk's logits and their gradient
 * (2 MiB together) are written by one GEMM and read by the next three ops;
 * with the head's GEMMs cut between two cores, each core's half (1 MiB)
 * stays in its own L2 (2 MiB on the Xeons this was measured on, 1-2 MiB on
 * most x86 servers) beside the panels of the head's weight it streams. On
 * the gpt-cpu shape (vocab 2048, seq 64) that is 2 sequences, 128 tokens:
 * 8 chunks at 16x1 instead of logits of 16 MiB (with their gradient) that
 * pass through L3 or memory. A GPU sets its own (cuda_backend.cu). */
#define HEAD_CHUNK_BYTES ((size_t)1 << 20)

static int rms(const decoder_head *h) { return h->norm_b == DECODER_HEAD_RMSNORM; }

static int chunk_tokens(const decoder_head *h, storage st)
{
    size_t t = (size_t)h->seq;
    size_t seq_bytes = t * (size_t)h->vocab * storage_bytes(st);
    size_t budget = h->chunk_bytes ? h->chunk_bytes : HEAD_CHUNK_BYTES;
    size_t seqs = budget / seq_bytes;
    return (int)((seqs > 1 ? seqs : 1) * t);
}

int decoder_head_chunk(const decoder_head *h, storage st, int capacity)
{
    size_t n = (size_t)capacity * (size_t)h->seq, c = (size_t)chunk_tokens(h, st);
    return (int)(c < n ? c : n);
}

void decoder_head_sizes(const decoder_head *h, storage st, int capacity, size_t *bytes)
{
    size_t es = storage_bytes(st), d = (size_t)h->d, v = (size_t)h->vocab;
    size_t c = (size_t)decoder_head_chunk(h, st, capacity);
    bytes[DECODER_HEAD_X] = d * c * es;
    bytes[DECODER_HEAD_STATS] = (rms(h) ? 1 : 2) * c * sizeof(float);
    bytes[DECODER_HEAD_LOGITS] = v * c * es;
    bytes[DECODER_HEAD_DLOGITS] = v * c * es;
    bytes[DECODER_HEAD_DX] = d * c * es;
}

/* Tokens [first, first + n) of the micro-batch; `cap` is the chunk the
 * statistics buffer was sized for (a LayerNorm's rstd half starts there). */
static int head_chunk(const layer_pass *lp, const decoder_head *h, const decoder_head_io *io,
                      int first, int n, int cap)
{
    model *m = lp->m;
    backend *b = lp->b;
    int d = h->d, v = h->vocab, rc;
    void *y = io->buf[DECODER_HEAD_X], *logits = io->buf[DECODER_HEAD_LOGITS];
    void *dlogits = io->buf[DECODER_HEAD_DLOGITS], *dy = io->buf[DECODER_HEAD_DX];
    float *stats = io->buf[DECODER_HEAD_STATS], *gamma = m->params + h->norm_g;
    const void *x = layer_at(lp, io->x, (size_t)first * d), *w = layer_weight(lp, h->head_w);
    float *dx = io->dres + (size_t)first * d;
    /* The head's weight gradient starts the window (beta 0 where the kind
     * writes its first gradient) on the first chunk; the rest add to it. */
    float beta = first == 0 ? layer_grad_beta(lp) : 1.0f;
    rc = rms(h) ? bk_rmsnorm_forward(b, x, gamma, y, stats, d, n)
                : bk_layernorm_forward(b, x, gamma, m->params + h->norm_b, y, stats,
                                       stats + cap, d, n);
    if (rc ||
        /* logits = W^T y, the head's weight read from the compute copy. */
        (rc = layer_gemm(lp, 1, 0, v, n, d, w, d, y, d, 0.0f, logits, v, 0)) ||
        (rc = bk_softmax_xent(b, logits, dlogits, io->labels + first, io->valid + first,
                              io->scale, io->loss_sum, v, n)) ||
        /* dW += y dlogits^T (a tied embedding's own gradient adds to it at
         * the end of the backward); dy = W dlogits. */
        (rc = layer_gemm(lp, 0, 1, d, v, n, y, d, dlogits, v, beta, model_grad(m, h->head_w), d,
                         1)) ||
        (rc = layer_gemm(lp, 0, 0, d, n, v, w, d, dlogits, v, 0.0f, dy, d, 0)) ||
        /* The final norm's backward adds into dx: it starts at 0. */
        (rc = bk_zero(b, dx, (size_t)d * n * sizeof(float))))
        return rc;
    if (rms(h))
        return bk_rmsnorm_backward(b, dy, x, gamma, stats, dx, model_grad(m, h->norm_g), d, n);
    float *dbeta = model_grad(m, h->norm_b); /* the end of the vector first: the buckets */
    return bk_layernorm_backward(b, dy, x, gamma, stats, stats + cap, dx,
                                 model_grad(m, h->norm_g), dbeta, d, n);
}

int decoder_head_forward_backward(const layer_pass *lp, const decoder_head *h,
                                  const decoder_head_io *io)
{
    int cap = decoder_head_chunk(h, lp->cs, io->capacity), rc = BK_OK;
    for (int first = 0; first < lp->n && !rc; first += cap)
        rc = head_chunk(lp, h, io, first, lp->n - first < cap ? lp->n - first : cap, cap);
    return rc;
}
