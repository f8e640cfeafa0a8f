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
#include "sweep_state.h"
#include "trace_pass.h"

/* Runs config c on model m and its data d (both made for it by the sweep)
 * and fills the measured columns and the status of r (its config columns
 * are filled already). With s->comm, on every rank of it, the gradient
 * all-reduced as c's sync row says. */
void config_run(sweep *s, model *m, dataset *d, const config *c, result_row *r);

/* The timed pass's columns of r, and a note naming the stopping condition
 * an adaptive pass did not meet (the noise target, min-samples). */
void row_fill_timing(result_row *r, const step_timing *t, double peak_tflops,
                     const measure_options *mo);

void row_set_status(result_row *r, const char *status, const char *note);
/* The trace columns of r from the trace pass's summary (when it was
 * analysed), and its remarks appended to the note. */
void row_fill_trace(result_row *r, const trace_pass_summary *t);
/* The row's status for a failed backend call: oom, skipped (unsupported)
 * or error, with the backend's reason. */
void row_status_from(result_row *r, int rc, const backend *b);

#endif
