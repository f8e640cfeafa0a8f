/* Training data a model can learn from, for the loss curves and the noise
 * scale: the same buffers as dataset.h, filled with structure instead of
 * noise. Features are uniform in [-1, 1) and labelled by a fixed random
 * teacher network (one tanh layer, the argmax of its logits); tokens come
 * from a small Markov source (each token has four successors, taken with
 * probabilities 0.55, 0.25, 0.12, 0.08), in documents of 1 to seq tokens
 * with padding after, as dataset.c packs them. One loss item in four of
 * the features is padding, as there. The teacher and the source depend on
 * the seed's `source` alone, so that windows drawn with other seeds come
 * from the same distribution. */
#ifndef ACCUBENCH_DATASET_LEARNABLE_H
#define ACCUBENCH_DATASET_LEARNABLE_H

#include "dataset.h"

/* As dataset_create, with learnable data: buffer i from `seed` + i, the
 * teacher or source from `source`. With reverse_block > 0 the examples of
 * every block of that many (the last one shorter) are in reverse order:
 * the same micro-batches of a split whose micro-batch x devices is that
 * block, summed in another order. */
int dataset_create_learnable(backend *b, const input_spec *in, int effective_batch,
                             int buffers, uint64_t source, uint64_t seed, int reverse_block,
                             dataset *d);

/* The buffers of a learnable dataset filled again with new windows from
 * `seed`, as dataset_create_learnable drew them (same source, same
 * reverse_block): fresh examples of the same distribution, so that a
 * curve longer than the buffers trains on a stream rather than on the
 * same few windows again. BK_* status. */
int dataset_refill_learnable(dataset *d, uint64_t source, uint64_t seed, int reverse_block);

#endif
