/* The MLP on the backend table: shapes, weights, forward and backward. */
#include "mlp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "layers.h"
#include "rng.h"

static const model_dim DIMS[] = {
    [MLP_HIDDEN] = {"hidden", 1, 1 << 20},
    [MLP_LAYERS] = {"layers", 1, MLP_MAX_LAYERS},
    [MLP_CLASSES] = {"classes", 2, 1 << 20},
};

static const model_preset PRESETS[] = {
    {"tiny", {64, 2, 16}},
    {"S", {1024, 4, 1024}},
    {"M", {4096, 8, 1024}},
    {"L", {8192, 8, 1024}},
    {"XL", {16384, 8, 1024}},
};

/* Activations: z and h per hidden layer, z of the last, two gradients. */
_Static_assert(2 * MLP_MAX_LINEAR + 1 <= MODEL_MAX_ACTIVATIONS,
               "the deepest MLP's activations fit the activations table");

/* Past this the parameter vector and its state (16 bytes a parameter)
 * would be tens of terabytes: a typo, not a model. */
#define MLP_MAX_PARAMS (1ull << 40)

void mlp_layout_of(const model_spec *s, mlp_layout *l)
{
    int hidden = s->dims[MLP_HIDDEN], layers = s->dims[MLP_LAYERS];
    int classes = s->dims[MLP_CLASSES];
    memset(l, 0, sizeof *l);
    l->n_linear = layers + 1;
    size_t off = 0;
    for (int i = 0; i < l->n_linear; i++) {
        l->in[i] = hidden;
        l->out[i] = i == layers ? classes : hidden;
        l->w_off[i] = off;
        off += (size_t)l->in[i] * l->out[i];
        l->b_off[i] = off;
        off += (size_t)l->out[i];
    }
    l->n_params = off;
    l->max_width = hidden > classes ? hidden : classes;
}

static int mlp_check(const model_spec *s, char *why, size_t n)
{
    double hidden = s->dims[MLP_HIDDEN], classes = s->dims[MLP_CLASSES];
    double params = s->dims[MLP_LAYERS] * (hidden * hidden + hidden) + hidden * classes + classes;
    if (params > (double)MLP_MAX_PARAMS) {
        snprintf(why, n, "%.3g parameters; at most 2^40 (%.3g)", params,
                 (double)MLP_MAX_PARAMS);
        return -1;
    }
    return 0;
}

static size_t mlp_param_count(const model_spec *s)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    return l.n_params;
}

/* GEMM FLOPs: forward, the weight gradients and the input gradients of
 * every layer but the first. */
static double mlp_flops_per_step(const model_spec *s, int examples)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    double flops = 0;
    for (int i = 0; i < l.n_linear; i++) {
        double mac = (double)l.in[i] * l.out[i] * examples;
        flops += 2 * mac;     /* forward */
        flops += 2 * mac;     /* weight gradient */
        if (i > 0)
            flops += 2 * mac; /* input gradient (the first layer needs none) */
    }
    return flops;
}

static void mlp_input(const model_spec *s, input_spec *in)
{
    *in = (input_spec){.kind = INPUT_FEATURES, .width = s->dims[MLP_HIDDEN],
                       .classes = s->dims[MLP_CLASSES], .loss_items = 1};
}

/* In order: z_0, h_0, z_1, h_1, ..., z_last (the logits), then the two
 * ping-pong gradient buffers, max_width wide. */
static int mlp_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    size_t es = storage_bytes(st);
    int n = 0;
    for (int i = 0; i < l.n_linear; i++) {
        bytes[n++] = (size_t)l.out[i] * capacity * es;     /* z */
        if (i < l.n_linear - 1)
            bytes[n++] = (size_t)l.out[i] * capacity * es; /* h */
    }
    for (int i = 0; i < 2; i++)
        bytes[n++] = (size_t)l.max_width * capacity * es;
    return n;
}

static void *act_z(const activations *a, int i) { return a->buf[2 * i]; }
/* NULL for the last layer, which has no GELU. */
static void *act_h(const mlp_layout *l, const activations *a, int i)
{
    return i < l->n_linear - 1 ? a->buf[2 * i + 1] : NULL;
}
static void *act_grad(const mlp_layout *l, const activations *a, int k)
{
    return a->buf[2 * l->n_linear - 1 + k];
}

/* Kaiming-uniform-like init with a fixed seed, biases small. */
static void mlp_init_weights(const model_spec *s, uint64_t seed, float *w)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    rng r = {seed * 0x2545f4914f6cdd1dull + 17};
    for (int i = 0; i < l.n_linear; i++) {
        float bound = 1.0f / sqrtf((float)l.in[i]);
        size_t nw = (size_t)l.in[i] * l.out[i];
        for (size_t k = 0; k < nw; k++)
            w[l.w_off[i] + k] = rng_uniform(&r, -bound, bound);
        for (int k = 0; k < l.out[i]; k++)
            w[l.b_off[i] + k] = rng_uniform(&r, -0.1f, 0.1f) * bound;
    }
}

/* Linear layer i of the layout. */
static linear_layer linear_of(const mlp_layout *l, int i)
{
    return (linear_layer){.w_off = l->w_off[i], .b_off = l->b_off[i], .out = l->out[i],
                          .in = l->in[i]};
}

/* nn.Linear's names and shapes: "layers.N.weight" [out, in] (stored
 * column-major [out x in], so the dump transposes it), "layers.N.bias". */
static int mlp_tensors(const model_spec *s, model_tensor *out, int max)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    int n = 0;
    for (int i = 0; i < l.n_linear; i++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "layers.%d", i);
        linear_layer li = linear_of(&l, i);
        n = linear_tensors(out, max, n, prefix, &li);
    }
    return n;
}

/* The layout, worked out once per model. */
static int mlp_create(model *m)
{
    mlp_layout *l = layout_create(m, sizeof *l);
    if (!l)
        return BK_OOM;
    mlp_layout_of(&m->spec, l);
    return BK_OK;
}

/* The micro-batch's inputs: examples [first, first + count) of x. */
static const void *inputs_of(const layer_pass *p, const mlp_layout *l, const micro_batch_view *mb)
{
    return layer_at(p, mb->x, (size_t)mb->first * l->in[0]);
}

static int mlp_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    const mlp_layout *l = m->impl;
    layer_pass p = layer_pass_of(m, mb, mb->count);
    const void *in = inputs_of(&p, l, mb);
    int rc;
    for (int i = 0; i < l->n_linear; i++) {
        linear_layer li = linear_of(l, i);
        if ((rc = linear_forward(&p, &li, in, act_z(a, i), act_h(l, a, i))))
            return rc;
        in = act_h(l, a, i);
    }
    int last = l->n_linear - 1;
    return bk_softmax_xent(m->b, act_z(a, last), act_grad(l, a, 0), mb->labels + mb->first,
                           mb->valid + mb->first, mb->scale, loss_sum, l->out[last],
                           mb->count);
}

static int mlp_backward(model *m, activations *a, const micro_batch_view *mb)
{
    const mlp_layout *l = m->impl;
    layer_pass p = layer_pass_of(m, mb, mb->count);
    int cur = 0; /* act_grad(cur) holds d(loss)/d(z_i) */
    int rc = BK_OK;
    for (int i = l->n_linear - 1; i >= 0 && !rc; i--) {
        const void *in = i == 0 ? inputs_of(&p, l, mb) : act_h(l, a, i - 1);
        int prev = 1 - cur; /* act_grad(prev) takes d(loss)/d(h_{i-1}) */
        linear_layer li = linear_of(l, i);
        /* dH_{i-1} = W_i^T dZ_i (the inputs need none), then layer i's
         * weight and bias gradients, reported final: the backward reads
         * W_i no more, so the optimizer in the backward may update it. */
        if ((rc = linear_backward_final(&p, &li, in, act_grad(l, a, cur),
                                        i > 0 ? act_grad(l, a, prev) : NULL)) ||
            i == 0)
            break;
        /* dZ_{i-1} = dH_{i-1} * gelu'(z_{i-1}). */
        cur = prev;
        rc = bk_gelu_backward(m->b, act_z(a, i - 1), act_grad(l, a, cur), act_grad(l, a, cur),
                              (size_t)l->in[i] * mb->count);
    }
    return rc;
}

const model_kind mlp_kind = {
    .name = "mlp",
    .dims = DIMS,
    .n_dims = sizeof DIMS / sizeof DIMS[0],
    .presets = PRESETS,
    .n_presets = sizeof PRESETS / sizeof PRESETS[0],
    .check = mlp_check,
    .param_count = mlp_param_count,
    .flops_per_step = mlp_flops_per_step,
    .input = mlp_input,
    .activation_sizes = mlp_activation_sizes,
    .init_weights = mlp_init_weights,
    .tensors = mlp_tensors,
    .create = mlp_create,
    .destroy = layout_destroy,
    .forward = mlp_forward,
    .backward = mlp_backward,
    .reports_grad_ready = 1,
    .writes_first_gradient = 1,
    .test_shape = "mlp:hidden=12,layers=2,classes=5",
};
