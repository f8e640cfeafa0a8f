/* The MLP on the backend table: shapes, weights, forward and backward. */
#include "mlp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
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

/* nn.Linear's names and shapes: "layers.N.weight" [out, in] (stored
 * column-major [out x in], so the dump transposes it), "layers.N.bias". */
static int mlp_tensors(const model_spec *s, model_tensor *out, int max)
{
    mlp_layout l;
    mlp_layout_of(s, &l);
    int n = 0;
    for (int i = 0; i < l.n_linear; i++)
        for (int bias = 0; bias < 2; bias++, n++) {
            if (!out || n >= max)
                continue;
            model_tensor *t = &out[n];
            snprintf(t->name, sizeof t->name, "layers.%d.%s", i, bias ? "bias" : "weight");
            t->offset = bias ? l.b_off[i] : l.w_off[i];
            t->rows = l.out[i];
            t->cols = bias ? 1 : l.in[i];
            t->torch_is_transpose = 0;
        }
    return n;
}

/* The layout, worked out once per model. */
static int mlp_create(model *m)
{
    mlp_layout *l = malloc(sizeof *l);
    if (!l) {
        snprintf(m->b->error, sizeof m->b->error, "out of host memory for the layout");
        return BK_OOM;
    }
    mlp_layout_of(&m->spec, l);
    m->impl = l;
    return BK_OK;
}

static void mlp_destroy(model *m)
{
    free(m->impl);
    m->impl = NULL;
}

/* Address of column `col` of a [rows x *] matrix in compute storage. */
static const void *column(const backend *b, const void *base, int rows, int col)
{
    return (const char *)base + (size_t)col * rows * storage_bytes(b->compute_storage);
}

static const void *weight(const model *m, const mlp_layout *l, int i)
{
    return (const char *)m->params_compute + l->w_off[i] * storage_bytes(m->b->compute_storage);
}

static int mlp_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    backend *b = m->b;
    const mlp_layout *l = m->impl;
    storage cs = b->compute_storage;
    const void *in = column(b, mb->x, l->in[0], mb->first);
    int rc;
    for (int i = 0; i < l->n_linear; i++) {
        gemm_desc g = {
            .trans_a = 0, .trans_b = 0, .m = l->out[i], .n = mb->count, .k = l->in[i],
            .alpha = 1.0f, .a = weight(m, l, i), .lda = l->out[i], .b = in, .ldb = l->in[i],
            .beta = 0.0f, .c = act_z(a, i), .ldc = l->out[i], .ab_storage = cs, .c_storage = cs,
        };
        int hidden = i < l->n_linear - 1;
        if ((rc = bk_gemm(b, &g)) ||
            (rc = bk_bias_gelu_forward(b, act_z(a, i), m->params + l->b_off[i], act_h(l, a, i),
                                       l->out[i], mb->count, hidden)))
            return rc;
        in = act_h(l, a, i);
    }
    int last = l->n_linear - 1;
    return bk_softmax_xent(b, act_z(a, last), act_grad(l, a, 0), mb->labels + mb->first,
                           mb->valid + mb->first, mb->scale, loss_sum, l->out[last],
                           mb->count);
}

static int mlp_backward(model *m, activations *a, const micro_batch_view *mb)
{
    backend *b = m->b;
    const mlp_layout *l = m->impl;
    storage cs = b->compute_storage;
    int cur = 0; /* act_grad(cur) holds d(loss)/d(z_i) */
    int rc = BK_OK;
    for (int i = l->n_linear - 1; i >= 0 && !rc; i--) {
        const void *in = i == 0 ? column(b, mb->x, l->in[0], mb->first) : act_h(l, a, i - 1);
        int prev = 1 - cur; /* act_grad(prev) takes d(loss)/d(h_{i-1}) */
        /* dH_{i-1} = W_i^T dZ_i first (the inputs need none): after it, the
         * backward reads W_i no more, so the range reported below may be
         * updated at once (the optimizer in the backward). */
        if (i > 0) {
            gemm_desc gx = {
                .trans_a = 1, .trans_b = 0, .m = l->in[i], .n = mb->count, .k = l->out[i],
                .alpha = 1.0f, .a = weight(m, l, i), .lda = l->out[i],
                .b = act_grad(l, a, cur), .ldb = l->out[i], .beta = 0.0f,
                .c = act_grad(l, a, prev), .ldc = l->in[i], .ab_storage = cs, .c_storage = cs,
            };
            if ((rc = bk_gemm(b, &gx)))
                break;
        }
        /* dW_i += dZ_i * in^T: accumulate in place, beta = 1; the window's
         * first micro-batch writes it, beta = 0 (the same sums: 0 + x is
         * x), and its bias gradient adds to zeros. */
        gemm_desc gw = {
            .trans_a = 0, .trans_b = 1, .m = l->out[i], .n = l->in[i], .k = mb->count,
            .alpha = 1.0f, .a = act_grad(l, a, cur), .lda = l->out[i], .b = in,
            .ldb = l->in[i], .beta = mb->first_of_window ? 0.0f : 1.0f,
            .c = m->grads + l->w_off[i], .ldc = l->out[i],
            .ab_storage = cs, .c_storage = STORAGE_F32,
        };
        float *db = m->grads + l->b_off[i];
        if ((rc = bk_gemm(b, &gw)) ||
            (mb->first_of_window && (rc = bk_zero(b, db, (size_t)l->out[i] * sizeof *db))) ||
            (rc = bk_bias_grad(b, act_grad(l, a, cur), db, l->out[i], mb->count)))
            break;
        /* Layer i's weight and bias (contiguous) are final. */
        if ((rc = model_grad_ready(m, l->w_off[i], l->b_off[i] + (size_t)l->out[i] - l->w_off[i])))
            break;
        if (i == 0)
            break;
        /* dZ_{i-1} = dH_{i-1} * gelu'(z_{i-1}). */
        cur = prev;
        rc = bk_gelu_backward(b, act_z(a, i - 1), act_grad(l, a, cur), act_grad(l, a, cur),
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
    .destroy = mlp_destroy,
    .forward = mlp_forward,
    .backward = mlp_backward,
    .reports_grad_ready = 1,
    .writes_first_gradient = 1,
    .test_shape = "mlp:hidden=12,layers=2,classes=5",
};
