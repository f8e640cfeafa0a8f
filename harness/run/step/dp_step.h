/* The gradient all-reduce of a data-parallel step, at the points of the
 * window the sync mode's row names (sync_modes.h): after each micro-batch,
 * once after the last, or in buckets during the last backward. step.c calls
 * these around each micro-batch when its runner has a communicator. */
#ifndef ACCUBENCH_DP_STEP_H
#define ACCUBENCH_DP_STEP_H

#include "step_runner.h"

/* Before micro-batch k of a window. */
int dp_micro_begin(step_runner *s, int k);
/* After micro-batch k (rc: how it went); always undoes what begin set. */
int dp_micro_end(step_runner *s, int k, int rc);

/* Sharded (the model in slices, model_shard): after the update of this
 * rank's slice, the weights all-gathered (and the bf16 copy made again);
 * after a window, the gradient all-gathered, for the check that reads it
 * whole. Nothing unsharded. */
int dp_after_update(step_runner *s);
int dp_gather_gradient(step_runner *s);

#endif
