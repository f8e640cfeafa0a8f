/* The optimizers every model steps with: an update over the fp32 parameter
 * vector (model_optimizer_step, or model_optimizer_range per range of it),
 * so a model never sees them. */
#ifndef ACCUBENCH_OPTIMIZER_H
#define ACCUBENCH_OPTIMIZER_H

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
#define optimizer_at_name(a) axis_name(&optimizer_at_axis, (a))

#endif
