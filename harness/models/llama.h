/* A Llama-style decoder (Hugging Face's LlamaForCausalLM): a token
 * embedding and no position table; `layers` pre-norm blocks (RMSNorm,
 * grouped-query causal self-attention with rotary position embeddings on
 * q and k and no biases, residual; RMSNorm, a SwiGLU MLP
 * down(silu(gate(x)) * up(x)), residual); a final RMSNorm; an LM head of
 * its own, or tied to the token embedding (tied=1); cross-entropy over
 * the vocabulary for every token, with a mask.
 *
 * Presets llama-tiny, llama-cpu and Llama 3's shapes (llama3.2-1b,
 * llama3-8b); any other shape as
 * llama:d=N,layers=N,heads=N,kv_heads=N,ffn=N,seq=N,vocab=N,tied=0|1. */
#ifndef ACCUBENCH_LLAMA_H
#define ACCUBENCH_LLAMA_H

#include "model.h"

extern const model_kind llama_kind;

/* The keys of a shape, in order (model_spec.dims). */
enum {
    LLAMA_D = 0,
    LLAMA_LAYERS = 1,
    LLAMA_HEADS = 2,
    LLAMA_KV_HEADS = 3,
    LLAMA_FFN = 4,
    LLAMA_SEQ = 5,
    LLAMA_VOCAB = 6,
    LLAMA_TIED = 7,
};

/* Llama 3 70B's depth: deep enough for the shapes trained at this scale,
 * and what the activations table is held to (llama_passes.c). */
#define LLAMA_MAX_LAYERS 80

/* Llama 3's rope_theta (Hugging Face's config), the rotary base of every
 * shape. Llama 3.1 and 3.2 also rescale the long wavelengths
 * (rope_scaling "llama3"); that is not modelled: at the sequence lengths
 * of the presets it changes the numbers, not the work. */
#define LLAMA_ROPE_THETA 500000.0f

/* The RMSNorms' epsilon, Llama 3's rms_norm_eps: what the backends'
 * RMSNorm computes with (elementwise.h's EW_RMSNORM_EPS; test_llama_ops
 * holds the two equal), named here for the dump's manifest. */
#define LLAMA_NORM_EPS 1e-5

/* Where each weight sits in the parameter vector, in the order the
 * backward finishes them from the end: the embedding; each block's
 * input_layernorm, q_proj, k_proj, v_proj, o_proj,
 * post_attention_layernorm, gate_proj, up_proj, down_proj; the final norm;
 * the LM head when untied. Every matrix is column-major [rows x cols]: a
 * projection [out x in] (nn.Linear's [out, in]), the embedding and the LM
 * head [d x vocab] (one token per column). */
typedef struct llama_layout {
    int d, layers, heads, kv_heads, head_dim, ffn, seq, vocab, tied;
    int kv_dim; /* kv_heads * head_dim */
    size_t embed;
    size_t layer0, layer_size;
    size_t norm1, q_w, k_w, v_w, o_w, norm2, gate_w, up_w, down_w; /* inside a block */
    size_t norm_f;
    size_t head; /* the LM head: embed when tied */
    size_t n_params;
} llama_layout;

void llama_layout_of(const model_spec *s, llama_layout *out);

/* The passes (llama_passes.c): the buffers of one micro-batch, in order,
 * the forward pass through the loss and the backward pass over them. */
int llama_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes);
int llama_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum);
int llama_backward(model *m, activations *a, const micro_batch_view *mb);
/* What s->recompute adds over `examples` sequences (model_kind). */
void llama_recompute_cost(const model_spec *s, int examples, double *gemm_flops,
                          double *gelu_elements);

#endif
