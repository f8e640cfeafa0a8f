/* A first trace pass: per-dispatch records on the CPU, kernels counted per
 * step. (The full analysis lives in trace_analysis.c.) */
#include "trace_pass.h"

#include <math.h>
#include <string.h>

#include "dispatch.h"
#include "ranges.h"

int trace_pass_run(step_runner *s, const trace_pass_options *o, result_row *row)
{
    backend *b = s->m->b;
    trace_recorder rec;
    if (trace_recorder_init(&rec, 1u << 20)) {
        snprintf(b->error, sizeof b->error, "out of host memory for the trace");
        return BK_OOM;
    }
    b->recorder = &rec;
    ranges_attach_recorder(&rec);
    uint64_t t0 = trace_now_ns();
    int rc = BK_OK;
    for (int i = 0; i < o->steps && !rc; i++) {
        rec.current_step = i;
        rc = step_run(s);
        if (!rc)
            rc = b->ops->sync(b);
    }
    uint64_t t1 = trace_now_ns();
    ranges_attach_recorder(NULL);
    b->recorder = NULL;
    if (!rc && o->steps > 0) {
        size_t kernels = 0;
        for (size_t i = 0; i < rec.count; i++)
            kernels += rec.records[i].kind == TRACE_KERNEL;
        row->kernels_per_step = (double)kernels / o->steps;
        row->launch_calls_per_step = row->kernels_per_step;
        row->cupti_step_ms = (double)(t1 - t0) / 1e6 / o->steps;
        row->cupti_dropped = (int64_t)rec.dropped;
    }
    trace_recorder_free(&rec);
    return rc;
}
