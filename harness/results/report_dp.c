/* The report's sentences about data parallelism: for each config run on
 * more than one device in several sync modes, what each mode's step cost
 * against the one that moved the most bytes (per micro-batch, the whole
 * gradient K times; the first in the file when they all move the same): what
 * deferring the all-reduce to the window, or overlapping it with the last
 * backward, saved at that K. Every figure is read from the rows. */
#include <string.h>

#include "report_parts.h"

/* Rows of the same config that differ in their sync mode alone. */
static int same_but_sync(const result_row *a, const result_row *b)
{
    return result_ran(a) && result_ran(b) && b->devices > 1 && b->sync[0] &&
           result_same_config_but(a, b, "sync");
}

void report_dp_findings(const report_input *in, doc *d)
{
    size_t n = in->t->rows;
    for (size_t i = 0; i < n; i++) {
        const result_row *r = &in->rows[i];
        if (!result_ran(r) || r->devices < 2 || !r->sync[0])
            continue;
        /* Once per set: at its first row in the file. */
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = !same_but_sync(&in->rows[j], r);
        if (!first)
            continue;
        /* The baseline: the mode that moves the most bytes a step. */
        const result_row *base = r;
        size_t members = 0;
        for (size_t j = i; j < n; j++) {
            const result_row *o = &in->rows[j];
            if (o != r && !same_but_sync(r, o))
                continue;
            members++;
            if (o->allreduce_bytes_per_step > base->allreduce_bytes_per_step)
                base = o;
        }
        if (members < 2)
            continue;
        char text[1400];
        size_t used = (size_t)snprintf(
            text, sizeof text,
            "At K=%lld on %lld devices (model %s, effective batch %lld, %s): %s sync makes %s "
            "all-reduce%s a step and takes %s ms a step, %s ms of it waiting for communication",
            (long long)base->accum_steps, (long long)base->devices, base->model,
            (long long)base->effective_batch, rp_split(base).s, base->sync,
            rp_count(base->allreduce_calls_per_step).s,
            base->allreduce_calls_per_step == 1 ? "" : "s", rp_num(base->step_ms_median, 4).s,
            rp_num(base->comm_exposed_ms, 3).s);
        for (size_t j = i; j < n && used < sizeof text; j++) {
            const result_row *o = &in->rows[j];
            if (o == base || (o != r && !same_but_sync(r, o)))
                continue;
            double saved = base->step_ms_median - o->step_ms_median;
            used += (size_t)snprintf(
                text + used, sizeof text - used,
                "; %s sync (%s all-reduce%s, %s ms exposed) takes %s ms: %s %s ms (%s%%) a step",
                o->sync, rp_count(o->allreduce_calls_per_step).s,
                o->allreduce_calls_per_step == 1 ? "" : "s", rp_num(o->comm_exposed_ms, 3).s,
                rp_num(o->step_ms_median, 4).s, saved >= 0 ? "it saves" : "it costs",
                rp_num(saved >= 0 ? saved : -saved, 3).s,
                rp_num(100 * (saved >= 0 ? saved : -saved) / base->step_ms_median, 2).s);
        }
        doc_bullet(d, "%s.", text);
    }
}
