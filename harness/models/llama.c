/* The Llama's shapes, weights and accounting, and its row of the model
 * table; its passes are in llama_passes.c. Activations are [features x
 * tokens], one token per column, a micro-batch of B sequences of T tokens
 * being N = B * T columns, sequence by sequence (backend.h). */
#include "llama.h"

#include <stdio.h>
#include <string.h>

#include "layers.h"

static const model_dim DIMS[] = {
    [LLAMA_D] = {"d", 1, 1 << 16},
    [LLAMA_LAYERS] = {"layers", 1, LLAMA_MAX_LAYERS},
    [LLAMA_HEADS] = {"heads", 1, 1 << 10},
    [LLAMA_KV_HEADS] = {"kv_heads", 1, 1 << 10},
    [LLAMA_FFN] = {"ffn", 1, 1 << 20},
    /* 32768^2 scores of one head and one sequence still fit an int. */
    [LLAMA_SEQ] = {"seq", 1, 1 << 15},
    [LLAMA_VOCAB] = {"vocab", 2, 1 << 21},
    [LLAMA_TIED] = {"tied", 0, 1},
};

/* llama-tiny runs a step in milliseconds (the tests' shape); llama-cpu is
 * the gpt-cpu profile's shape made a Llama (d 128, 4 layers, seq 64,
 * vocabulary 2048; 2 KV heads for 4 query heads, ffn about 8/3 d as
 * Llama's, rounded to 32); Llama 3.2 1B and Llama 3 8B as Hugging Face's
 * configs have them, at a context of 2048. */
static const model_preset PRESETS[] = {
    {"llama-tiny", {64, 2, 4, 2, 176, 32, 512, 0}},
    {"llama-cpu", {128, 4, 4, 2, 352, 64, 2048, 0}},
    {"llama3.2-1b", {2048, 16, 32, 8, 8192, 2048, 128256, 1}},
    {"llama3-8b", {4096, 32, 32, 8, 14336, 2048, 128256, 0}},
};

/* What the manifest of a dump adds to the shape (model_constant). */
static const model_constant CONSTANTS[] = {
    {"rope_theta", LLAMA_ROPE_THETA},
    {"norm_eps", LLAMA_NORM_EPS},
};

/* Past this the parameter vector and its state (16 bytes a parameter)
 * would be tens of terabytes: a typo, not a model. */
#define LLAMA_MAX_PARAMS (1ull << 40)

/* -------------------------------------------------------------- layout */

void llama_layout_of(const model_spec *s, llama_layout *l)
{
    memset(l, 0, sizeof *l);
    l->d = s->dims[LLAMA_D];
    l->layers = s->dims[LLAMA_LAYERS];
    l->heads = s->dims[LLAMA_HEADS];
    l->kv_heads = s->dims[LLAMA_KV_HEADS];
    l->head_dim = l->d / l->heads;
    l->kv_dim = l->kv_heads * l->head_dim;
    l->ffn = s->dims[LLAMA_FFN];
    l->seq = s->dims[LLAMA_SEQ];
    l->vocab = s->dims[LLAMA_VOCAB];
    l->tied = s->dims[LLAMA_TIED];
    size_t d = (size_t)l->d, kv = (size_t)l->kv_dim, f = (size_t)l->ffn, off = 0;
    l->embed = off;
    off += d * (size_t)l->vocab;
    /* One block, in the order its backward finishes them from the end. */
    size_t in = 0;
    l->norm1 = in, in += d;
    l->q_w = in, in += d * d;
    l->k_w = in, in += kv * d;
    l->v_w = in, in += kv * d;
    l->o_w = in, in += d * d;
    l->norm2 = in, in += d;
    l->gate_w = in, in += f * d;
    l->up_w = in, in += f * d;
    l->down_w = in, in += d * f;
    l->layer0 = off;
    l->layer_size = in;
    off += in * (size_t)l->layers;
    l->norm_f = off, off += d;
    l->head = l->embed;
    if (!l->tied)
        l->head = off, off += d * (size_t)l->vocab;
    l->n_params = off;
}

/* The parameter count in double, for the check (before it could overflow
 * a size_t). */
static double params_of(const model_spec *s)
{
    double d = s->dims[LLAMA_D], layers = s->dims[LLAMA_LAYERS], f = s->dims[LLAMA_FFN];
    double kv = d / s->dims[LLAMA_HEADS] * s->dims[LLAMA_KV_HEADS];
    double vd = d * s->dims[LLAMA_VOCAB];
    return vd * (s->dims[LLAMA_TIED] ? 1 : 2) + layers * (2 * d + 2 * d * d + 2 * kv * d +
                                                          3 * f * d) + d;
}

static int llama_check(const model_spec *s, char *why, size_t n)
{
    int d = s->dims[LLAMA_D], heads = s->dims[LLAMA_HEADS], kv = s->dims[LLAMA_KV_HEADS];
    if (d % heads) {
        snprintf(why, n, "heads=%d does not divide d=%d", heads, d);
        return -1;
    }
    if (heads % kv) {
        snprintf(why, n, "kv_heads=%d does not divide heads=%d (each key/value head serves "
                 "a whole group of query heads)", kv, heads);
        return -1;
    }
    if ((d / heads) % 2) {
        snprintf(why, n, "the head dimension d/heads=%d is odd; rotary embeddings turn "
                 "pairs of its elements", d / heads);
        return -1;
    }
    double params = params_of(s);
    if (params > (double)LLAMA_MAX_PARAMS) {
        snprintf(why, n, "%.3g parameters; at most 2^40 (%.3g)", params,
                 (double)LLAMA_MAX_PARAMS);
        return -1;
    }
    return 0;
}

static size_t llama_param_count(const model_spec *s)
{
    llama_layout l;
    llama_layout_of(s, &l);
    return l.n_params;
}

/* FLOPs of one step over `examples` sequences of seq tokens, every token
 * counted, as the GPT counts them (gpt.c): 6 FLOPs per weight of a matrix
 * product per token over the blocks' projections, L (2 d^2 + 2 d kv_dim +
 * 3 d ffn) (q and o, k and v, gate, up and down), and the LM head's V d
 * (tied or not: it is a product either way; the embedding lookup is
 * none). The norms do no matrix product and are left out.
 *
 * Attention: 12 L d T per token, as the GPT's: the grouped key and value
 * heads are repeated for every query head (repeat_kv) before the products,
 * so the products are those of d / hd full heads. */
static double llama_flops_per_step(const model_spec *s, int examples)
{
    llama_layout l;
    llama_layout_of(s, &l);
    double d = l.d, layers = l.layers, t = l.seq, kv = l.kv_dim, f = l.ffn;
    double tokens = (double)examples * t;
    double weights = layers * (2 * d * d + 2 * d * kv + 3 * d * f) + (double)l.vocab * d;
    return 6 * weights * tokens + 12 * layers * d * t * tokens;
}

static void llama_input(const model_spec *s, input_spec *in)
{
    *in = (input_spec){.kind = INPUT_TOKENS, .width = s->dims[LLAMA_SEQ],
                       .vocab = s->dims[LLAMA_VOCAB], .classes = s->dims[LLAMA_VOCAB],
                       .loss_items = s->dims[LLAMA_SEQ]};
}

/* ------------------------------------------------------------- weights */

/* Hugging Face's LlamaPreTrainedModel: every projection, the embedding
 * and the LM head Normal(0, initializer_range 0.02), the norms' gains 1. */
static void llama_init_weights(const model_spec *s, uint64_t seed, float *w)
{
    llama_layout l;
    llama_layout_of(s, &l);
    rng r = {seed * 0x2545f4914f6cdd1dull + 53};
    size_t d = (size_t)l.d, kv = (size_t)l.kv_dim, f = (size_t)l.ffn;
    float std = 0.02f;
    weights_normal(&r, w + l.embed, d * (size_t)l.vocab, std);
    for (int i = 0; i < l.layers; i++) {
        float *b = w + l.layer0 + (size_t)i * l.layer_size;
        weights_fill(b + l.norm1, d, 1.0f);
        weights_normal(&r, b + l.q_w, d * d, std);
        weights_normal(&r, b + l.k_w, kv * d, std);
        weights_normal(&r, b + l.v_w, kv * d, std);
        weights_normal(&r, b + l.o_w, d * d, std);
        weights_fill(b + l.norm2, d, 1.0f);
        weights_normal(&r, b + l.gate_w, f * d, std);
        weights_normal(&r, b + l.up_w, f * d, std);
        weights_normal(&r, b + l.down_w, d * f, std);
    }
    weights_fill(w + l.norm_f, d, 1.0f);
    if (!l.tied)
        weights_normal(&r, w + l.head, d * (size_t)l.vocab, std);
}

/* ------------------------------------------------------------- tensors */

/* Hugging Face's LlamaForCausalLM state_dict names; tied, lm_head.weight
 * is model.embed_tokens.weight and listed once. */
static int llama_tensors(const model_spec *s, model_tensor *out, int max)
{
    llama_layout l;
    llama_layout_of(s, &l);
    int64_t d = l.d, kv = l.kv_dim, f = l.ffn;
    int n = 0;
    n = tensor_add(out, max, n, "model.embed_tokens.weight", l.embed, d, l.vocab, 1);
    if (l.tied && out && max > 0) /* the LM head writes its gradient first, the embedding last */
        out[0].grad_twice = 1;
    const block_tensor block[] = {
        {"input_layernorm.weight", l.norm1, d, TENSOR_VECTOR},
        {"self_attn.q_proj.weight", l.q_w, d, d},
        {"self_attn.k_proj.weight", l.k_w, kv, d},
        {"self_attn.v_proj.weight", l.v_w, kv, d},
        {"self_attn.o_proj.weight", l.o_w, d, d},
        {"post_attention_layernorm.weight", l.norm2, d, TENSOR_VECTOR},
        {"mlp.gate_proj.weight", l.gate_w, f, d},
        {"mlp.up_proj.weight", l.up_w, f, d},
        {"mlp.down_proj.weight", l.down_w, d, f},
    };
    n = block_tensors(out, max, n, "model.layers", l.layers, l.layer0, l.layer_size, block,
                      (int)(sizeof block / sizeof block[0]));
    n = tensor_add_vector(out, max, n, "model.norm.weight", l.norm_f, d);
    if (!l.tied)
        n = tensor_add(out, max, n, "lm_head.weight", l.head, d, l.vocab, 1);
    return n;
}

/* -------------------------------------------------------------- create */

static int llama_create(model *m)
{
    llama_layout *l = layout_create(m, sizeof *l);
    if (!l)
        return BK_OOM;
    llama_layout_of(&m->spec, l);
    return BK_OK;
}

const model_kind llama_kind = {
    .name = "llama",
    .dims = DIMS,
    .n_dims = sizeof DIMS / sizeof DIMS[0],
    .presets = PRESETS,
    .n_presets = sizeof PRESETS / sizeof PRESETS[0],
    .constants = CONSTANTS,
    .n_constants = sizeof CONSTANTS / sizeof CONSTANTS[0],
    .check = llama_check,
    .param_count = llama_param_count,
    .flops_per_step = llama_flops_per_step,
    .input = llama_input,
    .activation_sizes = llama_activation_sizes,
    .recompute_caps = RECOMPUTE_BIT(RECOMPUTE_NONE) | RECOMPUTE_BIT(RECOMPUTE_BLOCK),
    .recompute_cost = llama_recompute_cost,
    .init_weights = llama_init_weights,
    .tensors = llama_tensors,
    .create = llama_create,
    .destroy = layout_destroy,
    .forward = llama_forward,
    .backward = llama_backward,
    .reports_grad_ready = 1,
    /* A kind whose every gradient goes through layer_grad_beta could write
     * its first; the RMSNorms' gains add into theirs (as the GPT's
     * LayerNorms), so the window zeroes the gradient first. */
    .writes_first_gradient = 0,
    /* heads 4 over kv_heads 2: grouped; head_dim 4: two rotary pairs at
     * different frequencies; tied
     * is 0 here, and tied=1 is checked by test_llama. */
    .test_shape = "llama:d=16,layers=2,heads=4,kv_heads=2,ffn=12,seq=5,vocab=13,tied=0",
};
