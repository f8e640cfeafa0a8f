/* Interleaved rounds (see rounds.h). */
#include "rounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config_run.h"
#include "cpu_sample.h"
#include "dispatch.h"
#include "dp_check.h"
#include "measure.h"
#include "paired.h"
#include "progress.h"
#include "ranges.h"
#include "rng.h"
#include "round_steps.h"
#include "row_trust.h"
#include "stats.h"
#include "trace.h"

/* What the rounds keep of one member. */
typedef struct member_times {
    int slice_steps;
    double *ms;                       /* every timed step, round after round */
    double *host_ms;                  /* each of those steps' host enqueue time */
    /* With ranks: each of those steps' communication, at the same places
     * (comm.h's busy, exposed and arrival-wait times) */
    double *comm_ms, *comm_exposed_ms, *comm_wait_ms;
    size_t at[ROUNDS_MAX + 1];        /* round k's steps: ms[at[k] .. at[k+1]) */
    double round_ms[ROUNDS_MAX];      /* each round's median step */
    double round_pass_ms[ROUNDS_MAX]; /* each round's median single pass */
    size_t own_bytes;                 /* its runner's memory while resident */
    step_memory mem;                  /* the step's memory, its own peak */
    step_timing sum;                  /* the slices' other figures, summed */
    int slices;
    size_t ref;                       /* its series' reference member */
} member_times;

/* The state of one comparison's rounds. */
typedef struct rounds_state {
    sweep *s;
    round_member *mem;
    member_times *tm;
    size_t n;
    int resident;
    size_t resident_bytes;            /* every resident runner's, together */
    int rounds;                       /* rounds run */
    int disturbed[ROUNDS_MAX];        /* round k was dropped-worthy */
    double other_pct[ROUNDS_MAX], steal_pct[ROUNDS_MAX];
} rounds_state;

/* ------------------------------------------------------------ the series */

/* Each member's reference: the member of its series (equal in every KEY
 * column) with the largest micro-batch, its first arm. */
static void find_references(rounds_state *st)
{
    for (size_t i = 0; i < st->n; i++) {
        size_t best = i;
        for (size_t j = 0; j < st->n; j++) {
            const result_row *a = st->mem[j].r, *b = st->mem[best].r;
            if (!st->mem[j].live || !result_same_series(st->mem[i].r, a))
                continue;
            if (!st->mem[best].live || a->micro_batch > b->micro_batch ||
                (a->micro_batch == b->micro_batch && a->arm < b->arm))
                best = j;
        }
        st->tm[i].ref = best;
    }
}

/* --------------------------------------------------------------- a slice */

/* The member ready to step: its row on the model, its split on the
 * data; set up again and warmed with one step where it is not resident. */
static int slice_begin(rounds_state *st, size_t i)
{
    round_member *mb = &st->mem[i];
    config_use(st->s, mb->c, mb->m); /* the backend in its dtype */
    if (st->resident)
        return step_runner_resume(&mb->run);
    int rc = config_runner_setup(st->s, mb->m, mb->d, mb->c, &mb->run);
    if (!rc)
        rc = step_run(&mb->run);
    if (!rc)
        rc = st->s->b->ops->sync(st->s->b);
    return rc;
}

static void slice_end(rounds_state *st, size_t i)
{
    if (!st->resident)
        step_runner_free(&st->mem[i].run);
}

static void timing_add(step_timing *sum, const step_timing *x)
{
    sum->dispatches_per_step += x->dispatches_per_step;
    sum->allreduce_calls += x->allreduce_calls;
    sum->allreduce_bytes += x->allreduce_bytes;
    sum->rs_calls += x->rs_calls;
    sum->rs_bytes += x->rs_bytes;
    sum->ag_calls += x->ag_calls;
    sum->ag_bytes += x->ag_bytes;
}

/* `steps` timed steps of member i into *keep, and in round k (k >= 0)
 * their host enqueue times and communication beside them (warm-up none: a
 * slice follows the slice before it). BK_* status. */
static int slice_time(rounds_state *st, size_t i, int k, int steps, double *keep,
                      step_timing *t)
{
    const config *c = st->mem[i].c;
    member_times *tm = &st->tm[i];
    measure_options mo = config_timing_options(st->s, c);
    mo.warmup = 0;
    mo.steps = steps;
    mo.keep = keep;
    if (k >= 0)
        mo.keep_host_ms = tm->host_ms + tm->at[k];
    if (k >= 0 && tm->comm_ms) {
        size_t at = tm->at[k];
        mo.keep_comm_ms = tm->comm_ms + at;
        mo.keep_comm_exposed_ms = tm->comm_exposed_ms + at;
        mo.keep_comm_wait_ms = tm->comm_wait_ms + at;
    }
    backend *b = st->s->b;
    size_t others = st->resident_bytes - (st->resident ? st->tm[i].own_bytes : 0) +
                    sweep_held_apart(st->s, c->dtype);
    step_memory_open(b);
    int rc = measure_steps(&st->mem[i].run, &mo, t);
    if (!rc)
        step_memory_close(b, others, &st->tm[i].mem);
    return rc;
}

/* Single passes of member i after its slice of round k, timed at the
 * same moment as its steps, so that K x the pass (the naive prediction,
 * and the check that a step is not shorter than its passes) compares
 * figures of the same rounds. Timed once after the rounds, a tiny model's
 * pass read 0.11-0.13 ms beside a 64x1 step of 0.08-0.10 ms on a quiet
 * VM, and every such row was flagged disturbed. A share of the slice's
 * time (a pass is about a step over K), one pass at least: a long step's
 * rounds time as many passes in all as one config timed alone does. */
static int slice_passes(rounds_state *st, size_t i, int k)
{
    member_times *tm = &st->tm[i];
    int reps = rounds_passes_per_slice(tm->slice_steps, st->mem[i].c->sp.accum);
    return measure_single_pass(&st->mem[i].run, reps, &tm->round_pass_ms[k]);
}

/* ------------------------------------------------------------ the rounds */

/* A fresh order of the live members for round k: the same on every rank
 * (the seed is the run's), different from round to round. */
static void round_order(const rounds_state *st, int k, size_t *order, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++)
        if (st->mem[i].live)
            order[n++] = i;
    rng r = {st->mem[0].c->seed * 0x9e3779b97f4a7c15ull + (uint64_t)k + 1};
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below(&r, (int)i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    *count = n;
}

/* Member i's live state lost: its row says why, and it is timed no more.
 * With ranks every rank stops (the others may wait in a collective for
 * this one), as a failed config does when timed alone. */
static void member_failed(rounds_state *st, size_t i, int rc)
{
    round_member *mb = &st->mem[i];
    comm *ranks = st->s->comm;
    if (ranks && ranks->size > 1)
        dp_fail(ranks, "interleaved rounds", st->s->b->error);
    row_status_from(mb->r, rc, st->s->b);
    mb->live = 0;
    if (st->resident) {
        step_runner_free(&mb->run);
        st->resident_bytes -= st->tm[i].own_bytes;
    }
}

/* One slice of member i in round k (k < 0: the warm-up, whose steps set
 * the slice's length and are not kept). */
static void slice(rounds_state *st, size_t i, int k)
{
    member_times *tm = &st->tm[i];
    const config_budget *g = &st->mem[i].c->budget;
    int steps = k < 0 ? (g->warmup > 0 ? g->warmup : 1) : tm->slice_steps;
    double warm[64];
    double *keep = k < 0 ? warm : tm->ms + tm->at[k];
    if (k < 0 && steps > 64)
        steps = 64;
    step_timing t;
    config_range_push(st->mem[i].c); /* a slice reads as its config in Nsight Systems */
    int rc = slice_begin(st, i);
    if (!rc)
        rc = slice_time(st, i, k, steps, keep, &t);
    if (!rc && k >= 0)
        rc = slice_passes(st, i, k);
    slice_end(st, i);
    range_pop();
    if (rc) {
        member_failed(st, i, rc);
        return;
    }
    if (k < 0) {
        double est = stats_median(warm, t.timed), slice_ms = g->budget_s * 1e3 * ROUNDS_SLICE_SHARE;
        if (st->s->comm)
            est = dp_agree_max(st->s->comm, est); /* every rank steps the same count */
        double want = g->steps > 0 ? g->steps : est > 0 ? ceil(slice_ms / est) : 1;
        tm->slice_steps = want < 1 ? 1 : want > 1000 ? 1000 : (int)want;
        return;
    }
    /* as round_ms will hold it: every verdict on the rounds reads these digits */
    tm->round_ms[k] = round_as_written(stats_median(keep, t.timed));
    tm->at[k + 1] = tm->at[k] + t.timed;
    timing_add(&tm->sum, &t);
    tm->slices++;
}

/* Whether round k was disturbed (rank 0's view, for every rank). */
static void judge_round(rounds_state *st, int k, const cpu_sample *a, int a_ok)
{
    cpu_sample b;
    double other = NAN, steal = NAN, ticks = 0;
    if (a_ok && cpu_sample_now(&b) == 0 && cpu_sample_between(a, &b, &other, &steal) == 0)
        ticks = cpu_sample_ticks(a, &b);
    st->other_pct[k] = other;
    st->steal_pct[k] = steal;
    double floor_pct = ticks > 0 ? 100.0 * TRUST_MIN_TICKS / ticks : 100.0;
    int disturbed = other > fmax(TRUST_MAX_OTHER_CPU_PCT, floor_pct) ||
                    steal > fmax(TRUST_MAX_STEAL_PCT, floor_pct);
    st->disturbed[k] = st->s->comm ? dp_agree_root_int(st->s->comm, disturbed) : disturbed;
}

/* The rounds a figure uses (paired_kept_rounds). */
static int kept_rounds(const rounds_state *st, int kept[ROUNDS_MAX])
{
    return paired_kept_rounds(st->disturbed, st->rounds, kept);
}

/* Member i against its reference over the kept rounds. */
static paired_ratio member_ratio(const rounds_state *st, size_t i, const int kept[ROUNDS_MAX])
{
    double x[ROUNDS_MAX], ref[ROUNDS_MAX];
    size_t n = 0;
    const member_times *a = &st->tm[i], *r = &st->tm[st->tm[i].ref];
    for (int k = 0; k < st->rounds; k++)
        if (kept[k]) {
            x[n] = a->round_ms[k];
            ref[n++] = r->round_ms[k];
        }
    paired_ratio p;
    paired_ratio_of(x, ref, n, &p);
    return p;
}

/* Every live member's ratio to its reference is faster, slower or equal
 * within the threshold. */
static int decided(const rounds_state *st)
{
    int kept[ROUNDS_MAX];
    if (kept_rounds(st, kept) < paired_first_look(st->disturbed, kept, st->rounds))
        return 0;
    for (size_t i = 0; i < st->n; i++) {
        if (!st->mem[i].live || st->tm[i].ref == i)
            continue;
        paired_ratio p = member_ratio(st, i, kept);
        paired_verdict v = paired_judge(&p, PAIRED_THRESHOLD);
        if (v == PAIRED_UNDECIDED || v == PAIRED_UNKNOWN)
            return 0;
    }
    return 1;
}

static size_t live_count(const rounds_state *st)
{
    size_t n = 0;
    for (size_t i = 0; i < st->n; i++)
        n += st->mem[i].live;
    return n;
}

/* Whether to stop after the rounds so far; *why what stopped them. */
static int enough(const rounds_state *st, double elapsed_s, double budget_s, measure_stop *why)
{
    int kept[ROUNDS_MAX];
    int n_kept = kept_rounds(st, kept), clean = 0;
    for (int k = 0; k < st->rounds; k++)
        clean += !st->disturbed[k];
    int stop = 0, fixed = st->mem[0].c->budget.rounds;
    if (*st->s->stop) {
        *why = MEASURE_STOP_INTERRUPTED;
        stop = 1;
    } else if (fixed > 0) { /* --rounds N: that many, decided or not */
        *why = MEASURE_STOP_STEPS;
        stop = st->rounds >= fixed || st->rounds >= ROUNDS_MAX || live_count(st) < 1;
    } else if (live_count(st) < 2 || decided(st)) {
        *why = MEASURE_STOP_DECIDED;
        stop = 1;
    } else if (st->rounds >= ROUNDS_MAX ||
               (elapsed_s >= budget_s && clean >= ROUNDS_MIN) ||
               (elapsed_s >= ROUNDS_BUDGET_STRETCH * budget_s && n_kept >= ROUNDS_MIN)) {
        *why = st->rounds >= ROUNDS_MAX ? MEASURE_STOP_SAMPLE_CAP : MEASURE_STOP_BUDGET;
        stop = 1;
    }
    if (st->s->comm) /* rank 0 decides for every rank */
        stop = dp_agree_root_int(st->s->comm, stop);
    return stop;
}

/* Warm-up, then rounds until enough. */
static measure_stop run_rounds(rounds_state *st, size_t *order)
{
    size_t count;
    round_order(st, -1, order, &count);
    for (size_t j = 0; j < count; j++)
        slice(st, order[j], -1);
    for (size_t i = 0; i < st->n; i++)
        if (st->mem[i].live) {
            member_times *tm = &st->tm[i];
            size_t room = (size_t)ROUNDS_MAX * (size_t)tm->slice_steps;
            tm->ms = malloc(room * sizeof *tm->ms);
            tm->host_ms = malloc(room * sizeof *tm->host_ms);
            if (st->s->comm) {
                tm->comm_ms = malloc(room * sizeof *tm->comm_ms);
                tm->comm_exposed_ms = malloc(room * sizeof *tm->comm_exposed_ms);
                tm->comm_wait_ms = malloc(room * sizeof *tm->comm_wait_ms);
            }
            int comm_lost = st->s->comm &&
                            (!tm->comm_ms || !tm->comm_exposed_ms || !tm->comm_wait_ms);
            if (!tm->ms || !tm->host_ms || comm_lost) {
                snprintf(st->s->b->error, sizeof st->s->b->error,
                         "out of host memory for samples");
                member_failed(st, i, BK_OOM);
            }
        }
    double budget_s = 0;
    for (size_t i = 0; i < st->n; i++)
        if (st->mem[i].live)
            budget_s += st->mem[i].c->budget.budget_s;
    uint64_t t0 = trace_now_ns();
    measure_stop why = MEASURE_STOP_DECIDED;
    char phase[80];
    do {
        int k = st->rounds;
        snprintf(phase, sizeof phase, "interleaved rounds: round %d", k + 1);
        progress_phase(st->s->progress, phase);
        cpu_sample before;
        int before_ok = cpu_sample_now(&before) == 0;
        /* Every member's round starts empty and its slice fills it: one
         * lost in this round, or not reached when a signal cut the round
         * short, has no steps in it (never a stale end, which would count
         * steps that are not there). */
        for (size_t i = 0; i < st->n; i++)
            st->tm[i].at[k + 1] = st->tm[i].at[k];
        round_order(st, k, order, &count);
        size_t j = 0;
        for (; j < count && !*st->s->stop; j++)
            if (st->mem[order[j]].live)
                slice(st, order[j], k);
        judge_round(st, k, &before, before_ok);
        /* a round a signal cut short, some members not reached, is no
         * round: counted, it would add a level to the interval it lacks */
        if (j == count)
            st->rounds++;
    } while (!enough(st, (double)(trace_now_ns() - t0) / 1e9, budget_s, &why));
    return why;
}

/* ------------------------------------------------------------- the rows */

/* An id no other run shares, for the comparison column: the run's start,
 * its process, and the comparison's number in the run. */
static void comparison_id(char *out, size_t len)
{
    static unsigned long run_start;
    static int count;
    if (!run_start)
        run_start = (unsigned long)time(NULL);
    snprintf(out, len, "%lx.%lx.%d", run_start, (unsigned long)getpid(), ++count);
}

/* The step time of member i and its interval, with the round as the
 * unit: the median of the kept rounds' medians, and the sign-test interval
 * over them. Steps of one round share the machine's state of that moment
 * (a level shift between rounds moves all of a round's steps at once), so
 * they are not independent draws: over the pooled steps, the interval of a
 * tiny model whose rounds read 0.18 ms and then 0.21 ms was +-0.6%, where
 * the rounds themselves span 0.180..0.212. The rounds are the independent draws
 * (each in a fresh order, the machine's state their own). */
static void member_median_by_round(const member_times *tm, int rounds,
                                   const int kept[ROUNDS_MAX], timing_stats *step)
{
    double medians[ROUNDS_MAX];
    size_t n = round_steps_medians(tm->ms, tm->at, rounds, kept, medians);
    timing_stats by_round;
    if (timing_stats_of(medians, n, &by_round))
        return; /* no round kept: the pooled figures stand (none) */
    step->median = by_round.median;
    step->ci_lo = by_round.ci_lo;
    step->ci_hi = by_round.ci_hi;
    step->ci_coverage = by_round.ci_coverage;
}

/* Member i's step timing over the kept rounds: the median and its interval
 * by round (above); the spread (p10, p90, noise) over every kept step. The
 * host's enqueue time and the communication by round too (round_steps.h),
 * never means of the slices' medians: a slice of one step is that step,
 * and one stalled step then read as ms of exposed communication (or of
 * host enqueue) beside a step median of a tenth of that. The single pass
 * is the median of the kept rounds' (slice_passes). */
static void member_timing(const rounds_state *st, size_t i, const int kept[ROUNDS_MAX],
                          measure_stop why, step_timing *t)
{
    const member_times *tm = &st->tm[i];
    memset(t, 0, sizeof *t);
    double *pool = malloc((tm->at[st->rounds] ? tm->at[st->rounds] : 1) * sizeof *pool);
    size_t n = round_steps_pool(tm->ms, tm->at, st->rounds, kept, pool);
    timing_stats_of(pool, n, &t->step);
    member_median_by_round(tm, st->rounds, kept, &t->step);
    double host_ms = round_steps_median(tm->host_ms, tm->at, st->rounds, kept, pool);
    double comm_ms = round_steps_median(tm->comm_ms, tm->at, st->rounds, kept, pool);
    double exposed_ms = round_steps_median(tm->comm_exposed_ms, tm->at, st->rounds, kept, pool);
    double wait_ms = round_steps_median(tm->comm_wait_ms, tm->at, st->rounds, kept, pool);
    free(pool);
    double passes[ROUNDS_MAX];
    size_t n_passes = 0;
    for (int k = 0; k < st->rounds; k++)
        if (kept[k])
            passes[n_passes++] = tm->round_pass_ms[k];
    double slices = tm->slices > 0 ? tm->slices : 1;
    *t = (step_timing){.step = t->step, .timed = n, .stopped_by = why,
                       .host_enqueue_ms = host_ms,
                       .pass_ms = stats_median(passes, n_passes),
                       .dispatches_per_step = tm->sum.dispatches_per_step / slices,
                       .allreduce_calls = tm->sum.allreduce_calls / slices,
                       .allreduce_bytes = tm->sum.allreduce_bytes / slices,
                       .rs_calls = tm->sum.rs_calls / slices,
                       .rs_bytes = tm->sum.rs_bytes / slices,
                       .ag_calls = tm->sum.ag_calls / slices,
                       .ag_bytes = tm->sum.ag_bytes / slices,
                       .comm_ms = comm_ms,
                       .comm_exposed_ms = exposed_ms,
                       .comm_wait_ms = wait_ms};
}

/* The comparison's columns of member i's row, and what the rounds dropped. */
static void fill_comparison(const rounds_state *st, size_t i, const char *id,
                            const int kept[ROUNDS_MAX], int n_kept)
{
    result_row *r = st->mem[i].r;
    snprintf(r->comparison, sizeof r->comparison, "%s", id);
    r->rounds = n_kept;
    r->rounds_dropped = st->rounds - n_kept;
    round_text(st->tm[i].round_ms, st->rounds, kept, r->round_ms, sizeof r->round_ms);
    round_text(st->tm[i].round_pass_ms, st->rounds, kept, r->round_pass_ms,
               sizeof r->round_pass_ms);
    paired_ratio p = member_ratio(st, i, kept);
    r->vs_ref = p.ratio;
    r->vs_ref_lo = st->tm[i].ref == i ? 1.0 : p.lo;
    r->vs_ref_hi = st->tm[i].ref == i ? 1.0 : p.hi;
}

/* Why rounds were dropped, or why none could be: one remark on the row. */
static void note_dropped(const rounds_state *st, result_row *r, int n_kept)
{
    double other = 0, steal = 0;
    int disturbed = 0;
    for (int k = 0; k < st->rounds; k++)
        if (st->disturbed[k]) {
            disturbed++;
            other = fmax(other, st->other_pct[k]);
            steal = fmax(steal, st->steal_pct[k]);
        }
    if (disturbed && n_kept < st->rounds)
        row_note(r, "%d %s dropped: other processes up to %.3g%% and steal up to %.3g%% of "
                    "the CPUs (over %g%% / %g%%)", disturbed, disturbed == 1 ? "round" : "rounds",
                 other, steal, TRUST_MAX_OTHER_CPU_PCT, TRUST_MAX_STEAL_PCT);
    else if (disturbed)
        row_note(r, "%d of %d rounds disturbed (other processes up to %.3g%%, steal up to "
                    "%.3g%%) and too few clean to drop them: all kept", disturbed, st->rounds,
                 other, steal);
}

/* Member i's row from the rounds, then its counting and trace passes. */
static void finish_member(rounds_state *st, size_t i, const char *id, measure_stop why,
                          const watch_mark before[DTYPE_COUNT],
                          const watch_mark after[DTYPE_COUNT])
{
    round_member *mb = &st->mem[i];
    int kept[ROUNDS_MAX];
    int n_kept = kept_rounds(st, kept);
    step_timing t;
    member_timing(st, i, kept, why, &t);
    fill_comparison(st, i, id, kept, n_kept);
    progress_config_resume(st->s->progress, &mb->mark, 0);
    config_range_push(mb->c);
    config_use(st->s, mb->c, mb->m);
    int rc = st->resident ? step_runner_resume(&mb->run)
                          : config_runner_setup(st->s, mb->m, mb->d, mb->c, &mb->run);
    if (!rc)
        rc = config_fill_timed(st->s, mb->m, mb->d, mb->c, &mb->run, mb->r, &t,
                               &before[mb->c->dtype], &after[mb->c->dtype], &st->tm[i].mem);
    if (!rc)
        note_dropped(st, mb->r, n_kept);
    config_finish(st->s, mb->c, &mb->run, mb->r, rc);
    range_pop();
}

/* The probes beside the comparison, in each dtype its members compute in
 * (a row's MFU is against its own dtype's rate). */
static void mark_dtypes(rounds_state *st, watch_mark marks[DTYPE_COUNT])
{
    int done[DTYPE_COUNT] = {0};
    for (size_t i = 0; i < st->n; i++) {
        dtype dt = st->mem[i].c->dtype;
        if (!st->mem[i].live || done[dt])
            continue;
        (void)bk_use_dtype(st->s->b, dt); /* validated when the sweep began */
        config_watch_mark(st->s->watch, &marks[dt]);
        done[dt] = 1;
    }
}

void rounds_run(sweep *s, round_member *members, size_t n, int resident)
{
    rounds_state st = {.s = s, .mem = members, .n = n, .resident = resident};
    st.tm = calloc(n ? n : 1, sizeof *st.tm);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!st.tm || !order) {
        snprintf(s->b->error, sizeof s->b->error, "out of host memory for the rounds");
        for (size_t i = 0; i < n; i++)
            if (members[i].live) {
                config_finish(s, members[i].c, &members[i].run, members[i].r, BK_OOM);
                members[i].live = 0;
            }
        free(st.tm);
        free(order);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        st.tm[i].mem = (step_memory){-1, -1}; /* nothing measured yet */
        st.tm[i].own_bytes = members[i].own_bytes;
        st.resident_bytes += resident && members[i].live ? members[i].own_bytes : 0;
    }
    find_references(&st);
    progress_group_rounds(s->progress);
    range_push("interleaved rounds");
    watch_mark before[DTYPE_COUNT], after[DTYPE_COUNT]; /* beside the whole comparison */
    mark_dtypes(&st, before);
    measure_stop why = run_rounds(&st, order);
    mark_dtypes(&st, after);
    range_pop();
    char id[64];
    comparison_id(id, sizeof id);
    for (size_t i = 0; i < n; i++)
        if (members[i].live)
            finish_member(&st, i, id, why, before, after);
    for (size_t i = 0; i < n; i++) {
        free(st.tm[i].ms);
        free(st.tm[i].host_ms);
        free(st.tm[i].comm_ms);
        free(st.tm[i].comm_exposed_ms);
        free(st.tm[i].comm_wait_ms);
    }
    free(st.tm);
    free(order);
}
