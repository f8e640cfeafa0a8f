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
 * after the backward. */
#include "dp_step.h"

#include "dispatch.h"

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

int dp_micro_begin(step_runner *s, int k)
{
    model *m = s->m;
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
