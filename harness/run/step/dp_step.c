/* When and what a data-parallel step all-reduces (see dp_step.h), as the
 * sync mode's row says: after every `every`-th micro-batch and after the
 * last (sync_reduces_after).
 *
 * Between two all-reduces the gradient buffer holds the sum of the earlier
 * micro-batches' all-reduced gradients (the same on every rank) plus this
 * rank's new ones; for the sum to count the earlier ones once, every rank
 * but rank 0 zeroes its buffer before the first micro-batch after an
 * all-reduce (sync_reduced_before). The all-reduce carries the whole
 * gradient every time, as a wrapper that all-reduces every backward does.
 * In buckets (overlap): the backward before an all-reduce reports each
 * range of the gradient as it is final (model_grad_ready); each range is
 * all-reduced at once, as its own bucket, while the rest of the backward
 * runs, and the step waits for them all after it. What the model did not
 * report (all of it, for a kind that reports nothing) goes in one bucket
 * after the backward.
 *
 * Sharded (shard_modes.h, the model in slices): a reduce-scatter where the
 * all-reduce would be, and after the update an all-gather of the weights.
 * Where the row keeps the gradient in slices (ZeRO-2, grad_ring.h), the
 * backward writes into a ring of buckets, and each bucket is reduced onto
 * the ranks whose slices it meets as soon as it is final, behind the rest
 * of the backward; each rank adds its part to its slice's sum, and every
 * micro-batch ends with the wait for the last ones. */
#include "dp_step.h"

#include "dispatch.h"
#include "grad_ring.h"

/* A range of the last backward is final: all-reduce it now. */
static int on_grad_ready(void *ctx, size_t offset, size_t count)
{
    step_runner *s = ctx;
    int rc = step_take_range(s, offset, count);
    if (!rc)
        rc = comm_progress(s->comm);
    if (!rc)
        rc = comm_allreduce(s->comm, s->m->grads + offset, count);
    s->dp_buckets++;
    return rc;
}

/* ZeRO-2: a bucket of the ring is final; its reduction, started. */
static int ring_reduce(void *ctx, float *buf, size_t a, size_t b)
{
    step_runner *s = ctx;
    int rc = comm_progress(s->comm);
    return rc ? rc : comm_reduce_range(s->comm, buf, a, b, s->m->slice.len);
}

static int ring_wait(void *ctx)
{
    step_runner *s = ctx;
    return comm_wait_named(s->comm, "reduce-scatter wait");
}

/* The model is in slices, or the row keeps them (on one rank the slice is
 * the whole vector, and the collectives still run, as a 1-rank NCCL
 * communicator does them). */
static int sharded(const step_runner *s)
{
    return s->m->slice.ranks > 1 || shard_info_of(s->shard)->slices_state;
}

/* Sharded: between two reduce-scatters this rank's slice of the buffer
 * holds the reduced sum of the earlier micro-batches, and the rest of it
 * is zeroed, so that the next reduce-scatter adds every rank's new
 * gradient to that sum once (the same rule as the all-reduce's rank 0,
 * slice by slice). */
static int zero_other_slices(model *m)
{
    const shard_slice *sl = &m->slice;
    size_t end = sl->first + sl->len;
    int rc = sl->first ? bk_zero(m->b, m->grads, sl->first * sizeof(float)) : BK_OK;
    if (!rc && end < sl->padded)
        rc = bk_zero(m->b, m->grads + end, (sl->padded - end) * sizeof(float));
    return rc;
}

static int shard_micro_end(step_runner *s, int k, int rc)
{
    if (rc || !shard_reduces_after(s->shard, s->sync, k, s->sp.accum))
        return rc;
    rc = comm_reduce_scatter(s->comm, s->m->grads, s->m->slice.len);
    return rc ? rc : comm_wait_named(s->comm, "reduce-scatter wait");
}

int dp_after_update(step_runner *s)
{
    model *m = s->m;
    if (!sharded(s))
        return BK_OK;
    int rc = comm_allgather(s->comm, m->params, m->slice.len);
    if (!rc)
        rc = comm_wait_named(s->comm, "all-gather wait");
    if (!rc && m->params_compute != m->params) /* the other slices' bf16 copies */
        rc = bk_convert(m->b, m->params, m->params_compute, m->storage, m->n_params);
    return rc;
}

/* ZeRO-2: the slices' sums put in a whole gradient made for the check
 * (model_grads_slice_to_whole), which the all-gather fills. */
int dp_gather_gradient(step_runner *s)
{
    if (!sharded(s))
        return BK_OK;
    int rc = s->m->ring ? model_grads_slice_to_whole(s->m) : BK_OK;
    if (!rc)
        rc = comm_allgather(s->comm, s->m->grads, s->m->slice.len);
    return rc ? rc : comm_wait_named(s->comm, "all-gather wait");
}

int dp_micro_begin(step_runner *s, int k)
{
    model *m = s->m;
    if (m->ring) { /* ZeRO-2: the buckets are reduced as the backward finishes them */
        grad_ring_hooks h = {.reduce = ring_reduce, .wait = ring_wait, .ctx = s};
        grad_ring_set_hooks(m, &h);
        return BK_OK;
    }
    if (sharded(s)) /* no buckets: a reduce-scatter takes every slice at once */
        return shard_reduced_before(s->shard, s->sync, k) ? zero_other_slices(m) : BK_OK;
    if (sync_reduced_before(s->sync, k) && s->comm->rank != 0)
        return bk_zero(m->b, m->grads, m->n_params * sizeof(float));
    if (sync_info_of(s->sync)->buckets_in_backward && sync_reduces_after(s->sync, k, s->sp.accum)) {
        s->unreported = m->n_params;
        s->dp_buckets = 0;
        m->grad_ready = on_grad_ready;
        m->grad_ready_ctx = s;
    }
    return BK_OK;
}

int dp_micro_end(step_runner *s, int k, int rc)
{
    model *m = s->m;
    comm *c = s->comm;
    if (m->ring) { /* the backward's end waited for its last buckets */
        grad_ring_set_hooks(m, NULL);
        return rc;
    }
    if (sharded(s))
        return shard_micro_end(s, k, rc);
    int reduces = sync_reduces_after(s->sync, k, s->sp.accum);
    int bucketed = sync_info_of(s->sync)->buckets_in_backward && reduces;
    if (bucketed) {
        m->grad_ready = NULL;
        m->grad_ready_ctx = NULL;
    }
    if (rc || !reduces)
        return rc;
    if (bucketed) {
        if (s->unreported > 0) {
            rc = comm_allreduce(c, m->grads, s->unreported);
            s->dp_buckets++;
        }
        return rc ? rc : comm_wait_all(c);
    }
    rc = comm_allreduce(c, m->grads, m->n_params);
    return rc ? rc : comm_wait_all(c);
}
