/* ZeRO-2's gradient memory (model_shard with the gradient in slices): a
 * rank keeps its slice of the accumulated gradient, and the backward
 * writes each micro-batch's gradient into a ring of two buckets instead of
 * a whole vector (model_grad). A bucket's reduction (its part of each
 * rank's slice summed onto that rank, then added to the slice) starts
 * when the backward enters the next bucket, and runs while that one
 * fills; before a bucket's space is written again, the reduction of its
 * last occupant is waited for.
 *
 * The plan. The tensors (the kind's list, which tiles [0, n)) go into
 * buckets in backward order, from the end of the vector down (the order a
 * kind reports its ranges final, model_grad_ready): a bucket is the fewest
 * whole tensors that hold at least as many floats as the ring's largest
 * tensor, so that every bucket's collective is as large as the largest
 * tensor's must be anyway (GPT-2 small's MLP weight: 9.4 MB, the order of
 * DDP's 25 MB buckets). A bucket ends where a tensor kept outside the ring
 * begins. A tensor whose gradient is written twice in one backward
 * (`grad_twice`: the GPT's tied token embedding, by the LM head first and
 * the embedding last) keeps its own place for the whole backward, outside
 * the ring. A kind that reports no ranges gets one bucket of the whole
 * vector, reduced after its backward: it then needs the whole gradient as
 * before, and the slice besides.
 *
 * What the ring needs of a kind that reports ranges: when a bucket is
 * first written, every tensor of the bucket two before it (its slot's last
 * occupant) has been reported final. It holds where each reported range is
 * written and reported before the next one is first written, and holds at
 * most two tensors (a layer's weight and bias, a LayerNorm's gain and
 * bias): the MLP, the linear classifier and the GPT (a linear layer or a
 * LayerNorm at a time). A write into a bucket already reduced, or a slot
 * needed before its last
 * occupant is final, fails the pass with the reason. */
#ifndef ACCUBENCH_GRAD_RING_H
#define ACCUBENCH_GRAD_RING_H

#include <stddef.h>

#include "model.h"

/* Where each tensor's gradient is written under ZeRO-2. */
typedef struct grad_ring_plan {
    size_t n;         /* parameters */
    int n_tensors;
    size_t *t_off;    /* n_tensors + 1 ascending offsets, the last n */
    int *t_where;     /* bucket >= 0, or -1 - k: own place k */
    int n_buckets;
    size_t *lo, *hi;  /* bucket j is [lo[j], hi[j]); bucket 0 ends at n */
    int n_own;
    int *own_tensor;  /* own place k: its tensor */
    size_t *own_at;   /* and where it starts in the own buffer */
    size_t own_floats;
    size_t slot_floats; /* the largest bucket */
    int slots;          /* 2, or 1 where there is one bucket */
} grad_ring_plan;

/* The plan of s: BK_OK, or BK_OOM (host memory). */
int grad_ring_plan_of(const model_spec *s, grad_ring_plan *p);
void grad_ring_plan_free(grad_ring_plan *p);
/* Floats of the ring and the own places (the slice not counted): what
 * grad_ring_create allocates besides the slice, for the memory need. */
size_t grad_ring_floats(const model_spec *s);

/* The reduction of one bucket, set by a data-parallel step: `reduce`
 * starts the sum over the ranks of floats [a, b) of the vector held in buf
 * (after it, this rank's part of [a, b) holds the sum at its place in
 * buf); `wait` returns when every started reduction is done. NULL: no
 * reduction (a pass timed alone): the slice is left as it is. */
typedef struct grad_ring_hooks {
    int (*reduce)(void *ctx, float *buf, size_t a, size_t b);
    int (*wait)(void *ctx);
    void *ctx;
} grad_ring_hooks;

/* The ring of m for its slice (m->slice set): the slice's accumulator,
 * the two slots, the own places; m->ring, m->grads the accumulator. */
int grad_ring_create(model *m);
/* grad_ring_destroy, and what a pass calls (begin, at, report, end), are
 * declared in model.h, which model.c includes alone. */
void grad_ring_set_hooks(model *m, const grad_ring_hooks *h);

/* One forward and backward (model_forward, model_backward): begin, the
 * kind's writes (grad_ring_at) and reports (grad_ring_report), end (every
 * bucket not yet reduced is, in order, and drained). drain: the
 * reductions started, waited for and added into the slice. */
int grad_ring_drain(model *m);

#endif
