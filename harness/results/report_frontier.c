/* "Within a memory cap": per model, effective batch and device count, every
 * configuration that ran with its memory per device and step time,
 * which are on the Pareto front, which fit the cap, and the recommendation
 * under it with the faster ones left out and why (frontier.h); then the
 * chart plots/frontier.gp draws of the same rows. */
#include <stdlib.h>
#include <string.h>

#include "ci_level.h"
#include "frontier.h"
#include "row_compare.h"
#include "report_parts.h"

/* The sets the section shows, at most this many (a file of 10^6 rows
 * holds a few; the rest are counted). */
#define FRONTIER_SETS 8

typedef struct set_key {
    const char *model;
    int64_t effective, devices;
} set_key;

/* The distinct model x E x devices of the run's own rows, in file order. */
static int set_keys(const report_input *in, const char *own, set_key *keys, size_t *more)
{
    int n = 0;
    *more = 0;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (own && strcmp(r->backend, own))
            continue;
        int j = 0;
        while (j < n && (strcmp(keys[j].model, r->model) || keys[j].effective !=
                         r->effective_batch || keys[j].devices != r->devices))
            j++;
        if (j < n)
            continue;
        if (n == FRONTIER_SETS) {
            (*more)++;
            continue;
        }
        keys[n++] = (set_key){r->model, r->effective_batch, r->devices};
    }
    return n;
}

static void set_table(const report_input *in, const frontier_set *s, doc *d)
{
    static const char *const head[] = {"configuration", "step ms", "95% interval", "memory",
                                       "front", "cap", NULL};
    table *tb = doc_table(d, "lrlrll", head);
    char name[256], why[200], level[16];
    for (size_t i = 0; tb && i < s->n; i++) {
        const frontier_item *it = &s->items[i];
        const csv_row *r = &in->rows[it->row];
        if (it->verdict != FR_FITS && it->verdict != FR_OVER_CAP)
            continue;
        frontier_label(s, in->rows, it, name, sizeof name);
        table_add(tb, name);
        table_add(tb, rp_num(r->step_ms_median, 4).s);
        if (r->step_ms_ci_hi > 0)
            table_addf(tb, "%s..%s%s", rp_num(r->step_ms_ci_lo, 4).s,
                       rp_num(r->step_ms_ci_hi, 4).s,
                       row_ci_short_text((long long)r->rounds, (long long)r->samples, level,
                                         sizeof level));
        else
            table_add(tb, "-");
        table_addf(tb, "%s %s", rp_bytes(it->mem).s, it->mem < 0 ? ""
                   : it->mem_measured ? "peak" : "need");
        table_add(tb, it->on_front ? "on the front" : "");
        table_add(tb, in->mem_cap < 0 ? "-" : (int)i == s->best ? "recommended"
                      : frontier_verdict_text(in->rows, it, why, sizeof why));
    }
}

/* The recommendation and what was faster, in a sentence each. */
static void set_findings(const report_input *in, const frontier_set *s, doc *d)
{
    char name[256], why[200];
    size_t not_ok = 0;
    for (size_t i = 0; i < s->n; i++)
        not_ok += s->items[i].verdict != FR_FITS && s->items[i].verdict != FR_OVER_CAP;
    if (not_ok)
        doc_bullet(d, "%zu %s did not run or cannot stand (status not ok, or an "
                      "inexact reduction): not recommended, and not on the front.", not_ok,
                   not_ok == 1 ? "configuration" : "configurations");
    if (in->mem_cap < 0)
        return;
    if (s->best < 0) {
        doc_bullet(d, "No configuration reaches this effective batch within the cap.");
        return;
    }
    const frontier_item *b = &s->items[s->best];
    frontier_label(s, in->rows, b, name, sizeof name);
    /* The pick as plan --recommend states it: with the candidates the
     * rule does not separate from it, each with what the rule makes of
     * it, and the one of them needing least memory. */
    char ties[1200] = "";
    int *tied = malloc(s->n * sizeof *tied), least = s->best;
    int n_tied = tied ? frontier_tied(s, in->rows, tied, &least) : 0;
    size_t used = 0;
    for (int j = 0; j < n_tied && used < sizeof ties; j++) {
        char other[256];
        frontier_label(s, in->rows, &s->items[tied[j]], other, sizeof other);
        used += (size_t)snprintf(ties + used, sizeof ties - used, "%s%s (%s ms, %s; %s)",
                                 j ? ", " : "; not separated by the rule from ", other,
                                 rp_num(s->items[tied[j]].step_ms, 4).s,
                                 rp_bytes(s->items[tied[j]].mem).s,
                                 frontier_tie_words(s, in->rows, tied[j]).s);
    }
    free(tied);
    if (least != s->best && used < sizeof ties) {
        char other[256];
        frontier_label(s, in->rows, &s->items[least], other, sizeof other);
        snprintf(ties + used, sizeof ties - used, "; of them %s needs the least memory", other);
    }
    doc_bullet(d, "Recommended under the cap: %s, %s ms a step, %s per device%s.", name,
               rp_num(b->step_ms, 4).s, rp_bytes(b->mem).s, ties);
    /* Faster by its median is not faster: only where the rule says so;
     * otherwise what the rule makes of it, in its words. */
    for (int i = 0; i < s->best; i++) {
        const frontier_item *it = &s->items[i];
        if (it->verdict != FR_OVER_CAP)
            continue;
        frontier_label(s, in->rows, it, name, sizeof name);
        paired_verdict v = row_verdict(&in->rows[b->row], &in->rows[it->row]);
        char lead[200];
        if (v == PAIRED_FASTER)
            snprintf(lead, sizeof lead, "Faster but left out");
        else
            snprintf(lead, sizeof lead, "Left out, and by the rule %s",
                     paired_verdict_against(v, PAIRED_THRESHOLD, "the recommended").s);
        doc_bullet(d, "%s: %s, %s ms: %s.", lead, name, rp_num(it->step_ms, 4).s,
                   frontier_verdict_text(in->rows, it, why, sizeof why));
    }
}

void report_frontier(const report_input *in, doc *d)
{
    doc_heading(d, 2, "Within a memory cap");
    if (in->mem_cap < 0)
        doc_para(d, "No cap was given (report --mem-cap BYTES, and the run had no "
                    "mem_cap_bytes): this section shows the front only.");
    else
        doc_para(d, "Cap: %s (%lld bytes) per device, from %s. Memory per device is the "
                    "measured peak (mem_peak_bytes) where a row has one, else the exact need "
                    "(mem_need_bytes); one configuration is faster or slower than another "
                    "only where the ratio's interval clears the %g%% threshold.",
                 rp_bytes(in->mem_cap).s, (long long)in->mem_cap, in->mem_cap_from,
                 100 * PAIRED_THRESHOLD);
    set_key keys[FRONTIER_SETS];
    size_t more;
    const char *own = csv_meta_get(in->t, "backend");
    int n = set_keys(in, own && *own ? own : NULL, keys, &more);
    int shown = 0;
    const char *inexact = NULL; /* a reduction that kept rows off every front */
    for (int k = 0; k < n; k++) {
        frontier_query q = {keys[k].effective, keys[k].devices, in->mem_cap, keys[k].model,
                            own && *own ? own : NULL};
        frontier_set s;
        char why[300];
        if (frontier_build(in->t, in->rows, &q, &s, why, sizeof why))
            continue;
        int clean = 0;
        for (size_t i = 0; i < s.n; i++) {
            clean += s.items[i].verdict == FR_FITS || s.items[i].verdict == FR_OVER_CAP;
            if (s.items[i].verdict == FR_INEXACT && !inexact)
                inexact = in->rows[s.items[i].row].reduction;
        }
        if (clean) {
            shown++;
            doc_heading(d, 3, "Model %s, effective batch %lld, %lld %s", keys[k].model,
                        (long long)keys[k].effective, (long long)keys[k].devices,
                        keys[k].devices == 1 ? "device" : "devices");
            set_table(in, &s, d);
            set_findings(in, &s, d);
        }
        frontier_free(&s);
    }
    if (more)
        doc_para(d, "%zu rows of further model x effective batch x device counts are not shown.",
                 more);
    if (!shown) {
        /* rows that ran with their memory, but of a reduction that is not
         * the full batch's gradient (or one this build does not know, from
         * another version), are left out for that, not for their memory */
        if (inexact)
            doc_para(d, "Nothing to set against a cap: the rows that ran are of a reduction "
                        "this build does not hold exact (%s), and a gradient that may not be "
                        "the full batch's is no way to the batch.", inexact);
        else
            doc_para(d, "Nothing to set against a cap: no row ran with a memory figure.");
        return;
    }
    report_chart(in, d, "frontier", "Step time against memory per device, each configuration "
                                    "a point, the Pareto front drawn and the cap as a line");
}
