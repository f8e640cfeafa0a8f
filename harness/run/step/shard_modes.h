/* How data parallel keeps the training state across its ranks (ZeRO,
 * Rajbhandari et al. 2020): one table (shard_modes.c), whose columns the
 * model's slices (model_shard) and the step (dp_step.c) read. No code
 * checks a shard mode by name.
 *
 * none: every rank holds everything and all-reduces the gradient.
 * optimizer (ZeRO-1): each rank keeps its slice of the optimizer state;
 *   the gradient is reduce-scattered when the sync mode would all-reduce
 *   it, each rank updates its slice, and the weights are all-gathered.
 * gradients (ZeRO-2): each rank keeps its slice of the accumulated
 *   gradient too, so the gradient is reduce-scattered after every
 *   micro-batch whatever the sync mode. */
#ifndef ACCUBENCH_SHARD_MODES_H
#define ACCUBENCH_SHARD_MODES_H

#include <stddef.h>

#include "axis.h"
#include "dtype_table.h"
#include "model_need.h"

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

/* Whether micro-batch k of a window of `accum` is followed by a gradient
 * collective (an all-reduce, or a reduce-scatter where the row slices),
 * and whether micro-batch k starts a run after one (never k = 0): the
 * sync row's schedule, or every micro-batch where the row keeps a
 * gradient slice. */
int shard_reduces_after(shard_mode sh, int sync, int k, int accum);
int shard_reduced_before(shard_mode sh, int sync, int k);

/* The memory need of a config on one of `ranks` ranks (model_memory_need
 * for the unsharded one) as model_shard_state allocates it: the weights
 * padded to whole slices, the optimizer state one slice, and the gradient
 * padded to whole slices (optimizer) or one slice and the buckets the
 * backward writes into (gradients: grad_ring.h). */
void shard_memory_need(memory_need *n, shard_mode sh, int ranks, const model_spec *s,
                       optimizer_kind opt);

/* "none: ...; optimizer: ...": what each row of which[0..n) keeps and
 * sends, for the CSV's `# shard_collectives:` metadata. */
void shard_describe_schedule(const int *which, int n, char *out, size_t len);

#endif
