/* Per-step analysis of activity records; the definitions are in the header. */
#include "trace_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int is_device_work(trace_kind k)
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

/* ------------------------------------------------------------ step assignment */

/* (key, index) pairs, sorted by key then index, for binary search. */
typedef struct keyed {
    uint64_t key;
    size_t index;
} keyed;

static int cmp_keyed(const void *a, const void *b)
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

/* What the analysis needs besides the step of each record. */
typedef struct assignment {
    int n_steps;
    int32_t *step_of;     /* per record */
    ptrdiff_t *host_of;   /* per record: the correlated host call, -1 */
    size_t *step_range;   /* per step: the index of its "step" range */
    uint64_t *step_start; /* per step */
} assignment;

static void assignment_free(assignment *a)
{
    free(a->step_of);
    free(a->host_of);
    free(a->step_range);
    free(a->step_start);
    memset(a, 0, sizeof *a);
}

static int assign(const trace_record *recs, size_t n, assignment *a)
{
    memset(a, 0, sizeof *a);
    size_t n_ranges = 0, n_calls = 0;
    for (size_t i = 0; i < n; i++) {
        n_ranges += is_step_range(&recs[i]);
        n_calls += is_host_call(recs[i].kind) && recs[i].correlation != 0;
    }
    keyed *ranges = calloc(n_ranges + 1, sizeof *ranges);
    keyed *calls = calloc(n_calls + 1, sizeof *calls);
    a->step_of = calloc(n + 1, sizeof *a->step_of);
    a->host_of = calloc(n + 1, sizeof *a->host_of);
    a->step_range = calloc(n_ranges + 1, sizeof *a->step_range);
    a->step_start = calloc(n_ranges + 1, sizeof *a->step_start);
    if (!ranges || !calls || !a->step_of || !a->host_of || !a->step_range ||
        !a->step_start) {
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
    for (size_t i = 0; i < n; i++) {
        const trace_record *r = &recs[i];
        if (!is_device_work(r->kind))
            continue;
        if (r->correlation != 0 && nc > 0) {
            /* The call with this correlation id: a launch before a runtime
             * record, and the outermost (earliest) when a runtime launch and
             * the driver launch inside it share the id. */
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
            if (best >= 0) {
                a->host_of[i] = best;
                a->step_of[i] = a->step_of[best];
                continue;
            }
        }
        int s = -1;
        if (r->step >= 0)
            for (int k = 0; k < a->n_steps && s < 0; k++)
                if (recs[a->step_range[k]].step == r->step)
                    s = k;
        a->step_of[i] = s >= 0 ? s : step_at(a->step_start, a->n_steps, r->start_ns);
    }
    free(ranges);
    free(calls);
    return 0;
}

int trace_assign_steps(const trace_record *recs, size_t n, int32_t *step_of,
                       ptrdiff_t *host_of, int *n_steps)
{
    assignment a;
    if (assign(recs, n, &a) != 0)
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

/* Busy time, the idle split and the phase split of one step's device work
 * (w[0..n) sorted by start, clipped to [ws, we]). */
static int analyse_work(const work *w, size_t n, uint64_t ws, uint64_t we,
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

    /* Phase split: sweep the edges, sharing each covered stretch evenly
     * among the phases active in it. */
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

int trace_analyse(const trace_record *recs, size_t n,
                  const trace_analysis_options *opt, trace_summary *out)
{
    summary_clear(out);
    uint64_t gap_threshold = opt && opt->gap_threshold_ns ? opt->gap_threshold_ns
                                                          : TRACE_GAP_THRESHOLD_NS;
    assignment a;
    if (assign(recs, n, &a) != 0)
        return -1;
    out->steps = a.n_steps;
    for (size_t i = 0; i < n; i++)
        out->has_launches |= recs[i].kind == TRACE_LAUNCH;
    if (a.n_steps == 0) {
        assignment_free(&a);
        return 0;
    }

    int rc = -1;
    int S = a.n_steps;
    trace_step_stats *st = calloc((size_t)S, sizeof *st);
    uint64_t *first_dev = malloc((n + 1) * sizeof *first_dev);
    keyed *phase_ranges = malloc((n + 1) * sizeof *phase_ranges);
    uint64_t *phase_reach = malloc((n + 1) * sizeof *phase_reach);
    work *w = malloc((n + 1) * sizeof *w);
    launch_key *lk = malloc((n + 1) * sizeof *lk);
    double *latency = malloc((n + 1) * sizeof *latency);
    size_t *order = malloc((n + 1) * sizeof *order);
    size_t *step_first = calloc((size_t)S + 1, sizeof *step_first);
    if (!st || !first_dev || !phase_ranges || !phase_reach || !w || !lk || !latency ||
        !order || !step_first)
        goto done;

    /* Windows: from the step range's start to the latest end of the step. */
    size_t n_phase = 0;
    for (int s = 0; s < S; s++) {
        const trace_record *r = &recs[a.step_range[s]];
        st[s].start_ns = r->start_ns;
        st[s].end_ns = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
    }
    for (size_t i = 0; i < n; i++) {
        first_dev[i] = UINT64_MAX;
        int s = a.step_of[i];
        if (recs[i].kind == TRACE_RANGE &&
            phase_of_name(recs[i].name) != TRACE_PHASE_OTHER)
            phase_ranges[n_phase++] = (keyed){recs[i].start_ns, i};
        if (s >= 0 && recs[i].end_ns > st[s].end_ns)
            st[s].end_ns = recs[i].end_ns;
    }
    qsort(phase_ranges, n_phase, sizeof *phase_ranges, cmp_keyed);
    for (size_t j = 0; j < n_phase; j++) {
        uint64_t end = recs[phase_ranges[j].index].end_ns;
        phase_reach[j] = j > 0 && phase_reach[j - 1] > end ? phase_reach[j - 1] : end;
    }
    for (size_t i = 0; i < n; i++)
        if (a.host_of[i] >= 0 && recs[i].start_ns < first_dev[a.host_of[i]])
            first_dev[a.host_of[i]] = recs[i].start_ns;

    /* Records grouped by step (a counting sort keeps it linear). */
    for (size_t i = 0; i < n; i++)
        if (a.step_of[i] >= 0)
            step_first[a.step_of[i] + 1]++;
    for (int s = 0; s < S; s++)
        step_first[s + 1] += step_first[s];
    {
        size_t *fill = calloc((size_t)S, sizeof *fill);
        if (!fill)
            goto done;
        for (size_t i = 0; i < n; i++) {
            int s = a.step_of[i];
            if (s >= 0)
                order[step_first[s] + fill[s]++] = i;
        }
        free(fill);
    }

    size_t n_latency = 0;
    for (int s = 0; s < S; s++) {
        trace_step_stats *t = &st[s];
        size_t nw = 0, nl = 0;
        for (size_t k = step_first[s]; k < step_first[s + 1]; k++) {
            size_t i = order[k];
            const trace_record *r = &recs[i];
            switch (r->kind) {
            case TRACE_KERNEL: t->kernels++; break;
            case TRACE_MEMCPY: t->memcpys++; break;
            case TRACE_MEMSET: t->memsets++; break;
            case TRACE_RUNTIME: t->runtime_calls++; break;
            case TRACE_SYNC: t->syncs++; break;
            case TRACE_LAUNCH:
                lk[nl++] = (launch_key){r->stream, r->start_ns, r->end_ns};
                if (first_dev[i] != UINT64_MAX)
                    latency[n_latency++] =
                        first_dev[i] > r->start_ns
                            ? (double)(first_dev[i] - r->start_ns) / 1e3
                            : 0.0;
                break;
            default: break;
            }
            if (!is_device_work(r->kind))
                continue;
            uint64_t start = r->start_ns < t->start_ns ? t->start_ns : r->start_ns;
            uint64_t end = r->end_ns < start ? start : r->end_ns;
            uint64_t issue = a.host_of[i] >= 0 ? recs[a.host_of[i]].start_ns
                                               : r->start_ns;
            w[nw++] = (work){start, end, issue,
                             phase_at(recs, phase_ranges, phase_reach, n_phase, issue)};
        }
        /* The CPU backend: each dispatch is its own launch, issued when it
         * starts, so its latency is 0 and the dispatch count stands in for
         * the launch count. */
        if (out->has_launches) {
            t->launches = count_outer_launches(lk, nl);
        } else {
            t->launches = (uint32_t)nw;
            for (size_t k = 0; k < nw; k++)
                latency[n_latency++] = 0.0;
        }
        qsort(w, nw, sizeof *w, cmp_work);
        if (analyse_work(w, nw, t->start_ns, t->end_ns, gap_threshold, t) != 0)
            goto done;
    }

    double kernels = 0, launches = 0, memcpys = 0, memsets = 0, wall = 0,
           busy = 0, host_wait = 0, gap = 0, other = 0;
    double phase[TRACE_PHASE_COUNT] = {0};
    for (int s = 0; s < S; s++) {
        kernels += st[s].kernels;
        launches += st[s].launches;
        memcpys += st[s].memcpys;
        memsets += st[s].memsets;
        wall += (double)(st[s].end_ns - st[s].start_ns);
        busy += (double)st[s].busy_ns;
        host_wait += (double)st[s].idle_host_wait_ns;
        gap += (double)st[s].idle_gap_ns;
        other += (double)st[s].idle_other_ns;
        for (int p = 0; p < TRACE_PHASE_COUNT; p++)
            phase[p] += st[s].phase_ns[p];
    }
    out->kernels_per_step = kernels / S;
    out->launches_per_step = launches / S;
    out->memcpys_per_step = memcpys / S;
    out->memsets_per_step = memsets / S;
    out->wall_ms = wall / S / 1e6;
    out->busy_ms = busy / S / 1e6;
    out->idle_ms = (wall - busy) / S / 1e6;
    for (int p = 0; p < TRACE_PHASE_COUNT; p++)
        out->phase_ms[p] = phase[p] / S / 1e6;
    if (wall > 0) {
        out->busy_pct = 100.0 * busy / wall;
        out->idle_host_wait_pct = 100.0 * host_wait / wall;
        out->idle_gap_pct = 100.0 * gap / wall;
        out->idle_other_pct = 100.0 * other / wall;
    }
    out->latency_samples = n_latency;
    timing_stats lat;
    if (n_latency > 0) {
        if (timing_stats_of(latency, n_latency, &lat) != 0)
            goto done;
        out->launch_latency_us_median = lat.median;
        out->launch_latency_us_p90 = lat.p90;
    }
    memcpy(out->step, st, (size_t)(S < TRACE_MAX_STEPS ? S : TRACE_MAX_STEPS) * sizeof *st);
    rc = 0;

done:
    free(st);
    free(first_dev);
    free(phase_ranges);
    free(phase_reach);
    free(w);
    free(lk);
    free(latency);
    free(order);
    free(step_first);
    assignment_free(&a);
    return rc;
}
