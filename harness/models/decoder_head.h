/* What follows the GPT's last block, in chunks of tokens: the final
 * LayerNorm, the LM head (tied to the token embedding), the cross-entropy,
 * and at once their backward, so that the logits of the whole micro-batch
 * ([vocab x N], 8 KiB a token at vocab 2048) never exist together: each
 * chunk's logits are made, turned into their gradient and consumed by the
 * head's two gradient GEMMs while they are still in cache. */
#ifndef ACCUBENCH_GPT_HEAD_H
#define ACCUBENCH_GPT_HEAD_H

#include "gpt.h"
#include "layers.h"

/* The head's buffers, each sized for one chunk (gpt_head_sizes). */
enum {
    GPT_HEAD_X,       /* [d x C] the final LayerNorm's output */
    GPT_HEAD_STATS,   /* fp32 [2 x C]: its mean, then its rstd */
    GPT_HEAD_LOGITS,  /* [V x C] */
    GPT_HEAD_DLOGITS, /* [V x C] the loss gradient, scaled */
    GPT_HEAD_DX,      /* [d x C] the gradient of the LayerNorm's output */
    GPT_HEAD_BUFFERS
};

/* Tokens a chunk holds in a micro-batch of `capacity` sequences. */
int gpt_head_chunk(const model_spec *s, storage st, int capacity);

/* Bytes of each of the GPT_HEAD_BUFFERS buffers, into bytes[0..). */
void gpt_head_sizes(const model_spec *s, storage st, int capacity, size_t *bytes);

/* One micro-batch's head. */
typedef struct gpt_head_io {
    void *const *buf;          /* the GPT_HEAD_BUFFERS buffers, in order */
    int capacity;              /* the sequences they were sized for */
    const void *x;             /* [d x N] the last block's output */
    float *dres;               /* fp32 [d x N]: set to the gradient of x */
    const int *labels, *valid; /* N each: this micro-batch's */
    const float *scale;        /* device float: the loss normalisation */
    float *loss_sum;           /* device float: += the valid items' losses */
} gpt_head_io;

/* The loss of the micro-batch and its gradient back to the last block's
 * output: dres = d loss / d x; the LM head's weight gradient (the token
 * embedding's, tied) and the final LayerNorm's gamma and beta gradients
 * added into m->grads. So the GPT's forward leaves the gradient as far as
 * the last block, and its backward begins there. */
int gpt_head_forward_backward(const layer_pass *lp, const gpt_layout *l, const gpt_head_io *io);

#endif
