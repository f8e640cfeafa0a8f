/* What follows a decoder's last block, in chunks of tokens: the final norm
 * (the GPT's LayerNorm, the Llama's RMSNorm), the LM head (tied to the
 * token embedding or a matrix of its own: the same [d x vocab] layout,
 * one token per column), the cross-entropy, and at once their backward,
 * so that the logits of the whole micro-batch ([vocab x N], 8 KiB a token
 * at vocab 2048) never exist together: each chunk's logits are made,
 * turned into their gradient and consumed by the head's two gradient GEMMs
 * while they are still in cache. */
#ifndef ACCUBENCH_DECODER_HEAD_H
#define ACCUBENCH_DECODER_HEAD_H

#include <stdint.h>

#include "layers.h"

/* The head's buffers, each sized for one chunk (decoder_head_sizes). */
enum {
    DECODER_HEAD_X,       /* [d x C] the final norm's output */
    DECODER_HEAD_STATS,   /* fp32: LayerNorm [2 x C] its mean, then its
                             rstd; RMSNorm [C] its rstd */
    DECODER_HEAD_LOGITS,  /* [V x C] */
    DECODER_HEAD_DLOGITS, /* [V x C] the loss gradient, scaled */
    DECODER_HEAD_DX,      /* [d x C] the gradient of the norm's output */
    DECODER_HEAD_BUFFERS
};

/* Where a final norm has no bias: it is an RMSNorm. */
#define DECODER_HEAD_RMSNORM SIZE_MAX

/* A decoder's head: its sizes and where its weights are in the parameter
 * vector. */
typedef struct decoder_head {
    int d, seq, vocab;
    size_t norm_g; /* the final norm's gain */
    size_t norm_b; /* its bias (LayerNorm), or DECODER_HEAD_RMSNORM */
    size_t head_w; /* the LM head, [d x vocab]: logits = head_w^T x */
    /* The backend's budget for a chunk's logits (model_spec's
     * head_chunk_bytes); 0: the default, sized for a CPU core's L2. */
    size_t chunk_bytes;
} decoder_head;

/* Tokens a chunk holds in a micro-batch of `capacity` sequences. */
int decoder_head_chunk(const decoder_head *h, storage st, int capacity);

/* Bytes of each of the DECODER_HEAD_BUFFERS buffers, into bytes[0..). */
void decoder_head_sizes(const decoder_head *h, storage st, int capacity, size_t *bytes);

/* One micro-batch's head. */
typedef struct decoder_head_io {
    void *const *buf;          /* the DECODER_HEAD_BUFFERS buffers, in order */
    int capacity;              /* the sequences they were sized for */
    const void *x;             /* [d x N] the last block's output */
    float *dres;               /* fp32 [d x N]: set to the gradient of x */
    const int *labels, *valid; /* N each: this micro-batch's */
    const float *scale;        /* device float: the loss normalisation */
    float *loss_sum;           /* device float: += the valid items' losses */
} decoder_head_io;

/* The loss of the micro-batch and its gradient back to the last block's
 * output: dres = d loss / d x; the LM head's weight gradient and the final
 * norm's gradients added into m->grads. So a decoder's forward leaves the
 * gradient as far as the last block, and its backward begins there. */
int decoder_head_forward_backward(const layer_pass *lp, const decoder_head *h,
                                  const decoder_head_io *io);

#endif
