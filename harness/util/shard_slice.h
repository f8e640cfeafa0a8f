/* The slices of a vector of n floats cut over `ranks` ranks, as sharded
 * data parallel (ZeRO) keeps them: every slice the same length, ceil(n /
 * ranks), so that a reduce-scatter and an all-gather move equal blocks
 * (NCCL and MPI_Reduce_scatter_block need them); the vector is padded at
 * its end to ranks x len, and the last ranks' slices hold fewer real
 * floats (count) or none. Unsharded (ranks 1): one slice, the vector. */
#ifndef ACCUBENCH_SHARD_SLICE_H
#define ACCUBENCH_SHARD_SLICE_H

#include <stddef.h>

typedef struct shard_slice {
    int ranks, rank;
    size_t len;    /* floats of every rank's slice, padding included */
    size_t padded; /* ranks x len: the vector as allocated */
    size_t first;  /* rank x len: where this rank's slice starts */
    size_t count;  /* real floats of it, [first, first + count) < n */
} shard_slice;

/* The slice of `rank` when n floats are cut over `ranks` (>= 1). */
shard_slice shard_slice_of(size_t n, int ranks, int rank);

#endif
