/* The shard modes, one row each (see shard.h). */
#include "shard.h"

/* Each row: name and description, the optimizer state in slices, the
 * accumulated gradient in slices. */
static const shard_info SHARDS[] = {
    [SHARD_NONE]      = {{"none", "every rank keeps the whole state; the gradient is "
                                  "all-reduced"},
                         0, 0},
    [SHARD_OPTIMIZER] = {{"optimizer", "ZeRO-1: each rank keeps its slice of the AdamW "
                                       "moments; the gradient is reduce-scattered as --sync "
                                       "says, the slice updated, the weights all-gathered"},
                         1, 0},
    [SHARD_GRADIENTS] = {{"gradients", "ZeRO-2: the accumulated gradient in slices too, so "
                                       "it is reduce-scattered after every micro-batch "
                                       "whatever --sync says"},
                         1, 1},
};

const axis shard_axis = AXIS_OF("shard", SHARDS);

const shard_info *shard_info_of(shard_mode s)
{
    return (const shard_info *)axis_row_at(&shard_axis, s);
}
