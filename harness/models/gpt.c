/* The GPT's shapes, weights and accounting, and its row of the model
 * table; its passes are in gpt_passes.c. Activations are [features x
 * tokens], one token per column, a micro-batch of B sequences of T tokens
 * being N = B * T columns, sequence by sequence (backend.h). */
#include "gpt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layers.h"
#include "rng.h"

static const model_dim DIMS[] = {
    [GPT_D] = {"d", 1, 1 << 16},
    [GPT_LAYERS] = {"layers", 1, GPT_MAX_LAYERS},
    [GPT_HEADS] = {"heads", 1, 1 << 10},
    /* 32768^2 scores of one head and one sequence still fit an int. */
    [GPT_SEQ] = {"seq", 1, 1 << 15},
    [GPT_VOCAB] = {"vocab", 2, 1 << 21},
};

/* GPT-2's shapes with its context of 1024 and its vocabulary of 50257
 * padded to a multiple of 64; gpt-tiny takes well under a second a step
 * on a laptop's CPU. */
static const model_preset PRESETS[] = {
    {"gpt-tiny", {64, 2, 4, 32, 512}},
    {"gpt-small", {768, 12, 12, 1024, 50304}},
    {"gpt-medium", {1024, 24, 16, 1024, 50304}},
    {"gpt-large", {1280, 36, 20, 1024, 50304}},
    {"gpt-xl", {1600, 48, 25, 1024, 50304}},
};

/* Past this the parameter vector and its state (16 bytes a parameter)
 * would be tens of terabytes: a typo, not a model. */
#define GPT_MAX_PARAMS (1ull << 40)

/* -------------------------------------------------------------- layout */

void gpt_layout_of(const model_spec *s, gpt_layout *l)
{
    memset(l, 0, sizeof *l);
    l->d = s->dims[GPT_D];
    l->layers = s->dims[GPT_LAYERS];
    l->heads = s->dims[GPT_HEADS];
    l->head_dim = l->d / l->heads;
    l->seq = s->dims[GPT_SEQ];
    l->vocab = s->dims[GPT_VOCAB];
    size_t d = (size_t)l->d, off = 0;
    l->wte = off;
    off += d * (size_t)l->vocab;
    l->wpe = off;
    off += d * (size_t)l->seq;
    /* One block, in GPT-2's state_dict order. */
    size_t in = 0;
    l->ln1_g = in, in += d;
    l->ln1_b = in, in += d;
    l->qkv_w = in, in += 3 * d * d;
    l->qkv_b = in, in += 3 * d;
    l->proj_w = in, in += d * d;
    l->proj_b = in, in += d;
    l->ln2_g = in, in += d;
    l->ln2_b = in, in += d;
    l->fc_w = in, in += 4 * d * d;
    l->fc_b = in, in += 4 * d;
    l->fcp_w = in, in += 4 * d * d;
    l->fcp_b = in, in += d;
    l->layer0 = off;
    l->layer_size = in;
    off += in * (size_t)l->layers;
    l->lnf_g = off, off += d;
    l->lnf_b = off, off += d;
    l->n_params = off;
}

/* The parameter count in double, for the check (before it could overflow
 * a size_t). */
static double params_of(const model_spec *s)
{
    double d = s->dims[GPT_D], layers = s->dims[GPT_LAYERS];
    return d * s->dims[GPT_VOCAB] + d * s->dims[GPT_SEQ] + layers * (12 * d * d + 13 * d) + 2 * d;
}

static int gpt_check(const model_spec *s, char *why, size_t n)
{
    int d = s->dims[GPT_D], heads = s->dims[GPT_HEADS];
    if (d % heads) {
        snprintf(why, n, "heads=%d does not divide d=%d", heads, d);
        return -1;
    }
    double params = params_of(s);
    if (params > (double)GPT_MAX_PARAMS) {
        snprintf(why, n, "%.3g parameters; at most 2^40 (%.3g)", params, (double)GPT_MAX_PARAMS);
        return -1;
    }
    return 0;
}

static size_t gpt_param_count(const model_spec *s)
{
    gpt_layout l;
    gpt_layout_of(s, &l);
    return l.n_params;
}

/* FLOPs of one step over `examples` sequences of seq tokens, every token
 * counted (padding runs through the model like the rest).
 *
 * The weights: 6 FLOPs per weight of a matrix product per token (2
 * forward, 2 for the input gradient, 2 for the weight gradient), over
 * 12 L d^2 (the blocks' QKV, output projection and MLP) + V d (the LM
 * head, which is the tied token embedding): PaLM's "6N" with N the
 * non-embedding weights, plus the LM head's product, which runs (as
 * nanoGPT counts it: its N keeps the tied wte and drops only wpe). The
 * position table, the biases and the LayerNorms do no matrix product and
 * are left out.
 *
 * Attention: PaLM's 12 L d T per token (H x Q = d), which is also the
 * exact count of what the unfused path runs: the score and weighted-sum
 * products are full T x T squares (the causal half is masked in the
 * softmax, not skipped), 2 forward + 4 backward products of 2 T^2 hd per
 * head and sequence. The fused attention (the CPU's, CUDA's) skips the
 * keys past each block of 64 queries, and is credited with the same
 * count: a step's FLOPs are the model's, whatever the backend's
 * arrangement. */
static double gpt_flops_per_step(const model_spec *s, int examples)
{
    double d = s->dims[GPT_D], layers = s->dims[GPT_LAYERS], t = s->dims[GPT_SEQ];
    double tokens = (double)examples * t;
    double weights = 12 * layers * d * d + (double)s->dims[GPT_VOCAB] * d;
    return 6 * weights * tokens + 12 * layers * d * t * tokens;
}

static void gpt_input(const model_spec *s, input_spec *in)
{
    *in = (input_spec){.kind = INPUT_TOKENS, .width = s->dims[GPT_SEQ],
                       .vocab = s->dims[GPT_VOCAB], .classes = s->dims[GPT_VOCAB],
                       .loss_items = s->dims[GPT_SEQ]};
}

/* ------------------------------------------------------------- weights */

/* GPT-2's initialisation: weights and embeddings Normal(0, 0.02), the
 * projections into the residual stream scaled by 1/sqrt(2 layers), biases
 * 0, LayerNorms the identity. */
static void gpt_init_weights(const model_spec *s, uint64_t seed, float *w)
{
    gpt_layout l;
    gpt_layout_of(s, &l);
    rng r = {seed * 0x2545f4914f6cdd1dull + 29};
    size_t d = (size_t)l.d;
    float std = 0.02f, proj_std = 0.02f / sqrtf(2.0f * (float)l.layers);
    weights_normal(&r, w + l.wte, d * (size_t)l.vocab, std);
    weights_normal(&r, w + l.wpe, d * (size_t)l.seq, std);
    for (int i = 0; i < l.layers; i++) {
        float *b = w + l.layer0 + (size_t)i * l.layer_size;
        weights_fill(b + l.ln1_g, d, 1.0f);
        weights_fill(b + l.ln1_b, d, 0.0f);
        weights_normal(&r, b + l.qkv_w, 3 * d * d, std);
        weights_fill(b + l.qkv_b, 3 * d, 0.0f);
        weights_normal(&r, b + l.proj_w, d * d, proj_std);
        weights_fill(b + l.proj_b, d, 0.0f);
        weights_fill(b + l.ln2_g, d, 1.0f);
        weights_fill(b + l.ln2_b, d, 0.0f);
        weights_normal(&r, b + l.fc_w, 4 * d * d, std);
        weights_fill(b + l.fc_b, 4 * d, 0.0f);
        weights_normal(&r, b + l.fcp_w, 4 * d * d, proj_std);
        weights_fill(b + l.fcp_b, d, 0.0f);
    }
    weights_fill(w + l.lnf_g, d, 1.0f);
    weights_fill(w + l.lnf_b, d, 0.0f);
}

/* ------------------------------------------------------------- tensors */

/* nanoGPT's state_dict names (nn.Linear layers: c_attn, c_proj, c_fc);
 * lm_head.weight is transformer.wte.weight, tied, so listed once. */
static int gpt_tensors(const model_spec *s, model_tensor *out, int max)
{
    gpt_layout l;
    gpt_layout_of(s, &l);
    int64_t d = l.d;
    int n = 0;
    n = tensor_add(out, max, n, "transformer.wte.weight", l.wte, d, l.vocab, 1);
    if (out && max > 0) /* the LM head writes its gradient first, the embedding last */
        out[0].grad_twice = 1;
    n = tensor_add(out, max, n, "transformer.wpe.weight", l.wpe, d, l.seq, 1);
    const block_tensor block[] = {
        {"ln_1.weight", l.ln1_g, d, TENSOR_VECTOR},
        {"ln_1.bias", l.ln1_b, d, TENSOR_VECTOR},
        {"attn.c_attn.weight", l.qkv_w, 3 * d, d},
        {"attn.c_attn.bias", l.qkv_b, 3 * d, TENSOR_VECTOR},
        {"attn.c_proj.weight", l.proj_w, d, d},
        {"attn.c_proj.bias", l.proj_b, d, TENSOR_VECTOR},
        {"ln_2.weight", l.ln2_g, d, TENSOR_VECTOR},
        {"ln_2.bias", l.ln2_b, d, TENSOR_VECTOR},
        {"mlp.c_fc.weight", l.fc_w, 4 * d, d},
        {"mlp.c_fc.bias", l.fc_b, 4 * d, TENSOR_VECTOR},
        {"mlp.c_proj.weight", l.fcp_w, d, 4 * d},
        {"mlp.c_proj.bias", l.fcp_b, d, TENSOR_VECTOR},
    };
    n = block_tensors(out, max, n, "transformer.h", l.layers, l.layer0, l.layer_size, block,
                      (int)(sizeof block / sizeof block[0]));
    n = tensor_add_vector(out, max, n, "transformer.ln_f.weight", l.lnf_g, d);
    n = tensor_add_vector(out, max, n, "transformer.ln_f.bias", l.lnf_b, d);
    return n;
}

/* -------------------------------------------------------------- create */

static int gpt_create(model *m)
{
    gpt_layout *l = layout_create(m, sizeof *l);
    if (!l)
        return BK_OOM;
    gpt_layout_of(&m->spec, l);
    return BK_OK;
}

const model_kind gpt_kind = {
    .name = "gpt",
    .dims = DIMS,
    .n_dims = sizeof DIMS / sizeof DIMS[0],
    .presets = PRESETS,
    .n_presets = sizeof PRESETS / sizeof PRESETS[0],
    .check = gpt_check,
    .param_count = gpt_param_count,
    .flops_per_step = gpt_flops_per_step,
    .input = gpt_input,
    .activation_sizes = gpt_activation_sizes,
    .recompute_caps = RECOMPUTE_ALL,
    .recompute_cost = gpt_recompute_cost,
    .init_weights = gpt_init_weights,
    .tensors = gpt_tensors,
    .create = gpt_create,
    .destroy = layout_destroy,
    .forward = gpt_forward,
    .backward = gpt_backward,
    .reports_grad_ready = 1,
    .test_shape = "gpt:d=8,layers=2,heads=2,seq=5,vocab=13",
};
