/* How data parallel keeps the training state across its ranks (ZeRO,
 * Rajbhandari et al. 2020), an axis of the sweep: one table (shard.c),
 * whose columns the model's slices (model_shard) and the step (dp_step.c)
 * read. No code checks a shard mode by name. It lives in util because the
 * results side reads the CSV's shard column by these names.
 *
 * none: every rank holds everything and all-reduces the gradient.
 * optimizer (ZeRO-1): each rank keeps its slice of the optimizer state;
 *   the gradient is reduce-scattered when the sync mode would all-reduce
 *   it, each rank updates its slice, and the weights are all-gathered.
 * gradients (ZeRO-2): each rank keeps its slice of the accumulated
 *   gradient too, so the gradient is reduce-scattered after every
 *   micro-batch whatever the sync mode. */
#ifndef ACCUBENCH_SHARD_H
#define ACCUBENCH_SHARD_H

#include "axis.h"

typedef int shard_mode; /* a row of shard_axis */

/* The rows with a name in code: SHARD_NONE is the default. */
enum { SHARD_NONE = 0, SHARD_OPTIMIZER, SHARD_GRADIENTS };

typedef struct shard_info {
    axis_row head;
    /* The optimizer state is cut in slices over the ranks (shard_slice.h);
     * the gradient is reduce-scattered and the weights all-gathered. A
     * mode that slices needs ranks under mpirun. */
    int slices_state;
    /* The accumulated gradient is kept as this rank's slice alone: it is
     * reduce-scattered after every micro-batch, whatever --sync says. */
    int gradient_slice;
} shard_info;

extern const axis shard_axis;
#define SHARD_COUNT (shard_axis.count)
#define shard_name(s) axis_name(&shard_axis, (s))

const shard_info *shard_info_of(shard_mode s);

#endif
