/* The trace pass: a few steps of the config with activity recording on,
 * after its timed pass (recording perturbs timing), analysed into a summary
 * that config_run.c turns into the trace columns of its row.
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

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ranges.h"
#include "trace.h"
#include "trace_analysis.h"
#include "trace_export.h"

/* Records kept per pass, at 48 bytes each: 24 MiB at most. What does not fit
 * is counted into cupti_dropped. */
#define TRACE_PASS_MAX_RECORDS ((size_t)1 << 19)

/* Says why the pass has no numbers, or what else went wrong. */
static void say_trace_problem(trace_pass_summary *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->note, sizeof out->note, fmt, ap);
    va_end(ap);
}

/* Says so when a requested trace file cannot be written (no trace). */
static void not_written(const trace_pass_options *o)
{
    if (o->trace_file)
        fprintf(stderr, "accubench: --trace %s not written: this config has no trace "
                        "(see its note)\n", o->trace_file);
}

/* The recorded steps: each followed by a device sync, whose wait closes
 * the step's wall-clock window. BK_* status. */
static int recorded_steps(step_runner *s, int steps, trace_recorder *rec)
{
    backend *b = s->m->b;
    int rc = BK_OK;
    for (int i = 0; i < steps && !rc; i++) {
        rec->current_step = i;
        rc = step_run(s);
        uint64_t t0 = trace_now_ns();
        if (!rc)
            rc = b->ops->sync(b);
        trace_add(rec, TRACE_SYNC, "trace pass sync", t0, trace_now_ns(), 0, 0);
    }
    rec->current_step = -1;
    return rc;
}

/* --trace: the pass's records as Chrome JSON, once. */
static void export_trace(const trace_pass_options *o, const trace_recorder *rec,
                         trace_pass_summary *out)
{
    char why[400];
    if (trace_export_chrome(o->trace_file, rec->records, rec->count, -1,
                            o->trace_label ? o->trace_label : "", why, sizeof why) != 0) {
        fprintf(stderr, "accubench: %s\n", why);
        say_trace_problem(out, "trace file not written: %s", why);
        if (o->file_written)
            *o->file_written = -1; /* said once: the next configs do not retry */
    } else if (o->file_written) {
        *o->file_written = 1;
    }
}

/* The steps recorded by the collector c (or the backend's own dispatches
 * where c is NULL); *collected is the collector's status. BK_* status. */
static int record_traced_steps(step_runner *s, const trace_pass_options *o, trace_recorder *rec,
                               int *collected)
{
    backend *b = s->m->b;
    collector *c = o->collector;
    if (!c)
        b->recorder = rec;
    ranges_attach_recorder(rec);
    int rc = recorded_steps(s, o->steps, rec);
    ranges_attach_recorder(NULL);
    b->recorder = NULL;
    *collected = c ? c->ops->stop(c, rec) : BK_OK;
    return rc;
}

int trace_pass_run(step_runner *s, const trace_pass_options *o, trace_pass_summary *out)
{
    backend *b = s->m->b;
    collector *c = o->collector;
    memset(out, 0, sizeof *out);
    if (o->steps <= 0)
        return BK_OK;
    if (!c && !(b->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK)) {
        say_trace_problem(out, "trace pass skipped: no activity collector on the %s backend",
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
    int collected = BK_OK, rc = BK_OK;
    if (c && c->ops->start(c) != BK_OK) {
        /* The collector failing costs the trace columns, not the row. */
        say_trace_problem(out, "trace pass skipped: %s", c->error);
        not_written(o);
    } else if (!(rc = record_traced_steps(s, o, &rec, &collected)) && collected) {
        say_trace_problem(out, "trace pass failed: %s", c->error);
        not_written(o);
    } else if (!rc && trace_analyse(rec.records, rec.count, NULL, &out->trace) != 0) {
        snprintf(b->error, sizeof b->error, "out of host memory analysing the trace");
        rc = BK_OOM;
    } else if (!rc) {
        out->analysed = 1;
        out->dropped = rec.dropped + (c ? c->dropped - dropped_before : 0);
        if (o->trace_file)
            export_trace(o, &rec, out);
    }
    trace_recorder_free(&rec);
    return rc;
}
