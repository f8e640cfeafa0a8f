/* The MLP on the backend table: forward, backward, optimizer. */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "ranges.h"
#include "rng.h"

static const model_preset PRESETS[] = {
    {"tiny", 64, 2, 16},
    {"S", 1024, 4, 1024},
    {"M", 4096, 8, 1024},
    {"L", 8192, 8, 1024},
    {"XL", 16384, 8, 1024},
};

const model_preset *model_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(PRESETS[i].name, name) == 0)
            return &PRESETS[i];
    return NULL;
}

const char *model_preset_names(void)
{
    return "tiny, S, M, L, XL";
}

void model_layout_of(const model_preset *p, model_layout *l)
{
    memset(l, 0, sizeof *l);
    l->n_linear = p->layers + 1;
    size_t off = 0;
    for (int i = 0; i < l->n_linear; i++) {
        l->in[i] = p->hidden;
        l->out[i] = i == p->layers ? p->classes : p->hidden;
        l->w_off[i] = off;
        off += (size_t)l->in[i] * l->out[i];
        l->b_off[i] = off;
        off += (size_t)l->out[i];
    }
    l->n_params = off;
    l->max_width = p->hidden > p->classes ? p->hidden : p->classes;
}

double model_flops_per_step(const model_layout *l, int examples)
{
    double flops = 0;
    for (int i = 0; i < l->n_linear; i++) {
        double mac = (double)l->in[i] * l->out[i] * examples;
        flops += 2 * mac;     /* forward */
        flops += 2 * mac;     /* weight gradient */
        if (i > 0)
            flops += 2 * mac; /* input gradient (the first layer needs none) */
    }
    return flops;
}

size_t activations_bytes(const model_layout *l, storage s, int capacity)
{
    size_t elems = 0;
    for (int i = 0; i < l->n_linear; i++) {
        elems += (size_t)l->out[i] * capacity;     /* z */
        if (i < l->n_linear - 1)
            elems += (size_t)l->out[i] * capacity; /* h */
    }
    elems += 2 * (size_t)l->max_width * capacity;  /* gradient ping-pong */
    return elems * storage_bytes(s);
}

void model_memory_need(const model_layout *l, dtype dt, optimizer_kind opt,
                       int micro_batch, int effective_batch, int input_buffers,
                       memory_need *n)
{
    storage s = dt == DTYPE_BF16 ? STORAGE_BF16 : STORAGE_F32;
    size_t params = l->n_params;
    memset(n, 0, sizeof *n);
    n->weights = params * sizeof(float);
    n->master_copy = dt == DTYPE_BF16 ? params * storage_bytes(s) : 0;
    n->gradients = params * sizeof(float);
    n->optimizer_state = opt == OPT_ADAMW ? 2 * params * sizeof(float) + sizeof(adamw_hparams)
                                          : 0;
    n->activations = activations_bytes(l, s, micro_batch);
    /* Per buffer: inputs in compute storage, labels, valid, and the loss
     * scales (one per micro-batch, at most E, and the full batch's). */
    size_t per_buffer = (size_t)l->in[0] * effective_batch * storage_bytes(s) +
                        2 * (size_t)effective_batch * sizeof(int) +
                        ((size_t)effective_batch + 1) * sizeof(float);
    n->inputs = per_buffer * (size_t)input_buffers;
    n->total = n->weights + n->master_copy + n->gradients + n->optimizer_state +
               n->activations + n->inputs;
}

/* Kaiming-uniform-like init with a fixed seed, biases small. */
static void init_weights(const model_layout *l, uint64_t seed, float *w)
{
    rng r = {seed * 0x2545f4914f6cdd1dull + 17};
    for (int i = 0; i < l->n_linear; i++) {
        float bound = 1.0f / sqrtf((float)l->in[i]);
        size_t nw = (size_t)l->in[i] * l->out[i];
        for (size_t k = 0; k < nw; k++)
            w[l->w_off[i] + k] = rng_uniform(&r, -bound, bound);
        for (int k = 0; k < l->out[i]; k++)
            w[l->b_off[i] + k] = rng_uniform(&r, -0.1f, 0.1f) * bound;
    }
}

void model_destroy(model *m)
{
    backend *b = m->b;
    if (!b)
        return;
    size_t bytes = m->layout.n_params * sizeof(float);
    if (m->params_compute != m->params)
        bk_free(b, m->params_compute, m->layout.n_params * storage_bytes(b->compute_storage));
    bk_free(b, m->params, bytes);
    bk_free(b, m->grads, bytes);
    bk_free(b, m->adam_m, bytes);
    bk_free(b, m->adam_v, bytes);
    bk_free(b, m->hparams, sizeof(adamw_hparams));
    free(m->initial);
    memset(m, 0, sizeof *m);
}

int model_create(backend *b, const model_preset *p, const optimizer_config *opt,
                 uint64_t seed, model *m)
{
    memset(m, 0, sizeof *m);
    m->b = b;
    m->preset = *p;
    m->opt = *opt;
    model_layout_of(p, &m->layout);
    size_t n = m->layout.n_params, bytes = n * sizeof(float);
    int rc;
    m->initial = malloc(bytes);
    if (!m->initial) {
        snprintf(b->error, sizeof b->error, "out of host memory for %zu parameters", n);
        rc = BK_OOM;
        goto fail;
    }
    init_weights(&m->layout, seed, m->initial);
    if ((rc = bk_alloc(b, bytes, (void **)&m->params)) ||
        (rc = bk_alloc(b, bytes, (void **)&m->grads)) ||
        (rc = bk_alloc(b, sizeof(adamw_hparams), (void **)&m->hparams)))
        goto fail;
    if (opt->kind == OPT_ADAMW &&
        ((rc = bk_alloc(b, bytes, (void **)&m->adam_m)) ||
         (rc = bk_alloc(b, bytes, (void **)&m->adam_v))))
        goto fail;
    if (b->compute_storage == STORAGE_F32)
        m->params_compute = m->params;
    else if ((rc = bk_alloc(b, n * storage_bytes(b->compute_storage), &m->params_compute)))
        goto fail;
    if ((rc = model_reset(m)))
        goto fail;
    return BK_OK;
fail:
    model_destroy(m);
    return rc;
}

int model_reset(model *m)
{
    backend *b = m->b;
    size_t n = m->layout.n_params, bytes = n * sizeof(float);
    int rc;
    m->step_count = 0;
    if ((rc = bk_upload(b, m->params, m->initial, bytes)) || (rc = bk_zero(b, m->grads, bytes)))
        return rc;
    if (m->adam_m && ((rc = bk_zero(b, m->adam_m, bytes)) || (rc = bk_zero(b, m->adam_v, bytes))))
        return rc;
    if (m->params_compute != m->params)
        return bk_convert(b, m->params, m->params_compute, b->compute_storage, n);
    return BK_OK;
}

void activations_destroy(model *m, activations *a, bk_allocator from)
{
    size_t es = storage_bytes(m->b->compute_storage);
    const model_layout *l = &m->layout;
    for (int i = 0; i < l->n_linear; i++) {
        bk_free_from(m->b, from, a->z[i], (size_t)l->out[i] * a->capacity * es);
        bk_free_from(m->b, from, a->h[i], (size_t)l->out[i] * a->capacity * es);
    }
    for (int i = 0; i < 2; i++)
        bk_free_from(m->b, from, a->grad[i], (size_t)l->max_width * a->capacity * es);
    memset(a, 0, sizeof *a);
}

int activations_create(model *m, int capacity, bk_allocator from, activations *a)
{
    size_t es = storage_bytes(m->b->compute_storage);
    const model_layout *l = &m->layout;
    memset(a, 0, sizeof *a);
    a->capacity = capacity;
    int rc = BK_OK;
    for (int i = 0; i < l->n_linear && !rc; i++) {
        rc = bk_alloc_from(m->b, from, (size_t)l->out[i] * capacity * es, &a->z[i]);
        if (!rc && i < l->n_linear - 1)
            rc = bk_alloc_from(m->b, from, (size_t)l->out[i] * capacity * es, &a->h[i]);
    }
    for (int i = 0; i < 2 && !rc; i++)
        rc = bk_alloc_from(m->b, from, (size_t)l->max_width * capacity * es, &a->grad[i]);
    if (rc) {
        activations_destroy(m, a, from);
        return rc;
    }
    a->bytes = activations_bytes(l, m->b->compute_storage, capacity);
    return BK_OK;
}

/* Address of column `col` of a [rows x *] matrix in compute storage. */
static const void *column(const backend *b, const void *base, int rows, int col)
{
    return (const char *)base + (size_t)col * rows * storage_bytes(b->compute_storage);
}

static const void *weight(const model *m, int i)
{
    return (const char *)m->params_compute +
           m->layout.w_off[i] * storage_bytes(m->b->compute_storage);
}

int model_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    backend *b = m->b;
    const model_layout *l = &m->layout;
    storage cs = b->compute_storage;
    const void *in = column(b, mb->x, l->in[0], mb->first);
    int rc;
    range_push("forward");
    for (int i = 0; i < l->n_linear; i++) {
        gemm_desc g = {
            .trans_a = 0, .trans_b = 0, .m = l->out[i], .n = mb->count, .k = l->in[i],
            .alpha = 1.0f, .a = weight(m, i), .lda = l->out[i], .b = in, .ldb = l->in[i],
            .beta = 0.0f, .c = a->z[i], .ldc = l->out[i], .ab_storage = cs, .c_storage = cs,
        };
        int hidden = i < l->n_linear - 1;
        if ((rc = bk_gemm(b, &g)) ||
            (rc = bk_bias_gelu_forward(b, a->z[i], m->params + l->b_off[i], a->h[i],
                                       l->out[i], mb->count, hidden)))
            goto done;
        in = a->h[i];
    }
    int last = l->n_linear - 1;
    rc = bk_softmax_xent(b, a->z[last], a->grad[0], mb->labels + mb->first,
                         mb->valid + mb->first, mb->scale, loss_sum, l->out[last],
                         mb->count);
done:
    range_pop();
    return rc;
}

int model_backward(model *m, activations *a, const micro_batch_view *mb)
{
    backend *b = m->b;
    const model_layout *l = &m->layout;
    storage cs = b->compute_storage;
    int cur = 0; /* a->grad[cur] holds d(loss)/d(z_i) */
    int rc = BK_OK;
    range_push("backward");
    for (int i = l->n_linear - 1; i >= 0 && !rc; i--) {
        const void *in = i == 0 ? column(b, mb->x, l->in[0], mb->first) : a->h[i - 1];
        /* dW_i += dZ_i * in^T: accumulate in place, beta = 1. */
        gemm_desc gw = {
            .trans_a = 0, .trans_b = 1, .m = l->out[i], .n = l->in[i], .k = mb->count,
            .alpha = 1.0f, .a = a->grad[cur], .lda = l->out[i], .b = in, .ldb = l->in[i],
            .beta = 1.0f, .c = m->grads + l->w_off[i], .ldc = l->out[i],
            .ab_storage = cs, .c_storage = STORAGE_F32,
        };
        if ((rc = bk_gemm(b, &gw)) ||
            (rc = bk_bias_grad(b, a->grad[cur], m->grads + l->b_off[i], l->out[i], mb->count)))
            break;
        if (i == 0)
            break; /* the inputs need no gradient */
        /* dH_{i-1} = W_i^T dZ_i, then dZ_{i-1} = dH_{i-1} * gelu'(z_{i-1}). */
        gemm_desc gx = {
            .trans_a = 1, .trans_b = 0, .m = l->in[i], .n = mb->count, .k = l->out[i],
            .alpha = 1.0f, .a = weight(m, i), .lda = l->out[i], .b = a->grad[cur],
            .ldb = l->out[i], .beta = 0.0f, .c = a->grad[1 - cur], .ldc = l->in[i],
            .ab_storage = cs, .c_storage = cs,
        };
        if ((rc = bk_gemm(b, &gx)))
            break;
        cur = 1 - cur;
        rc = bk_gelu_backward(b, a->z[i - 1], a->grad[cur], a->grad[cur],
                              (size_t)l->in[i] * mb->count);
    }
    range_pop();
    return rc;
}

int model_zero_grads(model *m, float *loss_sum)
{
    int rc = bk_zero(m->b, m->grads, m->layout.n_params * sizeof(float));
    return rc ? rc : bk_zero(m->b, loss_sum, sizeof(float));
}

int model_upload_hparams(model *m)
{
    if (m->opt.kind != OPT_ADAMW)
        return BK_OK;
    double t = (double)(m->step_count + 1);
    adamw_hparams h = {
        .lr = m->opt.lr, .beta1 = m->opt.beta1, .beta2 = m->opt.beta2, .eps = m->opt.eps,
        .weight_decay = m->opt.weight_decay,
        .bias_correction1 = (float)(1.0 - pow(m->opt.beta1, t)),
        .bias_correction2 = (float)(1.0 - pow(m->opt.beta2, t)),
    };
    return bk_upload(m->b, m->hparams, &h, sizeof h);
}

int model_optimizer_step(model *m, int hparams_ready)
{
    backend *b = m->b;
    size_t n = m->layout.n_params;
    int rc = BK_OK;
    range_push("optimizer");
    if (m->opt.kind == OPT_ADAMW) {
        if (!hparams_ready)
            rc = model_upload_hparams(m);
        if (!rc)
            rc = bk_adamw(b, m->params, m->grads, m->adam_m, m->adam_v, n, m->hparams);
    } else {
        rc = bk_sgd(b, m->params, m->grads, n, m->opt.lr, m->opt.weight_decay);
    }
    if (!rc && m->params_compute != m->params)
        rc = bk_convert(b, m->params, m->params_compute, b->compute_storage, n);
    range_pop();
    m->step_count++;
    return rc;
}
