/* The trace pass: a few steps of the config with activity recording on,
 * after its timed pass (recording perturbs timing), analysed into the trace
 * columns of its row.
 *
 * Each step runs through step_run, which brackets it in a "step" range, and
 * is followed by a device sync, so that no step's device work overlaps the
 * next step's and the analysis can tell them apart. The recorder is stamped
 * with the step number before each step; CUPTI records come back unstamped
 * and are assigned to steps through their host calls (trace_analysis.h).
 *
 * Sources: with a collector (CUPTI on a GPU), the device's own records plus
 * the host's NVTX ranges; without one, the CPU backend's per-dispatch records
 * (dispatch.h). A GPU backend without a collector (--no-cupti, or CUPTI
 * unavailable) gets no trace numbers: its dispatch times would be host
 * enqueue times, not device work. */
#include "trace_pass.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"
#include "trace.h"
#include "trace_analysis.h"
#include "trace_export.h"

/* Records kept per pass, at 48 bytes each: 24 MiB at most. What does not fit
 * is counted into cupti_dropped. */
#define TRACE_PASS_MAX_RECORDS ((size_t)1 << 19)

/* Appends to the row's note ("; " between remarks). */
static void add_note(result_row *row, const char *fmt, ...)
{
    size_t used = strlen(row->note);
    if (used && used + 2 < sizeof row->note) {
        memcpy(row->note + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note + used, sizeof row->note - used, fmt, ap);
    va_end(ap);
}

/* Says so when a requested trace file cannot be written (no trace). */
static void not_written(const trace_pass_options *o)
{
    if (o->trace_file)
        fprintf(stderr, "accubench: --trace %s not written: this config has no trace "
                        "(see its note)\n", o->trace_file);
}

static void fill_row(const trace_summary *t, uint64_t dropped, result_row *row)
{
    row->kernels_per_step = t->kernels_per_step;
    row->launch_calls_per_step = t->launches_per_step;
    row->gpu_busy_ms = t->busy_ms;
    row->gpu_busy_pct = t->busy_pct;
    row->idle_host_wait_pct = t->idle_host_wait_pct;
    row->idle_gap_pct = t->idle_gap_pct;
    row->launch_latency_us_median = t->launch_latency_us_median;
    row->launch_latency_us_p90 = t->launch_latency_us_p90;
    row->cupti_step_ms = t->wall_ms;
    row->cupti_dropped = (int64_t)dropped;
    row->idle_ms = t->idle_ms;
    double phased = t->phase_ms[TRACE_PHASE_FORWARD] + t->phase_ms[TRACE_PHASE_BACKWARD] +
                    t->phase_ms[TRACE_PHASE_OPTIMIZER];
    if (phased > 0 || !(t->busy_ms > 0)) {
        row->forward_ms = t->phase_ms[TRACE_PHASE_FORWARD];
        row->backward_ms = t->phase_ms[TRACE_PHASE_BACKWARD];
        row->optimizer_ms = t->phase_ms[TRACE_PHASE_OPTIMIZER];
    } else {
        /* Device work but none issued inside a forward/backward/optimizer
         * range: a graph replay, launched as a whole from the step range.
         * No split rather than a split of zeros. */
        add_note(row, "no forward/backward/optimizer split (work not issued inside "
                      "those ranges, e.g. a graph replay)");
    }
    if (dropped)
        add_note(row, "trace pass lost %llu activity records", (unsigned long long)dropped);
}

int trace_pass_run(step_runner *s, const trace_pass_options *o, result_row *row)
{
    backend *b = s->m->b;
    collector *c = o->collector;
    if (o->steps <= 0)
        return BK_OK;
    if (!c && !(b->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK)) {
        add_note(row, "trace pass skipped: no activity collector on the %s backend",
                 b->name);
        not_written(o);
        return BK_OK;
    }

    trace_recorder rec;
    if (trace_recorder_init(&rec, TRACE_PASS_MAX_RECORDS)) {
        snprintf(b->error, sizeof b->error, "out of host memory for the trace pass");
        return BK_OOM;
    }
    unsigned long long dropped_before = c ? c->dropped : 0;
    if (c && c->ops->start(c) != BK_OK) {
        /* The collector failing costs the trace columns, not the row. */
        add_note(row, "trace pass skipped: %s", c->error);
        not_written(o);
        trace_recorder_free(&rec);
        return BK_OK;
    }
    if (!c)
        b->recorder = &rec;
    ranges_attach_recorder(&rec);

    int rc = BK_OK;
    for (int i = 0; i < o->steps && !rc; i++) {
        rec.current_step = i;
        rc = step_run(s);
        uint64_t t0 = trace_now_ns();
        if (!rc)
            rc = b->ops->sync(b);
        /* The host's wait closes the step's wall-clock window. */
        trace_add(&rec, TRACE_SYNC, "trace pass sync", t0, trace_now_ns(), 0, 0);
    }
    rec.current_step = -1;
    ranges_attach_recorder(NULL);
    b->recorder = NULL;
    int crc = c ? c->ops->stop(c, &rec) : BK_OK;
    if (rc) {
        trace_recorder_free(&rec);
        return rc;
    }
    if (crc) {
        add_note(row, "trace pass failed: %s", c->error);
        not_written(o);
        trace_recorder_free(&rec);
        return BK_OK;
    }

    trace_summary *t = malloc(sizeof *t);
    if (!t || trace_analyse(rec.records, rec.count, NULL, t) != 0) {
        free(t);
        trace_recorder_free(&rec);
        snprintf(b->error, sizeof b->error, "out of host memory analysing the trace");
        return BK_OOM;
    }
    uint64_t dropped = rec.dropped + (c ? c->dropped - dropped_before : 0);
    fill_row(t, dropped, row);
    free(t);

    if (o->trace_file) {
        char label[RESULT_TEXT_LEN * 2], why[400];
        snprintf(label, sizeof label, "%s %s %s %lldx%lld %s %s", row->backend, row->model,
                 row->dtype, (long long)row->micro_batch, (long long)row->accum_steps,
                 row->mode, row->reduction);
        if (trace_export_chrome(o->trace_file, rec.records, rec.count, -1, label, why,
                                sizeof why) != 0) {
            fprintf(stderr, "accubench: %s\n", why);
            add_note(row, "trace file not written: %s", why);
        } else if (o->file_written) {
            *o->file_written = 1;
        }
    }
    trace_recorder_free(&rec);
    return BK_OK;
}
