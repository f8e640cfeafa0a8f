/* The layers the model kinds share (layers.h). */
#include "layers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"

layer_pass layer_pass_of(model *m, const micro_batch_view *mb, int columns)
{
    storage cs = m->storage;
    return (layer_pass){
        .m = m, .b = m->b, .cs = cs, .es = storage_bytes(cs), .n = columns,
        /* Under ZeRO-2 every micro-batch's gradient goes into its buckets
         * fresh (the window accumulates in the slice). */
        .overwrite = (mb->first_of_window || model_grad_in_buckets(m)) &&
                     m->spec.kind->writes_first_gradient,
    };
}

void *layer_at(const layer_pass *p, const void *base, size_t i)
{
    return (char *)base + i * p->es;
}

const void *layer_weight(const layer_pass *p, size_t off)
{
    return layer_at(p, p->m->params_compute, off);
}

int layer_gemm(const layer_pass *p, int ta, int tb, int m, int n, int k, const void *a, int lda,
               const void *b, int ldb, float beta, void *c, int ldc, int c_f32)
{
    gemm_desc g = {
        .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 1.0f, .a = a,
        .lda = lda, .b = b, .ldb = ldb, .beta = beta, .c = c, .ldc = ldc,
        .ab_storage = p->cs, .c_storage = c_f32 ? STORAGE_F32 : p->cs,
    };
    return bk_gemm(p->b, &g);
}

/* 0 + x is x: the first micro-batch's beta = 0 gives the same sums as a
 * zeroed gradient and beta = 1. Under ZeRO-2 every micro-batch's is 0
 * where the kind writes its first gradient (layer_pass_of); a kind that
 * adds into its gradient has its buckets zeroed instead (grad_ring.h). */
float layer_grad_beta(const layer_pass *p) { return p->overwrite ? 0.0f : 1.0f; }

int linear_forward(const layer_pass *p, const linear_layer *l, const void *x, void *z, void *h)
{
    int rc = layer_gemm(p, 0, 0, l->out, p->n, l->in, layer_weight(p, l->w_off), l->out, x,
                        l->in, 0.0f, z, l->out, 0);
    return rc ? rc
              : bk_bias_gelu_forward(p->b, z, p->m->params + l->b_off, h, l->out, p->n,
                                     h != NULL);
}

int linear_backward_input(const layer_pass *p, const linear_layer *l, const void *dy, void *dx)
{
    return layer_gemm(p, 1, 0, l->in, p->n, l->out, layer_weight(p, l->w_off), l->out, dy,
                      l->out, 0.0f, dx, l->in, 0);
}

int linear_backward_weights(const layer_pass *p, const linear_layer *l, const void *x,
                            const void *dy)
{
    /* The bias first: the buckets are entered from the end of the vector down. */
    float *db = model_grad(p->m, l->b_off);
    int rc;
    if ((rc = layer_gemm(p, 0, 1, l->out, l->in, p->n, dy, l->out, x, l->in,
                         layer_grad_beta(p), model_grad(p->m, l->w_off), l->out, 1)) ||
        (p->overwrite && (rc = bk_zero(p->b, db, (size_t)l->out * sizeof *db))))
        return rc;
    return bk_bias_grad(p->b, dy, db, l->out, p->n);
}

int linear_backward(const layer_pass *p, const linear_layer *l, const void *x, const void *dy,
                    void *dx)
{
    int rc;
    if (dx && (rc = linear_backward_input(p, l, dy, dx)))
        return rc;
    return linear_backward_weights(p, l, x, dy);
}

int linear_backward_final(const layer_pass *p, const linear_layer *l, const void *x,
                          const void *dy, void *dx)
{
    int rc = linear_backward(p, l, x, dy, dx);
    return rc ? rc : linear_report_final(p, l);
}

int linear_report_final(const layer_pass *p, const linear_layer *l)
{
    size_t weights = (size_t)l->out * l->in;
    if (l->b_off != l->w_off + weights) {
        snprintf(p->b->error, sizeof p->b->error, "a linear layer's bias (at %zu) does not "
                 "follow its weight (at %zu): its gradient is not one range", l->b_off,
                 l->w_off);
        return BK_ERROR;
    }
    return model_grad_ready(p->m, l->w_off, weights + (size_t)l->out);
}

void *layout_create(model *m, size_t bytes)
{
    m->impl = calloc(1, bytes);
    if (!m->impl)
        snprintf(m->b->error, sizeof m->b->error, "out of host memory for the layout");
    return m->impl;
}

void layout_destroy(model *m)
{
    free(m->impl);
    m->impl = NULL;
}

int tensor_add(model_tensor *out, int max, int count, const char *name, size_t offset,
               int64_t rows, int64_t cols, int torch_is_transpose)
{
    if (out && count < max) {
        model_tensor *t = &out[count];
        snprintf(t->name, sizeof t->name, "%s", name);
        t->offset = offset;
        t->rows = rows;
        t->cols = cols;
        t->torch_is_transpose = torch_is_transpose;
        t->vector = 0;
        t->grad_twice = 0;
    }
    return count + 1;
}

int tensor_add_vector(model_tensor *out, int max, int count, const char *name, size_t offset,
                      int64_t n)
{
    if (out && count < max) {
        tensor_add(out, max, count, name, offset, n, 1, 0);
        out[count].vector = 1;
    }
    return count + 1;
}

int block_tensors(model_tensor *out, int max, int count, const char *prefix, int layers,
                  size_t layer0, size_t layer_size, const block_tensor *block, int n)
{
    for (int i = 0; i < layers; i++)
        for (int k = 0; k < n; k++) {
            char name[MODEL_TENSOR_NAME];
            snprintf(name, sizeof name, "%s.%d.%s", prefix, i, block[k].name);
            size_t off = layer0 + (size_t)i * layer_size + block[k].off;
            count = block[k].cols == TENSOR_VECTOR
                        ? tensor_add_vector(out, max, count, name, off, block[k].rows)
                        : tensor_add(out, max, count, name, off, block[k].rows, block[k].cols, 0);
        }
    return count;
}

int linear_tensors(model_tensor *out, int max, int count, const char *prefix,
                   const linear_layer *l)
{
    char name[MODEL_TENSOR_NAME];
    snprintf(name, sizeof name, "%s.weight", prefix);
    count = tensor_add(out, max, count, name, l->w_off, l->out, l->in, 0);
    snprintf(name, sizeof name, "%s.bias", prefix);
    return tensor_add_vector(out, max, count, name, l->b_off, l->out);
}

/* Normal(0, std) by Box-Muller. */
static float normal(rng *r, float std)
{
    float u1 = rng_uniform(r, 0.0f, 1.0f), u2 = rng_uniform(r, 0.0f, 1.0f);
    if (u1 < 1e-30f)
        u1 = 1e-30f;
    return std * sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

void weights_normal(rng *r, float *w, size_t n, float std)
{
    for (size_t i = 0; i < n; i++)
        w[i] = normal(r, std);
}

void weights_fill(float *w, size_t n, float v)
{
    for (size_t i = 0; i < n; i++)
        w[i] = v;
}
