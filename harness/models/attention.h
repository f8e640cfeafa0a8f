/* Causal multi-head self-attention over a projection's q, k and v, as the
 * decoders (the GPT, the Llama) run it: fused where the backend has the op
 * (backend_ops.attention_forward: the CPU's, CUDA's), which reads q, k and
 * v from the projection's output as it is and keeps no scores; elsewhere as
 * llm.c arranges it, the heads permuted into blocks so that each product
 * is one strided-batched GEMM over all sequences and heads.
 *
 * q, k and v are a [3d x N] buffer in token layout (a token per column,
 * head h's q in rows h*hd.., its k in d + h*hd.., its v in 2d + h*hd..),
 * with as many key and value heads as query heads: a grouped-query model
 * repeats its key and value heads into it first (bk_repeat_kv_forward). */
#ifndef ACCUBENCH_ATTENTION_H
#define ACCUBENCH_ATTENTION_H

#include "layers.h"

/* One micro-batch's attention: its pass, the heads and the sequences. */
typedef struct attention_pass {
    const layer_pass *lp;
    int hd, heads, t, batch;
    int fused; /* the backend's fused attention (model_spec.fused_attention) */
} attention_pass;

/* 1 / sqrt(hd). */
float attention_scale(int hd);

/* Where the projection writes q, k and v (token layout): `kept` (what the
 * backward reads) when fused, else `scratch`, from which the forward
 * permutes them into `kept`. */
void *attention_qkv_at(const attention_pass *ap, void *kept, void *scratch);

/* y ([d x N], token layout) from q, k and v written at attention_qkv_at.
 * kept: [3d x N] (fused: the token layout; else the heads' blocks); probs:
 * fused, fp32 [T x H x B] log-sum-exps, else [T x T x H x B]; scores:
 * [T x T x H x B] (none fused); scratch: [4d x N] (none fused). */
int attention_forward(const attention_pass *ap, void *kept, void *probs, void *scores,
                      void *scratch, void *y);

/* dqkv ([3d x N], token layout, every element written) from dy, the
 * gradient of y, and the forward's y (which the fused op reads; the model
 * keeps it for the output projection's weight gradient anyway). dscores
 * and scratch as the forward's scores and scratch. */
int attention_backward(const attention_pass *ap, const void *kept, const void *probs,
                       const void *y, const void *dy, void *dscores, void *scratch,
                       void *dqkv);

#endif
