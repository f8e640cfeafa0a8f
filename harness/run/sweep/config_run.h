/* One config of the sweep, start to finish: the step-time guard, the
 * gradient check, the timed pass, the single-pass timing and the trace
 * pass, into one result row with its status: each pass returns what it
 * measured, and the row is filled here. */
#ifndef ACCUBENCH_CONFIG_RUN_H
#define ACCUBENCH_CONFIG_RUN_H

#include "config.h"
#include "dataset.h"
#include "measure.h"
#include "model.h"
#include "result_row.h"
#include "split.h"
#include "step.h"
#include "sweep_state.h"
#include "trace_pass.h"

/* Runs config c on model m and its data d (both made for it by the sweep)
 * and fills the measured columns and the status of r (its config columns
 * are filled already). With s->comm, on every rank of it, the gradient
 * all-reduced as c's sync row says. */
void config_run(sweep *s, model *m, dataset *d, const config *c, result_row *r);

/* config_run in its three parts, for configs timed together in rounds
 * (rounds.h). config_prepare sets up c's runner on m and d and runs what
 * comes before the timing (the step-time guard, the gradient check, the
 * noise scale, the curves): 1 when the runner is live and the config is to
 * be timed, 0 when r is final (its status says why; the runner is freed).
 * *runner_bytes: what setting the runner up allocated (its activations,
 * graphs, loss): what it holds while it stays set up. `checked`: the row
 * of c's first arm where c is its second (an A/A check), prepared before
 * it; c takes its checks rather than run them again (NULL: c runs its own). */
int config_prepare(sweep *s, model *m, dataset *d, const config *c, step_runner *run,
                   result_row *r, size_t *runner_bytes, const result_row *checked);
/* A prepared config timed alone, then config_finish. */
void config_time_prepared(sweep *s, model *m, dataset *d, const config *c, step_runner *run,
                          result_row *r);
/* Sets up c's runner again (after config_prepare's was let go), on every
 * rank of s->comm alike, on the weights as they are. BK_* status. */
int config_runner_setup(sweep *s, model *m, dataset *d, const config *c, step_runner *run);
/* The memory of a config's timed steps: `peak` the bytes the harness
 * allocated for the step at most (its own, other runners' left out),
 * `held` what the device held at most meanwhile (bk_held_peak, less the
 * other runners' bytes too; -1 where not measured). */
typedef struct step_memory {
    int64_t peak, held;
} step_memory;
/* Opens the window of a timed stretch; step_memory_close folds it into m
 * (the largest of every stretch), `others` the bytes other runners hold. */
void step_memory_open(backend *b);
void step_memory_close(backend *b, size_t others, step_memory *m);
/* With the step timed into t (beside the marks taken before and after the
 * timed steps, and its memory): the single-pass timing and the timed
 * columns of r. BK_* status. */
int config_fill_timed(sweep *s, model *m, const dataset *d, const config *c, step_runner *run,
                      result_row *r, step_timing *t, const watch_mark *before,
                      const watch_mark *after, const step_memory *mem);
/* After the timing (rc its status): the counting and trace passes, the
 * row's status, and the runner freed. */
void config_finish(sweep *s, const config *c, step_runner *run, result_row *r, int rc);
/* The config's NVTX range ("config S fp32 16x4 async sum"); range_pop ends it. */
void config_range_push(const config *c);
/* The timing options of c (its budget, the sweep's stop flag). */
measure_options config_timing_options(const sweep *s, const config *c);

/* The timed pass's columns of r, and a note naming the stopping condition
 * an adaptive pass did not meet (the noise target, min-samples). */
void row_fill_timing(result_row *r, const step_timing *t, double peak_tflops,
                     const measure_options *mo);

void row_set_status(result_row *r, const char *status, const char *note);
/* The trace columns of r from the trace pass's summary (when it was
 * analysed), and its remarks appended to the note. */
void row_fill_trace(result_row *r, const trace_pass_summary *t);
/* The row's status for a failed backend call: oom, skipped (unsupported)
 * or error, with the backend's reason (or `why`, said before). */
void row_status_from(result_row *r, int rc, const backend *b);
void row_status_said(result_row *r, int rc, const char *why);

#endif
