/* The model's state cut in slices over data-parallel ranks (model.h:
 * model_shard, model_shard_state). The buffers are made again at their
 * new lengths, so that what a config allocates is what its shard mode
 * keeps, to the byte. */
#include "model.h"

#include <stdio.h>

#include "dispatch.h"
#include "grad_ring.h"

static void free_state(model *m)
{
    backend *b = m->b;
    size_t bytes = m->slice.padded * sizeof(float), state = m->slice.len * sizeof(float);
    if (m->params_compute == m->params)
        m->params_compute = NULL;
    bk_free(b, m->params, bytes);
    if (m->ring)
        grad_ring_destroy(m);
    else
        bk_free(b, m->grads, bytes);
    bk_free(b, m->adam_m, state);
    bk_free(b, m->adam_v, state);
    m->params = m->grads = m->adam_m = m->adam_v = NULL;
    m->grads_whole = 0;
}

/* The gradient: whole (padded), or ZeRO-2's slice and buckets. */
static int alloc_gradient(model *m, int gradient_slice)
{
    if (gradient_slice)
        return grad_ring_create(m);
    m->grads_len = m->slice.padded;
    m->grads_from = 0;
    return bk_alloc(m->b, m->grads_len * sizeof(float), (void **)&m->grads);
}

int model_shard_state(model *m, int rank, int ranks, int gradient_slice)
{
    backend *b = m->b;
    shard_slice want = shard_slice_of(m->n_params, ranks, ranks > 1 ? rank : 0);
    if (want.padded == m->slice.padded && want.len == m->slice.len &&
        want.first == m->slice.first && (m->ring != NULL) == (gradient_slice != 0)) {
        model_grads_sliced(m);
        return model_reset(m);
    }
    int adamw = m->adam_m != NULL;
    free_state(m);
    m->slice = want;
    size_t bytes = want.padded * sizeof(float), state = want.len * sizeof(float);
    int rc = bk_alloc(b, bytes, (void **)&m->params);
    if (!rc)
        rc = alloc_gradient(m, gradient_slice);
    if (!rc && adamw && !(rc = bk_alloc(b, state, (void **)&m->adam_m)))
        rc = bk_alloc(b, state, (void **)&m->adam_v);
    if (rc) { /* back to nothing allocated: model_destroy frees what is there */
        free_state(m);
        m->slice = shard_slice_of(0, 1, 0);
        m->grads_len = 0;
        return rc;
    }
    if (!m->params_compute)
        m->params_compute = m->params; /* fp32: the GEMMs read the master weights */
    return model_reset(m);
}

int model_shard(model *m, int rank, int ranks) { return model_shard_state(m, rank, ranks, 0); }
