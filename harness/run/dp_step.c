/* When and what a data-parallel step all-reduces (see dp_step.h).
 *
 * window: the accumulated gradient once, after the last micro-batch.
 * micro: after every micro-batch. The gradient buffer then holds the sum of
 *   the earlier micro-batches' all-reduced gradients (the same on every
 *   rank) plus this rank's new one; for the sum to count the earlier ones
 *   once, every rank but rank 0 zeroes its buffer before each micro-batch
 *   after the first. The all-reduce carries the whole gradient every time,
 *   as a wrapper that all-reduces every backward does.
 * overlap: the last micro-batch's backward reports each range of the
 *   gradient as it is final (model_grad_ready); each range is all-reduced
 *   at once, as its own bucket, while the rest of the backward runs, and
 *   the step waits for them all after it. What the model did not report
 *   (all of it, for a kind that reports nothing) goes in one bucket after
 *   the backward. */
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
    const sync_info *si = sync_info_of(s->sync);
    model *m = s->m;
    int last = k == s->sp.accum - 1;
    if (si->per_micro && k > 0 && s->comm->rank != 0)
        return bk_zero(m->b, m->grads, m->n_params * sizeof(float));
    if (si->buckets_in_backward && last) {
        s->unreported = m->n_params;
        s->dp_buckets = 0;
        m->grad_ready = on_grad_ready;
        m->grad_ready_ctx = s;
    }
    return BK_OK;
}

int dp_micro_end(step_runner *s, int k, int rc)
{
    const sync_info *si = sync_info_of(s->sync);
    model *m = s->m;
    comm *c = s->comm;
    int last = k == s->sp.accum - 1;
    int bucketed = si->buckets_in_backward && last;
    if (bucketed) {
        m->grad_ready = NULL;
        m->grad_ready_ctx = NULL;
    }
    if (rc)
        return rc;
    if (bucketed) {
        if (s->unreported > 0) {
            rc = comm_allreduce(c, m->grads, s->unreported);
            s->dp_buckets++;
        }
        return rc ? rc : comm_wait_all(c);
    }
    if (si->per_micro || last) {
        rc = comm_allreduce(c, m->grads, m->n_params);
        if (!rc)
            rc = comm_wait_all(c);
    }
    return rc;
}
