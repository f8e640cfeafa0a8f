/* Activation recomputation, an axis of the sweep: one table (recompute.c),
 * a row per way of trading memory for FLOPs. `none` keeps every
 * activation the backward reads; `gelu` keeps the GELU's input only and
 * recomputes its output in the backward (llm.c's -r 1); `block` keeps each
 * block's input only and recomputes the block's forward inside its
 * backward (activation checkpointing). Which rows a model kind can run is
 * a column of its row in the model registry (model_kind.recompute_caps),
 * never a check of a name. It lives in util because the results side
 * reads the CSV's recompute column by these names.
 *
 * Adding one: its row in RECOMPUTES, and the kinds that can run it set
 * its bit. */
#ifndef ACCUBENCH_RECOMPUTE_H
#define ACCUBENCH_RECOMPUTE_H

#include "axis.h"

typedef int recompute; /* a row of recompute_axis */

/* Every row has a name in code: the model kinds act on each. */
enum { RECOMPUTE_NONE = 0, RECOMPUTE_GELU, RECOMPUTE_BLOCK, RECOMPUTE_ROWS };

/* A kind's capability: the rows it can run, one bit each. */
#define RECOMPUTE_BIT(r) (1u << (unsigned)(r))
#define RECOMPUTE_ALL ((1u << RECOMPUTE_ROWS) - 1u)

/* FLOPs counted for one GELU element recomputed: the tanh approximation's
 * multiplies and adds (x^3, two scalings, two adds, the tanh, the halving
 * and the product with x). flops_per_step counts matrix products only;
 * this keeps gelu's recomputation from reading as free. */
#define RECOMPUTE_GELU_FLOPS 8.0

extern const axis recompute_axis;
#define recompute_name(r) axis_name(&recompute_axis, (r))

#endif
