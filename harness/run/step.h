/* One config in motion: a model, its data, one split and one execution
 * mode, stepping window after window (the runner: step_runner.h). */
#ifndef ACCUBENCH_STEP_H
#define ACCUBENCH_STEP_H

#include "step_runner.h"


/* Prepares the split (scales, activations, graphs). BK_* status; the reason
 * is in m->b->error. */
int step_runner_init(step_runner *s, model *m, dataset *d, const split *sp,
                     exec_mode mode, reduction r);
/* The same for one rank of a data-parallel run: the gradient all-reduced
 * over c as `sync` says (c NULL: step_runner_init). The data must be
 * sharded over c's ranks (dataset_set_shard). */
int step_runner_init_dp(step_runner *s, model *m, dataset *d, const split *sp,
                        exec_mode mode, reduction r, comm *c, sync_mode sync);
void step_runner_free(step_runner *s);
/* Takes the data back for this runner after another runner of the same
 * data stepped (its split's loss scales): several configs set up at once
 * and stepped in turn (rounds.h). BK_* status. */
int step_runner_resume(step_runner *s);

/* The NVTX range of a step, and of a step whose time is a sample of the
 * timed pass: a profiler that must see the measured steps alone (ncu in
 * scripts/check_gpu_kernels.sh) filters on the second, so the warm-up,
 * the trace pass and the checks' steps stay out of its count. */
#define STEP_RANGE "step"
#define STEP_RANGE_TIMED "timed step"

/* One optimizer step on the next input buffer, in the runner's mode, inside
 * a STEP_RANGE range. Does not wait for the device. */
int step_run(step_runner *s);
/* The same inside a STEP_RANGE_TIMED range: the timed pass's samples. */
int step_run_timed(step_runner *s);

/* The forward and backward passes of one window on buffer `buf`, gradients
 * zeroed first, no optimizer step: what the correctness check compares. */
int step_window(step_runner *s, int buf);

/* One forward+backward pass of a single micro-batch (no zeroing, no
 * optimizer): the unit of the naive K x pass prediction. */
int step_single_pass(step_runner *s);

#endif
