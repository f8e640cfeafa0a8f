/* What the shard modes (shard.h, the table) mean for the schedule of a
 * step's collectives and for the memory need of a config on one rank. */
#ifndef ACCUBENCH_SHARD_MODES_H
#define ACCUBENCH_SHARD_MODES_H

#include <stddef.h>

#include "dtype_table.h"
#include "model_need.h"
#include "shard.h"

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
