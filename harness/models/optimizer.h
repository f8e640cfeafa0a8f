/* The optimizers every model steps with: an update over the fp32 parameter
 * vector (model_optimizer_step, or model_optimizer_range per range of it),
 * so a model never sees them. */
#ifndef ACCUBENCH_OPTIMIZER_H
#define ACCUBENCH_OPTIMIZER_H

#include <stddef.h>

#include "axis.h"

typedef enum optimizer_kind { OPT_ADAMW = 0, OPT_SGD = 1, OPT_COUNT } optimizer_kind;

/* When the update runs (the arithmetic is the same, to the bit):
 * step: over the whole vector once the window's last micro-batch is done.
 * backward: on each range of the vector as the window's last backward
 *   finishes it (model_grad_ready), while that range's gradient and
 *   weights are still in cache; the rest after the backward. A step on
 *   several devices (the all-reduce must come first) or captured as a
 *   graph runs at `step`. */
typedef enum optimizer_at { OPT_AT_STEP = 0, OPT_AT_BACKWARD = 1, OPT_AT_COUNT } optimizer_at;

/* An optimizer's row: its name, and the state it keeps beside the
 * weights, which the memory need counts from here (model_memory_need,
 * and a shard's slice of it: shard_memory_need). */
typedef struct optimizer_info {
    axis_row head;
    int moments;          /* fp32 values kept per weight (AdamW's m and v: 2) */
    size_t hparams_bytes; /* the step's numbers, kept on the device where moments are */
} optimizer_info;

typedef struct optimizer_config {
    optimizer_kind kind;
    float lr, beta1, beta2, eps, weight_decay;
    optimizer_at at;
} optimizer_config;

/* The two tables, one row each (names "adamw", "sgd" and "step",
 * "backward": the CLI's, the profiles' and the metadata's spelling; parsed
 * and listed through axis.h). The update's arithmetic is the kind's. */
extern const axis optimizer_axis;
extern const axis optimizer_at_axis;
#define optimizer_name(k) axis_name(&optimizer_axis, (k))

/* The row of kind k; k must be a valid kind. */
const optimizer_info *optimizer_info_of(optimizer_kind k);

/* The bytes of state k keeps for weights of weight_bytes (fp32): its
 * moments and their step's numbers, 0 for an optimizer with none;
 * MEMORY_NEED_MAX with *saturated set where that would pass it. */
size_t optimizer_state_bytes(optimizer_kind k, size_t weight_bytes, int *saturated);
#define optimizer_at_name(a) axis_name(&optimizer_at_axis, (a))

#endif
