/* A linear classifier: one Linear layer from `in` features to `classes`
 * logits, softmax cross-entropy over examples that carry a validity mask
 * (multinomial logistic regression). The smallest model the harness runs:
 * its backward keeps nothing but its inputs and the loss's gradient, so it
 * has nothing to recompute, and its row of the registry says so
 * (recompute_caps: none alone). Any shape as linear:in=N,classes=N. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "layers.h"
#include "rng.h"

enum { LINEAR_IN = 0, LINEAR_CLASSES = 1 };

static const model_dim DIMS[] = {
    [LINEAR_IN] = {"in", 1, 1 << 20},
    [LINEAR_CLASSES] = {"classes", 2, 1 << 20},
};

/* Past this the parameter vector and its state would be tens of
 * terabytes: a typo, not a model. */
#define LINEAR_MAX_PARAMS (1ull << 40)

static linear_layer layer_of(const model_spec *s)
{
    int in = s->dims[LINEAR_IN], classes = s->dims[LINEAR_CLASSES];
    return (linear_layer){.w_off = 0, .b_off = (size_t)in * classes, .out = classes, .in = in};
}

static int linear_check(const model_spec *s, char *why, size_t n)
{
    double params = ((double)s->dims[LINEAR_IN] + 1) * s->dims[LINEAR_CLASSES];
    if (params > (double)LINEAR_MAX_PARAMS) {
        snprintf(why, n, "%.3g parameters; at most 2^40 (%.3g)", params,
                 (double)LINEAR_MAX_PARAMS);
        return -1;
    }
    return 0;
}

static size_t linear_param_count(const model_spec *s)
{
    linear_layer l = layer_of(s);
    return l.b_off + (size_t)l.out;
}

/* The forward product and the weight gradient's; the inputs need no
 * gradient. */
static double linear_flops_per_step(const model_spec *s, int examples)
{
    return 4.0 * s->dims[LINEAR_IN] * s->dims[LINEAR_CLASSES] * examples;
}

static void linear_input(const model_spec *s, input_spec *in)
{
    *in = (input_spec){.kind = INPUT_FEATURES, .width = s->dims[LINEAR_IN],
                       .classes = s->dims[LINEAR_CLASSES], .loss_items = 1};
}

/* The logits, and the loss's gradient. */
static int linear_activation_sizes(const model_spec *s, storage st, int capacity, size_t *bytes)
{
    bytes[0] = bytes[1] = (size_t)s->dims[LINEAR_CLASSES] * capacity * storage_bytes(st);
    return 2;
}

/* As the MLP's layers: uniform in +-1/sqrt(in), biases small. */
static void linear_init_weights(const model_spec *s, uint64_t seed, float *w)
{
    linear_layer l = layer_of(s);
    rng r = {seed * 0x2545f4914f6cdd1dull + 41};
    float bound = 1.0f / sqrtf((float)l.in);
    for (size_t k = 0; k < l.b_off; k++)
        w[k] = rng_uniform(&r, -bound, bound);
    for (int k = 0; k < l.out; k++)
        w[l.b_off + k] = rng_uniform(&r, -0.1f, 0.1f) * bound;
}

/* nn.Linear's names: "linear.weight" [classes, in], "linear.bias". */
static int linear_tensors_of(const model_spec *s, model_tensor *out, int max)
{
    linear_layer l = layer_of(s);
    return linear_tensors(out, max, 0, "linear", &l);
}

static const void *inputs_of(const layer_pass *p, const model_spec *s, const micro_batch_view *mb)
{
    return layer_at(p, mb->x, (size_t)mb->first * s->dims[LINEAR_IN]);
}

static int linear_forward_pass(model *m, activations *a, const micro_batch_view *mb,
                               float *loss_sum)
{
    layer_pass p = layer_pass_of(m, mb, mb->count);
    linear_layer l = layer_of(&m->spec);
    int rc = linear_forward(&p, &l, inputs_of(&p, &m->spec, mb), a->buf[0], NULL);
    return rc ? rc
              : bk_softmax_xent(m->b, a->buf[0], a->buf[1], mb->labels + mb->first,
                                mb->valid + mb->first, mb->scale, loss_sum, l.out, mb->count);
}

static int linear_backward_pass(model *m, activations *a, const micro_batch_view *mb)
{
    layer_pass p = layer_pass_of(m, mb, mb->count);
    linear_layer l = layer_of(&m->spec);
    return linear_backward_final(&p, &l, inputs_of(&p, &m->spec, mb), a->buf[1], NULL);
}

const model_kind linear_kind = {
    .name = "linear",
    .dims = DIMS,
    .n_dims = sizeof DIMS / sizeof DIMS[0],
    .check = linear_check,
    .param_count = linear_param_count,
    .flops_per_step = linear_flops_per_step,
    .input = linear_input,
    .activation_sizes = linear_activation_sizes,
    .recompute_caps = 0, /* nothing to recompute: none alone */
    .init_weights = linear_init_weights,
    .tensors = linear_tensors_of,
    .forward = linear_forward_pass,
    .backward = linear_backward_pass,
    .reports_grad_ready = 1,
    .writes_first_gradient = 1,
    .test_shape = "linear:in=6,classes=4",
};
