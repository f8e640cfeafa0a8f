/* The state of one config in motion (step.h steps it; dp_step.h adds the
 * gradient all-reduce of a data-parallel step to it), and the order in
 * which a backward reports gradient ranges, which both hooks check. Its own
 * header so that step.c and dp_step.c each include it and neither the
 * other. */
#ifndef ACCUBENCH_STEP_RUNNER_H
#define ACCUBENCH_STEP_RUNNER_H

#include <stddef.h>

#include "comm.h"
#include "dataset.h"
#include "model.h"
#include "modes.h"
#include "shard_modes.h"
#include "split.h"
#include "sync_modes.h"

typedef struct step_runner {
    model *m;
    dataset *d;
    split sp;
    exec_mode mode;
    reduction reduction;   /* how the data's loss scales were set for it */
    activations acts;      /* preallocated unless the mode allocates per micro */
    float *loss_sum;       /* device float */
    void *graphs[DATASET_MAX_BUFFERS]; /* graph mode: one per input buffer */
    int next_buffer;
    int steps_done;
    /* Data parallel (dp_step.c): the communicator (NULL: one process, no
     * all-reduce), when it all-reduces, and the last backward's buckets. */
    comm *comm;
    sync_mode sync;
    /* What each rank keeps (shard_modes.h): with the model cut in slices
     * (model_shard), the gradient is reduce-scattered, not all-reduced,
     * and the weights all-gathered after each update. */
    shard_mode shard;
    int dp_buckets;       /* all-reduces of the last window's last backward */
    /* The optimizer runs on each range the last backward reports final
     * (optimizer.h: OPT_AT_BACKWARD, one device, not a graph). */
    int optimize_in_backward;
    /* The last backward's reports: floats [0, this) of the gradient are
     * not yet final. */
    size_t unreported;
    /* The accumulated gradient is held in bf16 (the model's grad_dtype,
     * grad_dtype.h): rounded after each micro-batch's backward, and in
     * the optimizer's backward each range before its update. */
    int round_bf16;
} step_runner;

/* Takes the range [offset, offset + count) the backward reports final:
 * BK_OK when it ends where the ranges before it began (s->unreported, which
 * moves to offset), else BK_ERROR with the reason in the backend. */
int step_take_range(step_runner *s, size_t offset, size_t count);

#endif
