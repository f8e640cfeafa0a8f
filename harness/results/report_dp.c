/* The report's sentences about data parallelism: for each config run on
 * more than one device in several sync modes, what each mode's step cost
 * against the one that moved the most bytes (per micro-batch, the whole
 * gradient K times; the first in the file when they all move the same): what
 * deferring the all-reduce to the window, or overlapping it with the last
 * backward, saved at that K, where the paired rule tells the two apart.
 * Every figure is read from the rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_parts.h"
#include "row_compare.h"
#include "row_flags.h"
#include "row_index.h"

/* A row run on several devices in a sync mode: one that has siblings. A
 * config's first arm: its second (an A/A check) would say it again. */
static int dp_row(const csv_row *r)
{
    return result_ran_once(r) && r->devices > 1 && r->sync[0];
}

/* The bytes a row's step moves in collectives: all-reduced, and under
 * --shard reduce-scattered and all-gathered. */
static double moved_bytes(const csv_row *r)
{
    double v[] = {r->allreduce_bytes_per_step, r->reduce_scatter_bytes_per_step,
                  r->allgather_bytes_per_step};
    double sum = 0;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        sum += isnan(v[i]) ? 0 : v[i];
    return sum;
}

/* "2 all-reduces", "4 reduce-scatters and 1 all-gather": the collectives
 * a row's step makes, each kind it makes at all. */
static rp_text collectives(const csv_row *r)
{
    const struct { double calls; const char *name; } kinds[] = {
        {r->allreduce_calls_per_step, "all-reduce"},
        {r->reduce_scatter_calls_per_step, "reduce-scatter"},
        {r->allgather_calls_per_step, "all-gather"},
    };
    rp_text t;
    size_t used = 0, n = sizeof kinds / sizeof *kinds, shown = 0;
    t.s[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (kinds[i].calls > 0 && used < sizeof t.s)
            used += (size_t)snprintf(t.s + used, sizeof t.s - used, "%s%s %s%s",
                                     shown++ ? " and " : "", rp_count(kinds[i].calls).s,
                                     kinds[i].name, kinds[i].calls == 1 ? "" : "s");
    if (!shown)
        snprintf(t.s, sizeof t.s, "no collective");
    return t;
}

/* One bullet for the set of rows starting at row i (linked through next):
 * the baseline, the mode that moves the most bytes a step, then what each
 * other mode saves or costs against it, where the paired rule (the same
 * rule as every comparison's: row_compare.h) tells them apart, and that it
 * does not where it does not. A set of one says nothing. */
static void sync_set_finding(const report_input *in, size_t i, const size_t *next, doc *d)
{
    const csv_row *base = &in->rows[i];
    size_t members = 0;
    for (size_t j = i; j != ROW_NONE; j = next[j]) {
        const csv_row *o = &in->rows[j];
        members++;
        if (moved_bytes(o) > moved_bytes(base))
            base = o;
    }
    if (members < 2)
        return;
    /* A peer framework's rows (bench/peers/) name it; where its
     * communication was not timed apart, the sentence leaves it out. */
    char peer[2 * RESULT_TEXT_LEN + 4] = "", waited[96] = "";
    if (csv_meta_has_word(in->t, PEERS_META_KEY, base->backend) == 1)
        snprintf(peer, sizeof peer, "%s %s, ", base->backend, base->mode);
    if (!isnan(base->comm_exposed_ms))
        snprintf(waited, sizeof waited, ", %s ms of it waiting for communication",
                 rp_num(base->comm_exposed_ms, 3).s);
    csv_row unsynced = *base; /* the set's other levers (shard, recompute), not its sync */
    unsynced.sync = "";
    char text[2400];
    size_t used = (size_t)snprintf(
        text, sizeof text,
        "At K=%lld on %lld devices (%smodel %s, effective batch %lld, %s%s): %s sync makes "
        "%s a step and takes %s ms a step%s",
        (long long)base->accum_steps, (long long)base->devices, peer, base->model,
        (long long)base->effective_batch, rp_split(base).s, rp_levers(&unsynced).s, base->sync,
        collectives(base).s, rp_num(base->step_ms_median, 4).s, waited);
    for (size_t j = i; j != ROW_NONE && used < sizeof text; j = next[j]) {
        const csv_row *o = &in->rows[j];
        if (o == base)
            continue;
        double saved = base->step_ms_median - o->step_ms_median;
        char exposed[64] = "", ratio[240], verdict[400];
        if (!isnan(o->comm_exposed_ms))
            snprintf(exposed, sizeof exposed, ", %s ms exposed",
                     rp_num(o->comm_exposed_ms, 3).s);
        row_ratio_text(base, o, ratio, sizeof ratio);
        paired_verdict v = row_verdict(base, o);
        char base_sync[80];
        snprintf(base_sync, sizeof base_sync, "%s sync", base->sync);
        if (v == PAIRED_FASTER || v == PAIRED_SLOWER)
            snprintf(verdict, sizeof verdict, "it %s %s ms (%s%%) a step: %s",
                     v == PAIRED_FASTER ? "saves" : "costs", rp_num(fabs(saved), 3).s,
                     rp_num(100 * fabs(saved) / base->step_ms_median, 2).s, ratio);
        else /* the same within 2%, or not yet separated: the rule's words */
            snprintf(verdict, sizeof verdict, "%s: %s",
                     paired_verdict_against(v, PAIRED_THRESHOLD, base_sync).s, ratio);
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "; %s sync (%s%s) takes %s ms: %s", o->sync,
                                 collectives(o).s, exposed, rp_num(o->step_ms_median, 4).s,
                                 verdict);
    }
    doc_bullet(d, "%s.", text);
}

void report_dp_findings(const report_input *in, doc *d)
{
    size_t n = in->t->rows;
    /* Sets of rows of the same config that differ in their sync mode
     * alone, found through a hash of the config's other columns (linear in
     * the rows), each kept as a list in file order. */
    row_key key = row_key_config_but("sync");
    row_index ix;
    size_t *next = malloc(n * sizeof *next), *tail = malloc(n * sizeof *tail);
    if (!next || !tail || row_index_init(&ix, &key, in->rows, n)) {
        free(next);
        free(tail);
        doc_bullet(d, "No data-parallel comparison: out of memory.");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        next[i] = ROW_NONE;
        if (!dp_row(&in->rows[i]))
            continue;
        size_t head = row_index_add(&ix, i);
        if (head == i)
            tail[i] = i;
        else
            tail[head] = next[tail[head]] = i;
    }
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &in->rows[i];
        if (!dp_row(r) || row_index_find(&ix, r) != i)
            continue; /* once per set: at its first row in the file */
        sync_set_finding(in, i, next, d);
    }
    row_index_free(&ix);
    free(next);
    free(tail);
}
