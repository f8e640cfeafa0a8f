/* What every model has, whatever its kind: the parameter vector and its
 * copies, activations as a list of device buffers, the memory need, and the
 * optimizer. The kind (s->kind) supplies the rest. */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "ranges.h"

size_t input_buffer_bytes(const input_spec *in, storage s, int effective)
{
    size_t e = (size_t)effective;
    size_t x = (size_t)in->width * e * (in->kind == INPUT_TOKENS ? sizeof(int) : storage_bytes(s));
    size_t items = e * (size_t)in->loss_items;
    return x + 2 * items * sizeof(int) + (e + 1) * sizeof(float);
}

size_t model_param_count(const model_spec *s) { return s->kind->param_count(s); }

double model_flops_per_step(const model_spec *s, int examples)
{
    return s->kind->flops_per_step(s, examples);
}

void model_input(const model_spec *s, input_spec *out) { s->kind->input(s, out); }

size_t activations_bytes(const model_spec *s, storage st, int capacity)
{
    size_t bytes[MODEL_MAX_ACTIVATIONS], total = 0;
    int n = s->kind->activation_sizes(s, st, capacity, bytes);
    for (int i = 0; i < n; i++)
        total += bytes[i];
    return total;
}

int model_can_recompute(const model_spec *s, char *why, size_t n)
{
    unsigned caps = s->kind->recompute_caps | RECOMPUTE_BIT(RECOMPUTE_NONE);
    if (caps & RECOMPUTE_BIT(s->recompute))
        return 1;
    snprintf(why, n, "model kind %s cannot recompute %s (it can: %s)", s->kind->name,
             recompute_name(s->recompute), "none");
    for (int r = RECOMPUTE_NONE + 1; r < RECOMPUTE_ROWS; r++)
        if (caps & RECOMPUTE_BIT(r)) {
            size_t used = strlen(why);
            if (used + 2 < n) /* ")" is replaced by ", NAME)" */
                snprintf(why + used - 1, n - used + 1, ", %s)", recompute_name(r));
        }
    return 0;
}

static void recompute_cost_of(const model_spec *s, int examples, double *gemm, double *gelu)
{
    *gemm = *gelu = 0;
    if (s->recompute != RECOMPUTE_NONE && s->kind->recompute_cost)
        s->kind->recompute_cost(s, examples, gemm, gelu);
}

double model_recompute_flops(const model_spec *s, int examples)
{
    double gemm, gelu;
    recompute_cost_of(s, examples, &gemm, &gelu);
    return gemm + RECOMPUTE_GELU_FLOPS * gelu;
}

double model_recompute_gemm_flops(const model_spec *s, int examples)
{
    double gemm, gelu;
    recompute_cost_of(s, examples, &gemm, &gelu);
    return gemm;
}

/* a + b and a * b, or MEMORY_NEED_MAX with *saturated set where the result
 * would pass it. */
static size_t need_add(size_t a, size_t b, int *saturated)
{
    if (a > MEMORY_NEED_MAX || b > MEMORY_NEED_MAX - a) {
        *saturated = 1;
        return MEMORY_NEED_MAX;
    }
    return a + b;
}

static size_t need_mul(size_t a, size_t b, int *saturated)
{
    if (a && b > MEMORY_NEED_MAX / a) {
        *saturated = 1;
        return MEMORY_NEED_MAX;
    }
    return a * b;
}

/* The activations of `capacity` examples without computing a product that
 * wraps: a micro-batch's buffers hold at most `capacity` times one
 * example's (each is a per-example size times the examples, plus at most
 * a fixed part), so when that bound is under the limit every product the
 * kind forms is too, and its sizes are exact. */
static size_t activations_need(const model_spec *s, storage st, int capacity, int *saturated)
{
    size_t bytes[MODEL_MAX_ACTIVATIONS], one = 0;
    int n = s->kind->activation_sizes(s, st, 1, bytes), over = 0;
    for (int i = 0; i < n; i++)
        one = need_add(one, bytes[i], &over);
    size_t bound = need_mul(one, (size_t)capacity, &over);
    *saturated |= over;
    return over ? bound : activations_bytes(s, st, capacity);
}

void model_memory_need(const model_spec *s, dtype dt, optimizer_kind opt, int micro_batch,
                       int effective_batch, int input_buffers, memory_need *n)
{
    storage st = dtype_storage(dt);
    size_t params = model_param_count(s);
    input_spec in;
    model_input(s, &in);
    memset(n, 0, sizeof *n);
    int *sat = &n->saturated;
    n->weights = need_mul(params, sizeof(float), sat);
    n->master_copy = st != STORAGE_F32 ? need_mul(params, storage_bytes(st), sat) : 0;
    n->gradients = n->weights;
    n->optimizer_state = optimizer_state_bytes(opt, n->weights, sat);
    n->activations = activations_need(s, st, micro_batch, sat);
    n->inputs = need_mul(input_buffer_bytes(&in, st, effective_batch), (size_t)input_buffers, sat);
    n->loss_sum = MEMORY_NEED_LOSS_SUM_BYTES;
    memory_need_total(n);
}

void memory_need_parts(const memory_need *n, size_t out[MEMORY_NEED_PARTS])
{
    const size_t parts[MEMORY_NEED_PARTS] = {n->weights,         n->master_copy,
                                             n->gradients,       n->optimizer_state,
                                             n->activations,     n->loss_sum,
                                             n->inputs};
    memcpy(out, parts, sizeof parts);
}

void memory_need_total(memory_need *n)
{
    size_t parts[MEMORY_NEED_PARTS];
    memory_need_parts(n, parts);
    n->total = 0;
    for (int i = 0; i < MEMORY_NEED_PARTS; i++)
        n->total = need_add(n->total, parts[i], &n->saturated);
}

void model_destroy(model *m)
{
    backend *b = m->b;
    if (!b)
        return;
    if (m->spec.kind->destroy)
        m->spec.kind->destroy(m);
    size_t bytes = m->slice.padded * sizeof(float), state = m->slice.len * sizeof(float);
    if (m->params_compute != m->params)
        bk_free(b, m->params_compute, m->n_params * storage_bytes(m->storage));
    bk_free(b, m->params, bytes);
    if (m->ring)
        grad_ring_destroy(m); /* the slice, the buckets, a check's whole gradient */
    else
        bk_free(b, m->grads, bytes);
    bk_free(b, m->adam_m, state);
    bk_free(b, m->adam_v, state);
    bk_free(b, m->hparams, sizeof(adamw_hparams));
    free(m->initial);
    memset(m, 0, sizeof *m);
}

void model_spec_on(model_spec *s, const backend *b)
{
    s->fused_attention = b->ops->attention_forward && b->ops->attention_backward;
    s->head_chunk_bytes = b->head_chunk_bytes;
}

int model_create(backend *b, const model_spec *s, const optimizer_config *opt,
                 uint64_t seed, model *m)
{
    memset(m, 0, sizeof *m);
    m->b = b;
    m->dtype = b->dtype;
    m->storage = b->compute_storage;
    m->spec = *s;
    model_spec_on(&m->spec, b);
    m->opt = *opt;
    m->n_params = model_param_count(s);
    m->slice = shard_slice_of(m->n_params, 1, 0);
    size_t n = m->n_params, bytes = n * sizeof(float);
    m->grads_len = n;
    int rc;
    m->initial = malloc(bytes);
    if (!m->initial) {
        snprintf(b->error, sizeof b->error, "out of host memory for %zu parameters", n);
        rc = BK_OOM;
        goto fail;
    }
    s->kind->init_weights(s, seed, m->initial);
    if ((rc = bk_alloc(b, bytes, (void **)&m->params)) ||
        (rc = bk_alloc(b, bytes, (void **)&m->grads)))
        goto fail;
    /* SGD takes its numbers in the call: only AdamW keeps state on the
     * device, as the memory need counts it. */
    if (opt->kind == OPT_ADAMW &&
        ((rc = bk_alloc(b, sizeof(adamw_hparams), (void **)&m->hparams)) ||
         (rc = bk_alloc(b, bytes, (void **)&m->adam_m)) ||
         (rc = bk_alloc(b, bytes, (void **)&m->adam_v))))
        goto fail;
    if (m->storage == STORAGE_F32)
        m->params_compute = m->params;
    else if ((rc = bk_alloc(b, n * storage_bytes(m->storage), &m->params_compute)))
        goto fail;
    if (s->kind->create && (rc = s->kind->create(m)))
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
    size_t n = m->n_params, bytes = n * sizeof(float);
    size_t pad = (m->slice.padded - n) * sizeof(float), state = m->slice.len * sizeof(float);
    int rc;
    m->step_count = 0;
    if ((rc = bk_upload(b, m->params, m->initial, bytes)) ||
        (rc = bk_zero(b, m->grads, m->grads_len * sizeof(float))))
        return rc;
    if (pad && (rc = bk_zero(b, m->params + n, pad)))
        return rc;
    if (m->adam_m && ((rc = bk_zero(b, m->adam_m, state)) || (rc = bk_zero(b, m->adam_v, state))))
        return rc;
    if (m->params_compute != m->params)
        return bk_convert(b, m->params, m->params_compute, m->storage, n);
    return BK_OK;
}

void activations_destroy(model *m, activations *a, bk_allocator from)
{
    for (int i = 0; i < a->count; i++)
        bk_free_from(m->b, from, a->buf[i], a->buf_bytes[i]);
    memset(a, 0, sizeof *a);
}

int activations_create(model *m, int capacity, bk_allocator from, activations *a)
{
    memset(a, 0, sizeof *a);
    a->capacity = capacity;
    int n = m->spec.kind->activation_sizes(&m->spec, m->storage, capacity,
                                           a->buf_bytes);
    for (int i = 0; i < n; i++) {
        int rc = bk_alloc_from(m->b, from, a->buf_bytes[i], &a->buf[i]);
        if (rc) {
            a->count = i; /* what was allocated so far */
            activations_destroy(m, a, from);
            return rc;
        }
        a->bytes += a->buf_bytes[i];
    }
    a->count = n;
    return BK_OK;
}

/* A pass begins the buckets (a kind may write its gradient in its
 * forward: the GPT's head) and ends them after its backward. */
int model_forward(model *m, activations *a, const micro_batch_view *mb, float *loss_sum)
{
    range_push("forward");
    int rc = model_grad_in_buckets(m) ? grad_ring_begin(m) : BK_OK;
    if (!rc)
        rc = m->spec.kind->forward(m, a, mb, loss_sum);
    range_pop();
    return rc;
}

int model_backward(model *m, activations *a, const micro_batch_view *mb)
{
    range_push("backward");
    int rc = m->spec.kind->backward(m, a, mb);
    if (model_grad_in_buckets(m))
        rc = rc ? rc : grad_ring_end(m);
    range_pop();
    return rc;
}

int model_zero_grads(model *m, float *loss_sum)
{
    int rc = bk_zero(m->b, m->grads, m->grads_len * sizeof(float));
    return rc ? rc : bk_zero(m->b, loss_sum, sizeof(float));
}

/* Under ZeRO-2 the window accumulates in the slice (each micro-batch's
 * buckets are written fresh), so the slice is zeroed whatever the kind. */
int model_start_window(model *m, float *loss_sum)
{
    model_grads_sliced(m);
    if (m->ring || !m->spec.kind->writes_first_gradient)
        return model_zero_grads(m, loss_sum);
    return bk_zero(m->b, loss_sum, sizeof(float));
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

/* The update of [offset, offset + count), the bf16 copy refreshed. */
static int update_range(model *m, size_t offset, size_t count)
{
    backend *b = m->b;
    int rc;
    /* The moments hold the slice alone: offset is in the slice. */
    size_t at = offset - m->slice.first;
    const float *g = m->grads + (offset - m->grads_from); /* the slice alone under ZeRO-2 */
    if (m->opt.kind == OPT_ADAMW)
        rc = bk_adamw(b, m->params + offset, g, m->adam_m + at, m->adam_v + at, count,
                      m->hparams);
    else
        rc = bk_sgd(b, m->params + offset, g, count, m->opt.lr, m->opt.weight_decay);
    if (!rc && m->params_compute != m->params)
        rc = bk_convert(b, m->params + offset,
                        (char *)m->params_compute + offset * storage_bytes(m->storage),
                        m->storage, count);
    return rc;
}

int model_optimizer_range(model *m, size_t offset, size_t count)
{
    range_push("optimizer");
    int rc = update_range(m, offset, count);
    range_pop();
    return rc;
}

int model_optimizer_step(model *m, int hparams_ready)
{
    range_push("optimizer");
    int rc = hparams_ready ? BK_OK : model_upload_hparams(m);
    if (!rc && m->slice.count) /* this rank's slice: the whole vector unsharded */
        rc = update_range(m, m->slice.first, m->slice.count);
    range_pop();
    m->step_count++;
    return rc;
}
