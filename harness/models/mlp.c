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

/* Recomputation. A block of the MLP is one hidden layer (Linear, bias,
 * GELU): its input is the layer before's h (or the inputs), what it keeps
 * for the backward is its z. So `gelu` keeps z and recomputes h = GELU(z)
 * where the next layer's weight gradient needs it, and `block` keeps h and
 * recomputes z = W h_prev + b where the GELU's backward needs it: the same
 * bytes kept, one GEMM a layer more for block. Neither needs a buffer of
 * its own: the recomputed tensor goes into the gradient buffer that is
 * free at that moment (forward: both are; backward: the one that takes the
 * next input gradient, or the one whose gradient was just consumed). The
 * logits are always kept (the loss's gradient is computed from them). */
static int keeps_z(const model_spec *s) { return s->recompute != RECOMPUTE_BLOCK; }
static int keeps_h(const model_spec *s) { return s->recompute != RECOMPUTE_GELU; }

/* In order: z_0, h_0, z_1, h_1, ..., z_last (the logits), then the two
 * ping-pong gradient buffers, max_width wide. A hidden z or h that is
 * recomputed has 0 bytes (its place in the order stays). */
static int mlp_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    size_t es = storage_bytes(st);
    int n = 0;
    for (int i = 0; i < l.n_linear; i++) {
        size_t one = (size_t)l.out[i] * capacity * es;
        int last = i == l.n_linear - 1;
        bytes[n++] = last || keeps_z(s) ? one : 0; /* z */
        if (!last)
            bytes[n++] = keeps_h(s) ? one : 0;    /* h */
    }
    for (int i = 0; i < 2; i++)
        bytes[n++] = (size_t)l.max_width * capacity * es;
    return n;
}

/* What recomputation costs over `examples` examples: gelu, every hidden
 * h once; block, every hidden z's GEMM once. */
static void mlp_recompute_cost(const model_spec *s, int examples, double *gemm, double *gelu)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    *gemm = *gelu = 0;
    for (int i = 0; i < l.n_linear - 1; i++) {
        if (s->recompute == RECOMPUTE_GELU)
            *gelu += (double)l.out[i] * examples;
        else if (s->recompute == RECOMPUTE_BLOCK)
            *gemm += 2.0 * l.in[i] * l.out[i] * examples;
    }
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

/* Where the forward writes layer i's z and h: kept, or (recomputed in the
 * backward) a gradient buffer, free until the loss writes the first; h
 * alternates between the two, so that a layer never writes its own input. */
static void *forward_z(const model *m, const mlp_layout *l, const activations *a, int i)
{
    return i == l->n_linear - 1 || keeps_z(&m->spec) ? act_z(a, i) : act_grad(l, a, 0);
}
static void *forward_h(const model *m, const mlp_layout *l, const activations *a, int i)
{
    if (i == l->n_linear - 1 || keeps_h(&m->spec))
        return act_h(l, a, i);
    return act_grad(l, a, i % 2);
}

static int mlp_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    const mlp_layout *l = m->impl;
    layer_pass p = layer_pass_of(m, mb, mb->count);
    const void *in = inputs_of(&p, l, mb);
    int rc;
    for (int i = 0; i < l->n_linear; i++) {
        linear_layer li = linear_of(l, i);
        void *h = forward_h(m, l, a, i);
        if ((rc = linear_forward(&p, &li, in, forward_z(m, l, a, i), h)))
            return rc;
        in = h;
    }
    int last = l->n_linear - 1;
    return bk_softmax_xent(m->b, act_z(a, last), act_grad(l, a, 0), mb->labels + mb->first,
                           mb->valid + mb->first, mb->scale, loss_sum, l->out[last],
                           mb->count);
}

/* Layer i > 0 under gelu: its input h_{i-1} = GELU(z_{i-1}) recomputed into
 * the buffer that takes dH_{i-1}, so the weight gradient comes first and
 * the input gradient then overwrites it. */
static int backward_recomputing_input(const layer_pass *p, const mlp_layout *l, activations *a,
                                      int i, void *dz, void *dh)
{
    linear_layer li = linear_of(l, i);
    int rc;
    if ((rc = bk_gelu_forward(p->b, act_z(a, i - 1), dh, (size_t)l->in[i] * p->n)) ||
        (rc = linear_backward_weights(p, &li, dh, dz)) ||
        (rc = linear_backward_input(p, &li, dz, dh)))
        return rc;
    return linear_report_final(p, &li);
}

/* z_{i-1} for the GELU's backward: kept, or under block recomputed from
 * the layer's kept input into `free_buf` (dZ_i, consumed by now). */
static const void *z_for_backward(const layer_pass *p, const mlp_layout *l, activations *a,
                                  const micro_batch_view *mb, int i, void *free_buf, int *rc)
{
    if (keeps_z(&p->m->spec))
        return act_z(a, i - 1);
    linear_layer prev = linear_of(l, i - 1);
    const void *in = i - 1 == 0 ? inputs_of(p, l, mb) : act_h(l, a, i - 2);
    *rc = linear_forward(p, &prev, in, free_buf, NULL);
    return free_buf;
}

static int mlp_backward(model *m, activations *a, const micro_batch_view *mb)
{
    const mlp_layout *l = m->impl;
    layer_pass p = layer_pass_of(m, mb, mb->count);
    int cur = 0; /* act_grad(cur) holds d(loss)/d(z_i) */
    int rc = BK_OK;
    for (int i = l->n_linear - 1; i >= 0 && !rc; i--) {
        int prev = 1 - cur; /* act_grad(prev) takes d(loss)/d(h_{i-1}) */
        linear_layer li = linear_of(l, i);
        /* dH_{i-1} = W_i^T dZ_i (the inputs need none), then layer i's
         * weight and bias gradients, reported final: the backward reads
         * W_i no more, so the optimizer in the backward may update it. */
        void *dz = act_grad(l, a, cur), *dh = i > 0 ? act_grad(l, a, prev) : NULL;
        if (i > 0 && !keeps_h(&m->spec))
            rc = backward_recomputing_input(&p, l, a, i, dz, dh);
        else
            rc = linear_backward_final(&p, &li, i == 0 ? inputs_of(&p, l, mb)
                                                       : act_h(l, a, i - 1), dz, dh);
        if (rc || i == 0)
            break;
        /* dZ_{i-1} = dH_{i-1} * gelu'(z_{i-1}). */
        const void *z = z_for_backward(&p, l, a, mb, i, act_grad(l, a, cur), &rc);
        cur = prev;
        if (!rc)
            rc = bk_gelu_backward(m->b, z, act_grad(l, a, cur), act_grad(l, a, cur),
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
    .recompute_caps = RECOMPUTE_ALL,
    .recompute_cost = mlp_recompute_cost,
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
