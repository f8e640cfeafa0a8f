/* `accubench run`: the sweep over models, effective batches, splits, modes
 * and reductions, one CSV row per config. */
#ifndef ACCUBENCH_SWEEP_H
#define ACCUBENCH_SWEEP_H

#include "backend.h"
#include "collector.h"
#include "comm.h"
#include "options.h"
#include "run_metadata.h"

/* The device the program opened for the sweep (bench/ owns the backend
 * table); the sweep uses it and leaves closing it to the caller. */
typedef struct sweep_device {
    backend *b;
    collector *col;           /* the activity collector, or NULL */
    const char *trace_source; /* what the trace pass records, or why nothing */
    const char *note;         /* how `auto` chose the backend; "" when named */
    const char *dtype_note;   /* how the dtype was chosen (--dtype auto or asked) */
    const char *optimizer_note; /* where the optimizer runs, and why */
    comm *world;              /* data parallel: every rank mpirun started, on
                               * this backend's engine; NULL: one process */
} sweep_device;

/* Exit codes: 0 every config ran (oom/skipped rows included), 1 a config
 * failed or its gradient check did (or --trace was not written), 2 bad
 * input or a failed write, 128 + the signal when interrupted by SIGINT,
 * SIGTERM, SIGHUP or SIGPIPE (130, 143, 129, 141: the rows measured so far
 * stay on disk). The output paths are checked
 * (run_outputs.h) before anything is measured. */
int sweep_run(const run_options *o, const sweep_device *dev, const run_context *ctx);

#endif
