/* The trace pass: after the timed pass, a few more steps of the same config
 * with activity recording on (CUPTI on a GPU, per-dispatch records on the
 * CPU), analysed into the trace columns of the row. */
#ifndef ACCUBENCH_TRACE_PASS_H
#define ACCUBENCH_TRACE_PASS_H

#include "collector.h"
#include "result_row.h"
#include "step.h"

typedef struct trace_pass_options {
    int steps;                /* steps recorded and analysed */
    collector *collector;     /* NULL: record CPU dispatches instead */
    const char *trace_file;   /* non-NULL: export one step as Chrome JSON */
    int *file_written;        /* set to 1 once trace_file is written (may be NULL) */
} trace_pass_options;

/* Fills the trace columns of row; BK_* status. */
int trace_pass_run(step_runner *s, const trace_pass_options *o, result_row *row);

#endif
