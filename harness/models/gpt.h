/* A GPT-2-style decoder: token and position embeddings; `layers` pre-LN
 * blocks (LayerNorm, causal self-attention with a fused QKV projection and
 * an output projection, residual; LayerNorm, an MLP of 4 x d with GELU,
 * residual); a final LayerNorm; an LM head tied to the token embedding;
 * cross-entropy over the vocabulary for every token, with a mask.
 *
 * Presets gpt-tiny and GPT-2's shapes (gpt-small, gpt-medium, gpt-large,
 * gpt-xl, the vocabulary 50257 padded to 50304); any other shape as
 * gpt:d=N,layers=N,heads=N,seq=N,vocab=N. */
#ifndef ACCUBENCH_GPT_H
#define ACCUBENCH_GPT_H

#include "model.h"

extern const model_kind gpt_kind;

/* The keys of a shape, in order (model_spec.dims). */
enum { GPT_D = 0, GPT_LAYERS = 1, GPT_HEADS = 2, GPT_SEQ = 3, GPT_VOCAB = 4 };

/* GPT-3's depth: deeper is a typo, not a model. */
#define GPT_MAX_LAYERS 96

/* Where each weight sits in the parameter vector. Every matrix is
 * column-major [rows x cols]: a linear layer's weight is [out x in] (one
 * output per row), the embeddings are [d x vocab] and [d x seq] (one token
 * or position per column). The blocks are laid out alike, one after the
 * other: block l's weights start at layer0 + l * layer_size, and the
 * offsets inside a block are the same for every block. */
typedef struct gpt_layout {
    int d, layers, heads, head_dim, seq, vocab;
    size_t wte, wpe;
    size_t layer0, layer_size;
    size_t ln1_g, ln1_b, qkv_w, qkv_b, proj_w, proj_b; /* inside a block */
    size_t ln2_g, ln2_b, fc_w, fc_b, fcp_w, fcp_b;
    size_t lnf_g, lnf_b;
    size_t n_params;
} gpt_layout;

void gpt_layout_of(const model_spec *s, gpt_layout *out);

/* The passes (gpt_passes.c): the buffers of one micro-batch, in order, and
 * the forward pass through the loss and the backward pass over them. */
int gpt_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes);
int gpt_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum);
int gpt_backward(model *m, activations *a, const micro_batch_view *mb);
/* What s->recompute adds over `examples` sequences (model_kind). */
void gpt_recompute_cost(const model_spec *s, int examples, double *gemm_flops,
                        double *gelu_elements);

#endif
