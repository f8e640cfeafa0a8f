/* The step assignment of trace_analysis.c, in its own file: which step
 * each record belongs to, and the pieces the per-step analysis shares with
 * it. Internal to harness/trace (trace_analysis.h's trace_assign_steps is
 * the public side). */
#ifndef ACCUBENCH_TRACE_ASSIGN_H
#define ACCUBENCH_TRACE_ASSIGN_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* A kernel, copy or set: work the device did. */
int is_device_work(trace_kind k);

/* (key, index) pairs, sorted by key then index (cmp_keyed, for qsort), for
 * binary search. */
typedef struct keyed {
    uint64_t key;
    size_t index;
} keyed;
int cmp_keyed(const void *a, const void *b);

/* What the analysis needs besides the step of each record. */
typedef struct assignment {
    int n_steps;
    int32_t *step_of;     /* per record */
    ptrdiff_t *host_of;   /* per record: the correlated host call, -1 */
    size_t *step_range;   /* per step: the index of its "step" range */
    uint64_t *step_start; /* per step */
} assignment;

/* Fills *a for recs[0..n) (assignment_free frees it). 0, or -1 when out of
 * memory (nothing then to free). */
int trace_assign(const trace_record *recs, size_t n, assignment *a);
void assignment_free(assignment *a);

#endif
