/* "The fastest split under a memory cap": per effective batch, model, dtype
 * and lever (recompute, sync, shard), the fastest config whose memory need
 * fits the cap beside the fastest overall, across the execution modes the
 * file ran (see report_parts.h). */
#include <stdlib.h>
#include <string.h>

#include "axis.h"
#include "reduction.h"
#include "report_parts.h"
#include "row_compare.h"
#include "row_index.h"

/* The rows one line of the table picks from: a series of the report
 * (report_group) in every execution mode and reduction. The table was of
 * the main mode alone, its mode unnamed: beside a run of async and sync
 * its "fastest overall" was async's, while the run's summary, "Within a
 * memory cap" and plan --recommend named the sync split that beat it. */
static row_key line_key(void)
{
    row_key k = row_key_series();
    k.use[result_column_find("mode") - result_columns] = 0;
    k.use[result_column_find("reduction") - result_columns] = 0;
    return k;
}

/* A row the table may name: it ran (its config's first row and arm), in
 * a reduction that reaches the batch. A known-wrong reduction is no way
 * to the batch: its rows (a curves sweep's demonstrations) stood here as
 * more "fastest" splits of the same model and E, their reduction unnamed
 * (a name this build does not know, an older file's, stays). */
static int candidate(const csv_row *r)
{
    return result_ran_once(r) && (axis_find(&reduction_axis, r->reduction) < 0 ||
                                  reduction_exact_named(r->reduction));
}

/* The split, and its mode where the file ran more than one. */
static rp_text config_text(const csv_row *r, int modes)
{
    rp_text t = rp_split(r);
    if (modes) {
        size_t used = strlen(t.s);
        snprintf(t.s + used, sizeof t.s - used, " %s", r->mode);
    }
    return t;
}

/* One line of the table: its fastest config, and its fastest that fits
 * (NULL where none does), with the sentence under a cap that sets them
 * apart. */
static void line(const report_input *in, const csv_row *fit, const csv_row *fast, int modes,
                 table *tb, doc *d)
{
    /* The model with its levers (recompute, sync, shard): the lines of one
     * model at one E are told apart by them. */
    char model[RESULT_TEXT_LEN * 2 + sizeof(rp_text)];
    snprintf(model, sizeof model, "%s (%s)%s", fast->model, fast->dtype, rp_levers(fast).s);
    table_addf(tb, "%lld", (long long)fast->effective_batch);
    table_add(tb, model);
    table_add(tb, fit ? config_text(fit, modes).s : "none fits");
    table_add(tb, fit ? rp_num(fit->step_ms_median, 4).s : "-");
    table_add(tb, fit ? rp_bytes_beside(fit->mem_need_bytes, in->mem_cap).s : "-");
    table_add(tb, config_text(fast, modes).s);
    table_add(tb, rp_num(fast->step_ms_median, 4).s);
    if (in->mem_cap < 0 || !fit || fit == fast)
        return;
    /* A lower median is faster only where the rule says so. */
    char ratio[300];
    row_ratio_text(fit, fast, ratio, sizeof ratio);
    char other[600];
    paired_verdict v = row_verdict(fit, fast);
    if (v == PAIRED_FASTER)
        snprintf(other, sizeof other, "%s would take %s ms but needs %s: %s",
                 config_text(fast, modes).s, rp_num(fast->step_ms_median, 4).s,
                 rp_bytes_beside(fast->mem_need_bytes, in->mem_cap).s, ratio);
    else
        snprintf(other, sizeof other, "%s (%s ms, needs %s) is by the rule %s: %s",
                 config_text(fast, modes).s, rp_num(fast->step_ms_median, 4).s,
                 rp_bytes_beside(fast->mem_need_bytes, in->mem_cap).s,
                 paired_verdict_against(v, PAIRED_THRESHOLD, "it").s, ratio);
    doc_bullet(d, "Under the %s cap, model %s at effective batch %lld runs fastest as %s "
                  "(%s ms, needs %s); %s.",
               rp_bytes(in->mem_cap).s, model, (long long)fast->effective_batch,
               config_text(fit, modes).s, rp_num(fit->step_ms_median, 4).s,
               rp_bytes_beside(fit->mem_need_bytes, in->mem_cap).s, other);
}

void report_memory(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    doc_heading(d, 2, "The fastest split under a memory cap");
    size_t n = in->t->rows;
    int any = 0, modes = 0;
    /* the modes of the rows the table names: a first row that did not run
     * (an oom row of sync before async's), or of a known-wrong reduction,
     * is no mode of the table's, and named async beside every split */
    const csv_row *first = NULL;
    for (size_t i = 0; i < n; i++) {
        any |= in->rows[i].mem_need_bytes >= 0;
        if (!candidate(&in->rows[i]))
            continue;
        if (!first)
            first = &in->rows[i];
        modes |= strcmp(in->rows[i].mode, first->mode) != 0;
    }
    if (!any) {
        doc_para(d, "The CSV has no memory figures (mem_need_bytes is empty): no advice.");
        return;
    }
    if (in->mem_cap < 0)
        doc_para(d, "No memory cap given (report --mem-cap BYTES, or the run's mem_cap_bytes): "
                    "the fastest split of each effective batch and what it needs%s.",
                 modes ? ", in whichever execution mode ran it fastest" : "");
    else
        doc_para(d, "Cap: %s (%lld bytes, from %s). Per effective batch and model, the fastest "
                    "split whose memory need fits, beside the fastest split regardless of "
                    "memory%s.",
                 rp_bytes(in->mem_cap).s, (long long)in->mem_cap, in->mem_cap_from,
                 modes ? ", each in whichever execution mode ran it fastest" : "");
    static const char *const head[] = {"E", "model", "fastest that fits", "step ms",
                                       "needs", "fastest overall", "step ms", NULL};
    table *tb = doc_table(d, "rllrrlr", head);
    row_key key = line_key();
    row_index ix;
    /* per line, kept at its leader's row: the fastest and the fastest fit */
    size_t *fast = malloc((n ? n : 1) * sizeof *fast), *fit = malloc((n ? n : 1) * sizeof *fit);
    if (!tb || !fast || !fit || row_index_init(&ix, &key, in->rows, n)) {
        free(fast);
        free(fit);
        d->failed = 1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        fast[i] = fit[i] = ROW_NONE;
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &in->rows[i];
        if (!candidate(r))
            continue;
        size_t lead = row_index_add(&ix, i);
        if (fast[lead] == ROW_NONE || r->step_ms_median < in->rows[fast[lead]].step_ms_median)
            fast[lead] = i;
        int fits = in->mem_cap < 0 ||
                   (r->mem_need_bytes >= 0 && r->mem_need_bytes <= in->mem_cap);
        if (fits &&
            (fit[lead] == ROW_NONE || r->step_ms_median < in->rows[fit[lead]].step_ms_median))
            fit[lead] = i;
    }
    /* in the report's order (effective batch ascending, then the file's),
     * each line once: at the first group that reaches it */
    for (size_t k = 0; k < ng; k++)
        for (size_t j = 0; j < g[k].n; j++) {
            size_t lead = row_index_find(&ix, &in->rows[g[k].idx[j]]);
            if (lead == ROW_NONE || fast[lead] == ROW_NONE)
                continue;
            line(in, fit[lead] == ROW_NONE ? NULL : &in->rows[fit[lead]],
                 &in->rows[fast[lead]], modes, tb, d);
            fast[lead] = ROW_NONE; /* said */
        }
    row_index_free(&ix);
    free(fast);
    free(fit);
}
