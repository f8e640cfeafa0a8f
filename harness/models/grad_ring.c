/* ZeRO-2's bucket ring (grad_ring.h): the buffers, one pass's writes,
 * reports and reductions, and the checks' whole gradient. The plan is in
 * grad_ring_plan.c. */
#include "grad_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

/* ------------------------------------------------------------- the ring */

enum { OWN_WRITING = 0, OWN_STARTED, OWN_DONE };

struct grad_ring {
    grad_ring_plan plan;
    int writes_first;  /* the kind writes every element: nothing to zero */
    float *slot[2], *own, *acc;
    grad_ring_hooks hooks;
    /* One pass. */
    int cur;           /* the last bucket acquired (-1: none yet) */
    int final;         /* buckets [0, final) are reported final */
    int started;       /* [0, started) their reduction started */
    int done;          /* and [0, done) reduced and added into the slice */
    size_t reported;   /* [reported, n) reported final */
    unsigned char *own_state;
    int rc;            /* the first failure of a write (grad_ring_at returns a pointer) */
    /* The check's whole gradient (model_grads_whole): its buffer and the
     * memory peak from before it. */
    float *whole;
    size_t peak_before;
};

static size_t bucket_len(const grad_ring *r, int j) { return r->plan.hi[j] - r->plan.lo[j]; }

void grad_ring_set_hooks(model *m, const grad_ring_hooks *h)
{
    m->ring->hooks = h ? *h : (grad_ring_hooks){0};
}

void grad_ring_destroy(model *m)
{
    grad_ring *r = m->ring;
    if (!r)
        return;
    backend *b = m->b;
    for (int i = 0; i < r->plan.slots; i++)
        bk_free(b, r->slot[i], r->plan.slot_floats * sizeof(float));
    bk_free(b, r->own, r->plan.own_floats * sizeof(float));
    bk_free(b, r->acc, m->slice.len * sizeof(float));
    bk_free_apart(b, r->whole, m->slice.padded * sizeof(float));
    grad_ring_plan_free(&r->plan);
    free(r->own_state);
    free(r);
    m->ring = NULL;
    m->grads = NULL;
}

int grad_ring_create(model *m)
{
    backend *b = m->b;
    grad_ring *r = calloc(1, sizeof *r);
    if (!r || grad_ring_plan_of(&m->spec, &r->plan) ||
        !(r->own_state = calloc((size_t)r->plan.n_own + 1, 1))) {
        if (r)
            grad_ring_plan_free(&r->plan);
        free(r);
        snprintf(b->error, sizeof b->error, "out of host memory for the gradient buckets");
        return BK_OOM;
    }
    m->ring = r;
    r->writes_first = m->spec.kind->writes_first_gradient;
    int rc = bk_alloc(b, m->slice.len * sizeof(float), (void **)&r->acc);
    for (int i = 0; i < r->plan.slots && !rc; i++)
        rc = bk_alloc(b, r->plan.slot_floats * sizeof(float), (void **)&r->slot[i]);
    if (!rc && r->plan.own_floats)
        rc = bk_alloc(b, r->plan.own_floats * sizeof(float), (void **)&r->own);
    if (rc) {
        grad_ring_destroy(m);
        return rc;
    }
    m->grads = r->acc;
    m->grads_len = m->slice.len;
    m->grads_from = m->slice.first;
    return BK_OK;
}

/* The tensor holding `offset`: the last whose start is at or below it. */
static int tensor_of(const grad_ring_plan *p, size_t offset)
{
    int lo = 0, hi = p->n_tensors - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->t_off[mid] <= offset)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static int fail(model *m, int rc)
{
    if (!m->ring->rc)
        m->ring->rc = rc;
    return rc;
}

static int add_f32(backend *b, float *y, const float *x, size_t n)
{
    BK_DISPATCH(b, "add", b->ops->add(b, STORAGE_F32, y, x, n));
}

/* The sum of [a, b), reduced in buf, added where it meets this rank's
 * slice. */
static int take_sum(model *m, const float *buf, size_t a, size_t b)
{
    size_t first = m->slice.first, last = first + m->slice.len;
    size_t lo = a > first ? a : first, hi = b < last ? b : last;
    return lo < hi ? add_f32(m->b, m->ring->acc + (lo - first), buf + (lo - a), hi - lo)
                   : BK_OK;
}

/* The reductions started so far, waited for; each one's part of this
 * rank's slice added into the accumulator (nothing where no step reduces:
 * no hooks). */
int grad_ring_drain(model *m)
{
    grad_ring *r = m->ring;
    const grad_ring_plan *p = &r->plan;
    int own_pending = memchr(r->own_state, OWN_STARTED, (size_t)p->n_own) != NULL;
    if (r->done == r->started && !own_pending)
        return BK_OK;
    int reduced = r->hooks.reduce != NULL;
    int rc = reduced && r->hooks.wait ? r->hooks.wait(r->hooks.ctx) : BK_OK;
    for (int j = r->done; j < r->started && !rc; j++)
        rc = reduced ? take_sum(m, r->slot[j % 2], p->lo[j], p->hi[j]) : BK_OK;
    for (int k = 0; k < p->n_own && !rc; k++) {
        if (r->own_state[k] != OWN_STARTED)
            continue;
        int t = p->own_tensor[k];
        r->own_state[k] = OWN_DONE;
        rc = reduced ? take_sum(m, r->own + p->own_at[k], p->t_off[t], p->t_off[t + 1]) : BK_OK;
    }
    r->done = r->started;
    return rc ? fail(m, rc) : BK_OK;
}

/* The reductions of the final buckets below `upto` that the backward has
 * entered, started, in order (the same on every rank). */
static int start_through(model *m, int upto)
{
    grad_ring *r = m->ring;
    const grad_ring_plan *p = &r->plan;
    grad_ring_hooks *h = &r->hooks;
    int rc = BK_OK;
    upto = upto < r->final ? upto : r->final;
    upto = upto < r->cur + 1 ? upto : r->cur + 1;
    for (; r->started < upto && !rc; r->started++) {
        int j = r->started;
        if (h->reduce)
            rc = h->reduce(h->ctx, r->slot[j % 2], p->lo[j], p->hi[j]);
    }
    return rc;
}

/* Buckets up to j made ready to be written, in order. Each one's slot is
 * free once its last occupant (two before) is reduced and its sum taken;
 * the reductions of the buckets finished since are started only after
 * that wait, so that each runs behind the writes of the bucket after it.
 * A slot is zeroed where the kind adds into its gradient, where the
 * backward passes over a bucket, and with `zero` (a bucket the backward
 * never wrote, reduced as zeros). */
static int acquire_through(model *m, int j, int zero)
{
    grad_ring *r = m->ring;
    const grad_ring_plan *p = &r->plan;
    int rc = BK_OK;
    while (r->cur < j && !rc) {
        int next = r->cur + 1, last = next - 2;
        if (last >= 0 && last >= r->final) {
            snprintf(m->b->error, sizeof m->b->error, "gradient bucket [%zu, %zu) is written "
                     "before [%zu, %zu), whose place it takes, was reported final: the "
                     "model's gradient ranges are coarser than its buckets", p->lo[next],
                     p->hi[next], p->lo[last], p->hi[last]);
            return fail(m, BK_ERROR);
        }
        if (last >= 0 && (rc = start_through(m, last + 1)) == BK_OK && last >= r->done)
            rc = grad_ring_drain(m);
        if (!rc)
            rc = start_through(m, next);
        if (!rc && (zero || next < j || !r->writes_first))
            rc = bk_zero(m->b, r->slot[next % 2], bucket_len(r, next) * sizeof(float));
        r->cur = next;
    }
    return rc ? fail(m, rc) : BK_OK;
}

/* What the reports so far made final: the own places' reductions started
 * (the backward writes them no more), the buckets marked (acquire_through
 * starts theirs). */
static int start_final(model *m)
{
    grad_ring *r = m->ring;
    const grad_ring_plan *p = &r->plan;
    grad_ring_hooks *h = &r->hooks;
    int rc = BK_OK;
    for (int k = 0; k < p->n_own && !rc; k++) {
        int t = p->own_tensor[k];
        if (r->own_state[k] != OWN_WRITING || p->t_off[t] < r->reported)
            continue;
        r->own_state[k] = OWN_STARTED;
        if (h->reduce)
            rc = h->reduce(h->ctx, r->own + p->own_at[k], p->t_off[t], p->t_off[t + 1]);
    }
    while (r->final < p->n_buckets && p->lo[r->final] >= r->reported)
        r->final++;
    return rc ? fail(m, rc) : BK_OK;
}

int grad_ring_begin(model *m)
{
    grad_ring *r = m->ring;
    r->cur = -1;
    r->final = r->started = r->done = 0;
    r->reported = r->plan.n;
    r->rc = BK_OK;
    memset(r->own_state, OWN_WRITING, (size_t)r->plan.n_own);
    if (r->own && !r->writes_first)
        return bk_zero(m->b, r->own, r->plan.own_floats * sizeof(float));
    return BK_OK;
}

/* A write after the report: it would be lost (its sum is taken). */
static float *late(model *m, size_t offset, float *where)
{
    snprintf(m->b->error, sizeof m->b->error, "the gradient at parameter %zu is written after "
             "the model reported it final", offset);
    fail(m, BK_ERROR);
    return where;
}

float *grad_ring_at(model *m, size_t offset)
{
    grad_ring *r = m->ring;
    const grad_ring_plan *p = &r->plan;
    int t = tensor_of(p, offset), j = p->t_where[t];
    if (j < 0) {
        int k = -1 - j;
        float *at = r->own + p->own_at[k] + (offset - p->t_off[t]);
        return r->own_state[k] == OWN_WRITING ? at : late(m, offset, at);
    }
    if (j > r->cur)
        acquire_through(m, j, 0); /* a failure is kept in r->rc: the pass returns it */
    float *at = r->slot[j % 2] + (offset - p->lo[j]);
    return j < r->final ? late(m, offset, at) : at;
}

int grad_ring_report(model *m, size_t offset, size_t count)
{
    grad_ring *r = m->ring;
    if (r->rc)
        return r->rc;
    if (offset + count != r->reported) {
        snprintf(m->b->error, sizeof m->b->error, "the model reported gradient range [%zu, "
                 "%zu) out of order (expected one ending at %zu)", offset, offset + count,
                 r->reported);
        return fail(m, BK_ERROR);
    }
    r->reported = offset;
    return start_final(m);
}

int grad_ring_end(model *m)
{
    grad_ring *r = m->ring;
    if (r->rc)
        return r->rc;
    r->reported = 0; /* what the kind did not report is final now */
    int rc = start_final(m);
    if (!rc) /* a bucket never entered is reduced as zeros */
        rc = acquire_through(m, r->plan.n_buckets - 1, 1);
    if (!rc)
        rc = start_through(m, r->plan.n_buckets);
    if (!rc) /* the last reductions: the next pass writes the slots again */
        rc = grad_ring_drain(m);
    return rc ? rc : r->rc;
}

/* ------------------------------------------------- the check's whole gradient */

int model_grads_whole(model *m)
{
    grad_ring *r = m->ring;
    if (!r || m->grads_whole)
        return BK_OK;
    backend *b = m->b;
    size_t bytes = m->slice.padded * sizeof(float);
    r->peak_before = b->mem_peak;
    /* the check's: outside the cap while held, and (on its free) the row's peak */
    int rc = bk_alloc_apart(b, bytes, (void **)&r->whole);
    if (!rc)
        rc = bk_zero(b, r->whole, bytes);
    if (rc) {
        /* Made but not zeroed: freed, and the peak as it was. Kept, the
         * next call (the model's next check) made another over it, the
         * first lost and its bytes counted in use for good. */
        bk_free_apart(b, r->whole, bytes);
        r->whole = NULL;
        b->mem_peak = r->peak_before;
        return rc;
    }
    m->grads = r->whole;
    m->grads_len = m->slice.padded;
    m->grads_from = 0;
    m->grads_whole = 1;
    return BK_OK;
}

void model_grads_sliced(model *m)
{
    grad_ring *r = m->ring;
    if (!r || !m->grads_whole)
        return;
    backend *b = m->b;
    size_t bytes = m->slice.padded * sizeof(float);
    /* Every peak since it was made counted it: the peak without it. */
    size_t peak = b->mem_peak - bytes;
    bk_free_apart(b, r->whole, bytes);
    r->whole = NULL;
    b->mem_peak = peak > r->peak_before ? peak : r->peak_before;
    m->grads = r->acc;
    m->grads_len = m->slice.len;
    m->grads_from = m->slice.first;
    m->grads_whole = 0;
}

int model_grads_slice_to_whole(model *m)
{
    int rc = model_grads_whole(m);
    if (!rc && m->ring)
        rc = add_f32(m->b, m->grads + m->slice.first, m->ring->acc, m->slice.len);
    return rc;
}
