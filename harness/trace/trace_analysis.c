/* Per-step analysis of activity records; the definitions are in the header. */
#include "trace_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "trace_assign.h"

int trace_assign_steps(const trace_record *recs, size_t n, int32_t *step_of,
                       ptrdiff_t *host_of, int *n_steps)
{
    assignment a;
    if (trace_assign(recs, n, &a) != 0)
        return -1;
    memcpy(step_of, a.step_of, n * sizeof *step_of);
    if (host_of)
        memcpy(host_of, a.host_of, n * sizeof *host_of);
    *n_steps = a.n_steps;
    assignment_free(&a);
    return 0;
}

/* ------------------------------------------------------------ per-step work */

/* One device record of a step, clipped to the step's window. */
typedef struct work {
    uint64_t start, end, issue;
    trace_phase phase;
} work;

static int cmp_work(const void *a, const void *b)
{
    const work *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->issue < y->issue ? -1 : x->issue > y->issue;
}

/* A phase boundary for the even split of overlapping phases. */
typedef struct edge {
    uint64_t t;
    int delta;
    trace_phase phase;
} edge;

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static trace_phase phase_of_name(const char *name)
{
    if (!name)
        return TRACE_PHASE_OTHER;
    if (strcmp(name, "forward") == 0)
        return TRACE_PHASE_FORWARD;
    if (strcmp(name, "backward") == 0)
        return TRACE_PHASE_BACKWARD;
    if (strcmp(name, "optimizer") == 0)
        return TRACE_PHASE_OPTIMIZER;
    return TRACE_PHASE_OTHER;
}

/* The innermost phase range containing t (the optimizer runs inside the
 * backward when it runs per layer): ranges[] are the phase ranges sorted by
 * start, reach[j] the latest end among ranges[0..j]. From the last range
 * that starts by t back, the first that contains t is the innermost; none
 * can once reach falls below t. */
static trace_phase phase_at(const trace_record *recs, const keyed *ranges,
                            const uint64_t *reach, size_t n_ranges, uint64_t t)
{
    size_t lo = 0, hi = n_ranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranges[mid].key <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t j = lo; j > 0 && reach[j - 1] >= t; j--) {
        const trace_record *r = &recs[ranges[j - 1].index];
        if (t <= r->end_ns)
            return phase_of_name(r->name);
    }
    return TRACE_PHASE_OTHER;
}

/* Busy time and the idle split of one step's device work (w[0..n) sorted
 * by start, clipped to [ws, we]). */
static void split_idle(const work *w, size_t n, uint64_t ws, uint64_t we,
                       uint64_t gap_threshold, trace_step_stats *st)
{
    uint64_t covered = ws; /* device work covers up to here */
    for (size_t i = 0; i < n;) {
        uint64_t b = w[i].start;
        uint64_t issue = w[i].issue;
        size_t j = i;
        for (; j < n && w[j].start == b; j++) {
            if (w[j].issue < issue)
                issue = w[j].issue;
        }
        if (b > covered) {
            uint64_t a = covered;
            uint64_t issued = issue < a ? a : issue > b ? b : issue;
            st->idle_host_wait_ns += issued - a;
            uint64_t rest = b - issued;
            if (i > 0 && rest < gap_threshold)
                st->idle_gap_ns += rest;
            else
                st->idle_other_ns += rest;
            covered = b;
        }
        for (; i < j; i++)
            if (w[i].end > covered) {
                st->busy_ns += w[i].end - covered;
                covered = w[i].end;
            }
    }
    if (we > covered)
        st->idle_other_ns += we - covered;
}

/* Phase split: sweep the edges, sharing each covered stretch evenly among
 * the phases active in it. */
static int split_phases(const work *w, size_t n, trace_step_stats *st)
{
    edge *e = malloc((2 * n + 1) * sizeof *e);
    if (!e)
        return -1;
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        if (w[i].end <= w[i].start)
            continue;
        e[ne++] = (edge){w[i].start, +1, w[i].phase};
        e[ne++] = (edge){w[i].end, -1, w[i].phase};
    }
    qsort(e, ne, sizeof *e, cmp_edge);
    long active[TRACE_PHASE_COUNT] = {0};
    for (size_t k = 0; k < ne; k++) {
        active[e[k].phase] += e[k].delta;
        if (k + 1 == ne || e[k + 1].t == e[k].t)
            continue;
        int phases = 0;
        for (int p = 0; p < TRACE_PHASE_COUNT; p++)
            phases += active[p] > 0;
        if (phases == 0)
            continue;
        double share = (double)(e[k + 1].t - e[k].t) / phases;
        for (int p = 0; p < TRACE_PHASE_COUNT; p++)
            if (active[p] > 0)
                st->phase_ns[p] += share;
    }
    free(e);
    return 0;
}

/* Busy time, the idle split and the phase split of one step's device work
 * (w[0..n) sorted by start, clipped to [ws, we]). */
static int analyse_work(const work *w, size_t n, uint64_t ws, uint64_t we,
                        uint64_t gap_threshold, trace_step_stats *st)
{
    split_idle(w, n, ws, we, gap_threshold, st);
    return split_phases(w, n, st);
}

/* Counts a step's launch calls, leaving out a launch that lies inside another
 * launch of the same thread (idx[] are the step's launch records). */
typedef struct launch_key {
    uint32_t stream;
    uint64_t start, end;
} launch_key;

static int cmp_launch(const void *a, const void *b)
{
    const launch_key *x = a, *y = b;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* outer first */
}

static uint32_t count_outer_launches(launch_key *l, size_t n)
{
    qsort(l, n, sizeof *l, cmp_launch);
    uint32_t count = 0;
    for (size_t i = 0; i < n;) {
        count++;
        size_t j = i + 1;
        while (j < n && l[j].stream == l[i].stream && l[j].end <= l[i].end)
            j++;
        i = j;
    }
    return count;
}

static void summary_clear(trace_summary *out)
{
    memset(out, 0, sizeof *out);
    out->kernels_per_step = out->launches_per_step = NAN;
    out->memcpys_per_step = out->memsets_per_step = NAN;
    out->wall_ms = out->busy_ms = out->busy_pct = NAN;
    out->idle_host_wait_pct = out->idle_gap_pct = out->idle_other_pct = NAN;
    for (int p = 0; p < TRACE_PHASE_COUNT; p++)
        out->phase_ms[p] = NAN;
    out->idle_ms = NAN;
    out->launch_latency_us_median = out->launch_latency_us_p90 = NAN;
}

/* The scratch of one analysis: per-record and per-step arrays. */
typedef struct scratch {
    trace_step_stats *st;     /* per step */
    uint64_t *first_dev;      /* per host call: its first device record's start */
    keyed *phase_ranges;      /* the phase ranges, by start */
    uint64_t *phase_reach;    /* the latest end among phase_ranges[0..j] */
    size_t n_phase;
    work *w;                  /* one step's device work */
    launch_key *lk;           /* one step's launches */
    double *latency;          /* every launch's latency, us */
    size_t n_latency;
    size_t *order;            /* record indices grouped by step */
    size_t *step_first;       /* per step: its first place in order */
} scratch;

static void analysis_scratch_free(scratch *x)
{
    free(x->st);
    free(x->first_dev);
    free(x->phase_ranges);
    free(x->phase_reach);
    free(x->w);
    free(x->lk);
    free(x->latency);
    free(x->order);
    free(x->step_first);
}

static int scratch_alloc(scratch *x, size_t n, int steps)
{
    memset(x, 0, sizeof *x);
    x->st = calloc((size_t)steps, sizeof *x->st);
    x->first_dev = malloc((n + 1) * sizeof *x->first_dev);
    x->phase_ranges = malloc((n + 1) * sizeof *x->phase_ranges);
    x->phase_reach = malloc((n + 1) * sizeof *x->phase_reach);
    x->w = malloc((n + 1) * sizeof *x->w);
    x->lk = malloc((n + 1) * sizeof *x->lk);
    x->latency = malloc((n + 1) * sizeof *x->latency);
    x->order = malloc((n + 1) * sizeof *x->order);
    x->step_first = calloc((size_t)steps + 1, sizeof *x->step_first);
    return x->st && x->first_dev && x->phase_ranges && x->phase_reach && x->w && x->lk &&
                   x->latency && x->order && x->step_first
               ? 0 : -1;
}

/* Each step's window (from the step range's start to the latest end of
 * the step), the phase ranges by start with their reach, and each host
 * call's first device record. */
static void step_windows(const trace_record *recs, size_t n, const assignment *a, scratch *x)
{
    for (int s = 0; s < a->n_steps; s++) {
        const trace_record *r = &recs[a->step_range[s]];
        x->st[s].start_ns = r->start_ns;
        x->st[s].end_ns = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
    }
    x->n_phase = 0;
    for (size_t i = 0; i < n; i++) {
        x->first_dev[i] = UINT64_MAX;
        int s = a->step_of[i];
        if (recs[i].kind == TRACE_RANGE && phase_of_name(recs[i].name) != TRACE_PHASE_OTHER)
            x->phase_ranges[x->n_phase++] = (keyed){recs[i].start_ns, i};
        if (s >= 0 && recs[i].end_ns > x->st[s].end_ns)
            x->st[s].end_ns = recs[i].end_ns;
    }
    qsort(x->phase_ranges, x->n_phase, sizeof *x->phase_ranges, cmp_keyed);
    for (size_t j = 0; j < x->n_phase; j++) {
        uint64_t end = recs[x->phase_ranges[j].index].end_ns;
        x->phase_reach[j] = j > 0 && x->phase_reach[j - 1] > end ? x->phase_reach[j - 1] : end;
    }
    for (size_t i = 0; i < n; i++)
        if (a->host_of[i] >= 0 && recs[i].start_ns < x->first_dev[a->host_of[i]])
            x->first_dev[a->host_of[i]] = recs[i].start_ns;
}

/* Records grouped by step (a counting sort keeps it linear). */
static int group_by_step(size_t n, const assignment *a, scratch *x)
{
    int steps = a->n_steps;
    for (size_t i = 0; i < n; i++)
        if (a->step_of[i] >= 0)
            x->step_first[a->step_of[i] + 1]++;
    for (int s = 0; s < steps; s++)
        x->step_first[s + 1] += x->step_first[s];
    size_t *fill = calloc((size_t)steps, sizeof *fill);
    if (!fill)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int s = a->step_of[i];
        if (s >= 0)
            x->order[x->step_first[s] + fill[s]++] = i;
    }
    free(fill);
    return 0;
}

/* Counts record i into its step t; a launch's latency, a device record's
 * work (clipped to the window, with its issue time and phase). */
static void count_record(const trace_record *recs, size_t i, const assignment *a, scratch *x,
                         trace_step_stats *t, size_t *nw, size_t *nl)
{
    const trace_record *r = &recs[i];
    switch (r->kind) {
    case TRACE_KERNEL: t->kernels++; break;
    case TRACE_MEMCPY: t->memcpys++; break;
    case TRACE_MEMSET: t->memsets++; break;
    case TRACE_RUNTIME: t->runtime_calls++; break;
    case TRACE_SYNC: t->syncs++; break;
    case TRACE_LAUNCH:
        x->lk[(*nl)++] = (launch_key){r->stream, r->start_ns, r->end_ns};
        if (x->first_dev[i] != UINT64_MAX)
            x->latency[x->n_latency++] = x->first_dev[i] > r->start_ns
                                             ? (double)(x->first_dev[i] - r->start_ns) / 1e3
                                             : 0.0;
        break;
    default: break;
    }
    if (!is_device_work(r->kind))
        return;
    uint64_t start = r->start_ns < t->start_ns ? t->start_ns : r->start_ns;
    uint64_t end = r->end_ns < start ? start : r->end_ns;
    uint64_t issue = a->host_of[i] >= 0 ? recs[a->host_of[i]].start_ns : r->start_ns;
    x->w[(*nw)++] = (work){start, end, issue,
                           phase_at(recs, x->phase_ranges, x->phase_reach, x->n_phase, issue)};
}

/* Step s's counts, launches, latencies and device work. */
static int analyse_step(const trace_record *recs, const assignment *a, scratch *x, int s,
                        int has_launches, uint64_t gap_threshold)
{
    trace_step_stats *t = &x->st[s];
    size_t nw = 0, nl = 0;
    for (size_t k = x->step_first[s]; k < x->step_first[s + 1]; k++)
        count_record(recs, x->order[k], a, x, t, &nw, &nl);
    /* The CPU backend: each dispatch is its own launch, issued when it
     * starts, so its latency is 0 and the dispatch count stands in for
     * the launch count. */
    if (has_launches) {
        t->launches = count_outer_launches(x->lk, nl);
    } else {
        t->launches = (uint32_t)nw;
        for (size_t k = 0; k < nw; k++)
            x->latency[x->n_latency++] = 0.0;
    }
    qsort(x->w, nw, sizeof *x->w, cmp_work);
    return analyse_work(x->w, nw, t->start_ns, t->end_ns, gap_threshold, t);
}

/* The means over the steps, and the latency's median and p90. */
static int summarise(const scratch *x, int steps, trace_summary *out)
{
    double kernels = 0, launches = 0, memcpys = 0, memsets = 0, wall = 0,
           busy = 0, host_wait = 0, gap = 0, other = 0;
    double phase[TRACE_PHASE_COUNT] = {0};
    for (int s = 0; s < steps; s++) {
        const trace_step_stats *t = &x->st[s];
        kernels += t->kernels;
        launches += t->launches;
        memcpys += t->memcpys;
        memsets += t->memsets;
        wall += (double)(t->end_ns - t->start_ns);
        busy += (double)t->busy_ns;
        host_wait += (double)t->idle_host_wait_ns;
        gap += (double)t->idle_gap_ns;
        other += (double)t->idle_other_ns;
        for (int p = 0; p < TRACE_PHASE_COUNT; p++)
            phase[p] += t->phase_ns[p];
    }
    out->kernels_per_step = kernels / steps;
    out->launches_per_step = launches / steps;
    out->memcpys_per_step = memcpys / steps;
    out->memsets_per_step = memsets / steps;
    out->wall_ms = wall / steps / 1e6;
    out->busy_ms = busy / steps / 1e6;
    out->idle_ms = (wall - busy) / steps / 1e6;
    for (int p = 0; p < TRACE_PHASE_COUNT; p++)
        out->phase_ms[p] = phase[p] / steps / 1e6;
    if (wall > 0) {
        out->busy_pct = 100.0 * busy / wall;
        out->idle_host_wait_pct = 100.0 * host_wait / wall;
        out->idle_gap_pct = 100.0 * gap / wall;
        out->idle_other_pct = 100.0 * other / wall;
    }
    out->latency_samples = x->n_latency;
    timing_stats lat;
    if (x->n_latency > 0) {
        if (timing_stats_of(x->latency, x->n_latency, &lat) != 0)
            return -1;
        out->launch_latency_us_median = lat.median;
        out->launch_latency_us_p90 = lat.p90;
    }
    memcpy(out->step, x->st,
           (size_t)(steps < TRACE_MAX_STEPS ? steps : TRACE_MAX_STEPS) * sizeof *x->st);
    return 0;
}

int trace_analyse(const trace_record *recs, size_t n,
                  const trace_analysis_options *opt, trace_summary *out)
{
    summary_clear(out);
    uint64_t gap_threshold = opt && opt->gap_threshold_ns ? opt->gap_threshold_ns
                                                          : TRACE_GAP_THRESHOLD_NS;
    assignment a;
    if (trace_assign(recs, n, &a) != 0)
        return -1;
    out->steps = a.n_steps;
    for (size_t i = 0; i < n; i++)
        out->has_launches |= recs[i].kind == TRACE_LAUNCH;
    if (a.n_steps == 0) {
        assignment_free(&a);
        return 0;
    }
    scratch x;
    int rc = scratch_alloc(&x, n, a.n_steps);
    if (!rc) {
        step_windows(recs, n, &a, &x);
        rc = group_by_step(n, &a, &x);
    }
    for (int s = 0; s < a.n_steps && !rc; s++)
        rc = analyse_step(recs, &a, &x, s, out->has_launches, gap_threshold);
    if (!rc)
        rc = summarise(&x, a.n_steps, out);
    analysis_scratch_free(&x);
    assignment_free(&a);
    return rc;
}
