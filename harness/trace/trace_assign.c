/* Which step each activity record belongs to (trace_assign.h): host
 * records by their start against the "step" ranges, device records by the
 * host call that launched them (correlation id), else by their step stamp,
 * else by their start. */
#include "trace_assign.h"

#include <stdlib.h>
#include <string.h>

int is_device_work(trace_kind k)
{
    return k == TRACE_KERNEL || k == TRACE_MEMCPY || k == TRACE_MEMSET;
}

static int is_host_call(trace_kind k)
{
    return k == TRACE_LAUNCH || k == TRACE_RUNTIME;
}

static int is_step_range(const trace_record *r)
{
    return r->kind == TRACE_RANGE && r->name && strcmp(r->name, "step") == 0;
}

int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The step whose window opens last at or before t (-1: before the first). */
static int step_at(const uint64_t *starts, int n_steps, uint64_t t)
{
    int lo = 0, hi = n_steps; /* first step starting after t */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (starts[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

void assignment_free(assignment *a)
{
    free(a->step_of);
    free(a->host_of);
    free(a->step_range);
    free(a->step_start);
    memset(a, 0, sizeof *a);
}

/* The host call of device record r by correlation id in calls[0..nc)
 * (sorted): a launch before a runtime record, and the outermost (earliest)
 * when a runtime launch and the driver launch inside it share the id; -1
 * when none has it. */
static ptrdiff_t host_call_of(const trace_record *recs, const keyed *calls, size_t nc,
                              const trace_record *r)
{
    size_t lo = 0, hi = nc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (calls[mid].key < r->correlation)
            lo = mid + 1;
        else
            hi = mid;
    }
    ptrdiff_t best = -1;
    for (size_t k = lo; k < nc && calls[k].key == r->correlation; k++) {
        const trace_record *c = &recs[calls[k].index];
        int launch = c->kind == TRACE_LAUNCH;
        int best_launch = best >= 0 && recs[best].kind == TRACE_LAUNCH;
        if (best < 0 || launch > best_launch ||
            (launch == best_launch && c->start_ns < recs[best].start_ns))
            best = (ptrdiff_t)calls[k].index;
    }
    return best;
}

/* The step of device record i: its host call's, else the step whose range
 * carries its stamp, else by its start like a host record. */
static void assign_device_record(const trace_record *recs, size_t i, const keyed *calls,
                                 size_t nc, assignment *a)
{
    const trace_record *r = &recs[i];
    if (r->correlation != 0 && nc > 0) {
        ptrdiff_t best = host_call_of(recs, calls, nc, r);
        if (best >= 0) {
            a->host_of[i] = best;
            a->step_of[i] = a->step_of[best];
            return;
        }
    }
    int s = -1;
    if (r->step >= 0)
        for (int k = 0; k < a->n_steps && s < 0; k++)
            if (recs[a->step_range[k]].step == r->step)
                s = k;
    a->step_of[i] = s >= 0 ? s : step_at(a->step_start, a->n_steps, r->start_ns);
}

static int assign_alloc(assignment *a, size_t n, size_t n_ranges)
{
    a->step_of = calloc(n + 1, sizeof *a->step_of);
    a->host_of = calloc(n + 1, sizeof *a->host_of);
    a->step_range = calloc(n_ranges + 1, sizeof *a->step_range);
    a->step_start = calloc(n_ranges + 1, sizeof *a->step_start);
    return a->step_of && a->host_of && a->step_range && a->step_start ? 0 : -1;
}

int trace_assign(const trace_record *recs, size_t n, assignment *a)
{
    memset(a, 0, sizeof *a);
    size_t n_ranges = 0, n_calls = 0;
    for (size_t i = 0; i < n; i++) {
        n_ranges += is_step_range(&recs[i]);
        n_calls += is_host_call(recs[i].kind) && recs[i].correlation != 0;
    }
    keyed *ranges = calloc(n_ranges + 1, sizeof *ranges);
    keyed *calls = calloc(n_calls + 1, sizeof *calls);
    if (!ranges || !calls || assign_alloc(a, n, n_ranges)) {
        free(ranges);
        free(calls);
        assignment_free(a);
        return -1;
    }
    size_t nr = 0, nc = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_step_range(&recs[i]))
            ranges[nr++] = (keyed){recs[i].start_ns, i};
        if (is_host_call(recs[i].kind) && recs[i].correlation != 0)
            calls[nc++] = (keyed){recs[i].correlation, i};
    }
    qsort(ranges, nr, sizeof *ranges, cmp_keyed);
    qsort(calls, nc, sizeof *calls, cmp_keyed);
    a->n_steps = (int)nr;
    for (size_t s = 0; s < nr; s++) {
        a->step_range[s] = ranges[s].index;
        a->step_start[s] = ranges[s].key;
    }
    /* Host records first: device records may need their step. */
    for (size_t i = 0; i < n; i++) {
        a->host_of[i] = -1;
        a->step_of[i] = is_device_work(recs[i].kind)
                            ? -1
                            : step_at(a->step_start, a->n_steps, recs[i].start_ns);
    }
    for (size_t i = 0; i < n; i++)
        if (is_device_work(recs[i].kind))
            assign_device_record(recs, i, calls, nc, a);
    free(ranges);
    free(calls);
    return 0;
}
