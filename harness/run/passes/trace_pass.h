/* The trace pass: after the timed pass, a few more steps of the same config
 * with activity recording on (CUPTI on a GPU, per-dispatch records on the
 * CPU), analysed into a summary, as the timed pass returns its step_timing
 * (measure.h); config_run.c turns it into the trace columns of the row. */
#ifndef ACCUBENCH_TRACE_PASS_H
#define ACCUBENCH_TRACE_PASS_H

#include <stdint.h>

#include "collector.h"
#include "step.h"
#include "trace_analysis.h"

typedef struct trace_pass_options {
    int steps;                /* steps recorded and analysed */
    collector *collector;     /* NULL: record CPU dispatches instead */
    const char *trace_file;   /* non-NULL: export one step as Chrome JSON */
    const char *trace_label;  /* what the trace file calls the config */
    int *file_written;        /* set to 1 once trace_file is written, -1 when writing
                                 it failed (may be NULL) */
} trace_pass_options;

typedef struct trace_pass_summary {
    int analysed;         /* the steps were recorded and analysed: trace and dropped hold */
    trace_summary trace;  /* what the device did per step (trace_analysis.h) */
    uint64_t dropped;     /* activity records lost, by the recorder and the collector */
    /* Why there are no numbers (the pass was skipped or failed), or what else
     * went wrong (the trace file was not written); "" when nothing. */
    char note[320];
} trace_pass_summary;

/* Fills *out (cleared first: not analysed, no note); BK_* status. A pass
 * that cannot record (no collector, the collector failing) is not an error:
 * BK_OK, not analysed, and the reason in out->note. */
int trace_pass_run(step_runner *s, const trace_pass_options *o, trace_pass_summary *out);

#endif
