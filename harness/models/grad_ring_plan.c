/* The plan of ZeRO-2's bucket ring (grad_ring.h): which bucket, or own
 * place, each tensor's gradient goes to, from the kind's tensor list. The
 * memory need and the allocation both come from it. */
#include "grad_ring.h"

#include <stdlib.h>
#include <string.h>

static int plan_alloc(grad_ring_plan *p, int nt)
{
    size_t k = (size_t)nt + 1;
    p->t_off = calloc(k, sizeof *p->t_off);
    p->t_where = calloc(k, sizeof *p->t_where);
    p->lo = calloc(k, sizeof *p->lo);
    p->hi = calloc(k, sizeof *p->hi);
    p->own_tensor = calloc(k, sizeof *p->own_tensor);
    p->own_at = calloc(k, sizeof *p->own_at);
    return p->t_off && p->t_where && p->lo && p->hi && p->own_tensor && p->own_at ? BK_OK
                                                                                 : BK_OOM;
}

void grad_ring_plan_free(grad_ring_plan *p)
{
    free(p->t_off);
    free(p->t_where);
    free(p->lo);
    free(p->hi);
    free(p->own_tensor);
    free(p->own_at);
    memset(p, 0, sizeof *p);
}

static size_t tensor_len(const grad_ring_plan *p, int t) { return p->t_off[t + 1] - p->t_off[t]; }

/* Buckets from the end of the vector down: whole tensors, closed once
 * they hold `least` floats (the largest tensor); closed early where an own
 * place begins, and before a tensor that would take a bucket already half
 * full past `least`: a bucket is then under 1.5 x `least` (a remainder and
 * the embedding in one once made ZeRO-2's two slots outgrow the whole
 * gradient), and a layer's bias still rides with its weight. */
static void plan_buckets(grad_ring_plan *p, size_t least)
{
    int open = 0;
    for (int t = p->n_tensors - 1; t >= 0; t--) {
        if (p->t_where[t] < 0) { /* an own place: the open bucket ends above it */
            open = 0;
            continue;
        }
        size_t held = open ? p->hi[p->n_buckets - 1] - p->lo[p->n_buckets - 1] : 0;
        if (open && 2 * held >= least && held + tensor_len(p, t) > least)
            open = 0;
        if (!open) {
            p->hi[p->n_buckets] = p->t_off[t + 1];
            open = 1;
            p->n_buckets++;
        }
        int j = p->n_buckets - 1;
        p->lo[j] = p->t_off[t];
        p->t_where[t] = j;
        size_t len = p->hi[j] - p->lo[j];
        p->slot_floats = len > p->slot_floats ? len : p->slot_floats;
        if (len >= least)
            open = 0;
    }
    p->slots = p->n_buckets < 2 ? p->n_buckets : 2;
}

int grad_ring_plan_of(const model_spec *s, grad_ring_plan *p)
{
    memset(p, 0, sizeof *p);
    p->n = model_param_count(s);
    int nt = s->kind->tensors(s, NULL, 0);
    model_tensor *t = calloc((size_t)nt + 1, sizeof *t);
    if (!t || plan_alloc(p, nt)) {
        free(t);
        grad_ring_plan_free(p);
        return BK_OOM;
    }
    s->kind->tensors(s, t, nt);
    p->n_tensors = nt;
    int reports = s->kind->reports_grad_ready;
    size_t largest = 0;
    for (int i = 0; i < nt; i++) {
        p->t_off[i] = t[i].offset;
        p->t_off[i + 1] = i + 1 < nt ? t[i + 1].offset : p->n;
        /* Reported or not, a kind that reports nothing is one bucket: it
         * lives the whole backward, so nothing needs a place of its own. */
        if (reports && t[i].grad_twice) {
            p->own_tensor[p->n_own] = i;
            p->own_at[p->n_own] = p->own_floats;
            p->own_floats += tensor_len(p, i);
            p->t_where[i] = -1 - p->n_own++;
        }
    }
    for (int i = 0; i < nt; i++)
        if (p->t_where[i] >= 0 && tensor_len(p, i) > largest)
            largest = tensor_len(p, i);
    plan_buckets(p, reports ? largest : p->n);
    free(t);
    return BK_OK;
}

size_t grad_ring_floats(const model_spec *s)
{
    grad_ring_plan p;
    if (grad_ring_plan_of(s, &p))
        return MEMORY_NEED_MAX / sizeof(float); /* out of host memory: no figure */
    size_t floats = (size_t)p.slots * p.slot_floats + p.own_floats;
    grad_ring_plan_free(&p);
    return floats;
}

