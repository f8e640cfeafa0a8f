/* A model instance: what every model has, kept here once for every kind:
 * one fp32 parameter vector (each kind lays its weights out inside it),
 * the copy the GEMMs read, the gradient, the optimizer state and the
 * optimizer step. So the gradient, the optimizer state and the optimizer
 * step are each one buffer and one call whatever the model.
 *
 * A model kind (the MLP in mlp.c; registry.c lists them all) is a table of
 * functions written once against the backend table (model_kind.h); the
 * memory a config needs is model_need.h. A file that needs only the shape
 * or its need includes those, not this. */
#ifndef ACCUBENCH_MODEL_H
#define ACCUBENCH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "grad_dtype.h"
#include "model_kind.h"
#include "model_need.h"
#include "optimizer.h"
#include "recompute.h"
#include "shard_slice.h"

typedef struct grad_ring grad_ring; /* grad_ring.h */

/* ----------------------------------------------------------------- model */

/* Device state of one model: parameters, gradients, optimizer state. */
struct model {
    backend *b;
    model_spec spec;
    size_t n_params;
    optimizer_config opt;
    /* What it computes in: the backend's dtype when it was made. Its
     * compute copy, activations and runs are in that dtype's storage, so
     * the backend is switched to it before the model runs (bk_use_dtype):
     * a run of several dtypes holds a model of each. */
    dtype dtype;
    storage storage;
    float *params;        /* fp32 master weights */
    void *params_compute; /* what the GEMMs read: params itself, or a bf16 copy */
    /* The gradient: grads_len floats, grads[i] that of parameter
     * grads_from + i. The whole vector (grads_from 0), or under ZeRO-2
     * this rank's slice alone (grads_from slice.first), the backward
     * writing through `ring` (model_grad). */
    float *grads;
    size_t grads_len, grads_from;
    grad_ring *ring;
    /* ZeRO-2 while a check reads the gradient whole (model_grads_whole):
     * grads is the whole vector again and the ring is not written. */
    int grads_whole;
    float *adam_m, *adam_v; /* AdamW only: the slice's floats */
    /* Sharded data parallel (model_shard): params and grads hold
     * slice.padded floats (n_params and zeros past it), the AdamW moments
     * slice.len, this rank's slice [slice.first, + slice.count) of the
     * vector; the optimizer updates that slice alone. Unsharded: one
     * slice, the whole vector (ranks 1). */
    shard_slice slice;
    adamw_hparams *hparams; /* AdamW: device copy of this step's numbers */
    float *initial;         /* host copy of the starting weights (reset) */
    int64_t step_count;
    /* What grads holds across a window's micro-batches (grad_dtype.h),
     * set per config: the step runner rounds it after each micro-batch.
     * The buffer is fp32 whatever it says (the rounding is emulated). */
    grad_dtype grad_dtype;
    void *impl;             /* the kind's own state */
    /* Set around the last backward of a window by a data-parallel step or
     * by the optimizer in the backward (NULL otherwise): told each gradient
     * range [offset, offset + count) (floats of grads) as the backward
     * finishes it. */
    int (*grad_ready)(void *ctx, size_t offset, size_t count);
    void *grad_ready_ctx;
};

/* A kind's backward calls this when floats [offset, offset + count) of
 * m->grads hold their final value for this backward and the backward reads
 * none of those parameters again (the optimizer may update them at once).
 * The ranges of one backward, in order, are contiguous and run from the
 * end of the vector to its start: backward finishes the last layer first. */
/* ZeRO-2's bucket ring (grad_ring.h), as a pass and the model call it:
 * a pass begins it and its backward ends it; the kind's writes and
 * reports go through model_grad and model_grad_ready. */
int grad_ring_begin(model *m);
int grad_ring_end(model *m);
int grad_ring_report(model *m, size_t offset, size_t count);
float *grad_ring_at(model *m, size_t offset);
void grad_ring_destroy(model *m);

/* Whether the backward writes its gradient into ZeRO-2's buckets. */
static inline int model_grad_in_buckets(const model *m) { return m->ring && !m->grads_whole; }

static inline int model_grad_ready(model *m, size_t offset, size_t count)
{
    int rc = model_grad_in_buckets(m) ? grad_ring_report(m, offset, count) : BK_OK;
    if (rc)
        return rc;
    return m->grad_ready ? m->grad_ready(m->grad_ready_ctx, offset, count) : BK_OK;
}

/* Where the backward writes the gradient of the parameter at `offset`
 * (and the rest of its tensor): m->grads + offset, or under ZeRO-2 that
 * tensor's place in the bucket ring (grad_ring.h). Every gradient write of
 * a kind goes through it. */
static inline float *model_grad(model *m, size_t offset)
{
    return model_grad_in_buckets(m) ? grad_ring_at(m, offset) : m->grads + offset;
}

int model_create(backend *b, const model_spec *s, const optimizer_config *opt,
                 uint64_t seed, model *m);
void model_destroy(model *m);
/* Cuts the model's state for rank `rank` of `ranks` (1: whole again):
 * the weights and the gradient padded to whole slices, the optimizer
 * state this rank's slice alone; then model_reset. The weights stay whole
 * on every rank: they are what the forward reads (fp32), and the slices
 * are all-gathered into them after each step. BK_* status. */
int model_shard(model *m, int rank, int ranks);
/* ZeRO-2: model_shard, and the accumulated gradient this rank's slice
 * alone, the backward writing through a ring of buckets (grad_ring.h).
 * `gradient_slice` 0: as model_shard. */
int model_shard_state(model *m, int rank, int ranks, int gradient_slice);
/* ZeRO-2, for what reads the gradient whole (the gradient check, the
 * noise pass): a whole-vector gradient, zeroed, that the backward writes
 * as unsharded; it exists for the checks alone, outside the memory need,
 * the cap and the row's memory peak. slice_to_whole also puts the slice's
 * accumulated sum in its place (the rest for an all-gather to fill).
 * model_grads_sliced frees it: the next window starts it (model_start_window).
 * Nothing unless ZeRO-2. */
int model_grads_whole(model *m);
int model_grads_slice_to_whole(model *m);
void model_grads_sliced(model *m);
/* Back to the starting weights and a fresh optimizer state. */
int model_reset(model *m);

/* from: BK_ALLOC_HELD for activations kept for a whole config, or the
 * per-micro-batch allocator of an `alloc` mode; destroy with the same. */
int activations_create(model *m, int capacity, bk_allocator from, activations *a);
void activations_destroy(model *m, activations *a, bk_allocator from);

/* One micro-batch through the kind, inside "forward" and "backward"
 * ranges. */
int model_forward(model *m, activations *a, const micro_batch_view *mb,
                  float *loss_sum);
int model_backward(model *m, activations *a, const micro_batch_view *mb);

/* Zero the gradients and the loss accumulator. */
int model_zero_grads(model *m, float *loss_sum);
/* Start of a window whose first micro-batch is marked first_of_window:
 * zero the loss accumulator, and the gradients unless the kind
 * writes_first_gradient. */
int model_start_window(model *m, float *loss_sum);
/* The optimizer step on the accumulated gradient; refreshes the bf16 copy.
 * Writes this step's hyper-parameters to the device first unless
 * `hparams_ready` (the graph mode writes them before the replay), and
 * counts the step. */
int model_optimizer_step(model *m, int hparams_ready);
/* The update of parameters [offset, offset + count) alone, with the
 * hyper-parameters already on the device, inside an "optimizer" range: the
 * step's pieces when the optimizer runs in the backward (optimizer.h). */
int model_optimizer_range(model *m, size_t offset, size_t count);
/* Writes the next step's AdamW numbers to the device copy. */
int model_upload_hparams(model *m);

#endif
