/* One config in motion: a model, its data, one split and one execution
 * mode, stepping window after window. */
#ifndef ACCUBENCH_STEP_H
#define ACCUBENCH_STEP_H

#include "comm.h"
#include "dataset.h"
#include "model.h"
#include "modes.h"
#include "split.h"
#include "sync_modes.h"

typedef struct step_runner {
    model *m;
    dataset *d;
    split sp;
    exec_mode mode;
    activations acts;      /* preallocated unless the mode allocates per micro */
    float *loss_sum;       /* device float */
    void *graphs[DATASET_MAX_BUFFERS]; /* graph mode: one per input buffer */
    int next_buffer;
    int steps_done;
    /* Data parallel (dp_step.c): the communicator (NULL: one process, no
     * all-reduce), when it all-reduces, and the last backward's buckets. */
    comm *comm;
    sync_mode sync;
    int dp_buckets;       /* all-reduces of the last window's last backward */
    /* The optimizer runs on each range the last backward reports final
     * (optimizer.h: OPT_AT_BACKWARD, one device, not a graph). */
    int optimize_in_backward;
    /* The last backward's reports: floats [0, this) of the gradient are
     * not yet final. */
    size_t unreported;
} step_runner;

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

/* Takes the range [offset, offset + count) the backward reports final:
 * BK_OK when it ends where the ranges before it began (s->unreported, which
 * moves to offset), else BK_ERROR with the reason in the backend. */
int step_take_range(step_runner *s, size_t offset, size_t count);

/* One optimizer step on the next input buffer, in the runner's mode, inside
 * a "step" range. Does not wait for the device. */
int step_run(step_runner *s);

/* The forward and backward passes of one window on buffer `buf`, gradients
 * zeroed first, no optimizer step: what the correctness check compares. */
int step_window(step_runner *s, int buf);

/* One forward+backward pass of a single micro-batch (no zeroing, no
 * optimizer): the unit of the naive K x pass prediction. */
int step_single_pass(step_runner *s);

#endif
