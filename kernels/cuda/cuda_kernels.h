/* What the CUDA backend's launches share: the device code of
 * cuda_device.cuh, whether rows can be read 16 bytes at a time, and the
 * launch sizes of grid-stride loops and column reductions. Seen only by
 * the .cu files of kernels/cuda/. */
#ifndef ACCUBENCH_CUDA_KERNELS_H
#define ACCUBENCH_CUDA_KERNELS_H

#include <stdint.h>

#include "cuda_device.cuh"
#include "cuda_internal.h"

/* Whether rows of `row_elems` elements of T starting at these buffers can
 * be read 16 bytes at a time. */
template <typename T>
static inline int rows_vectorisable(size_t row_elems, const void *a, const void *b)
{
    const size_t v = 16 / sizeof(T);
    return row_elems % v == 0 && ((uintptr_t)a | (uintptr_t)b) % 16 == 0;
}

/* Blocks for a grid-stride loop over n items: enough to fill the device a
 * few times over, never more than the items need. */
static inline unsigned blocks_for(const backend *b, size_t n, int threads)
{
    size_t want = (n + (size_t)threads - 1) / (size_t)threads;
    size_t cap = (size_t)((const cuda_impl *)b->impl)->sm_count * 16;
    if (want > cap)
        want = cap;
    return want ? (unsigned)want : 1u;
}

/* How a column reduction (the bias gradient, LayerNorm's dgamma/dbeta)
 * splits its `cols` columns into chunks for a grid of gx blocks across
 * the features: about eight blocks per SM in all, each chunk at least one
 * column per lane, and every chunk's partial sums (`partial_floats` each)
 * within the reduction scratch. Eight, not two: these passes are memory
 * bound, and what they read at once is what keeps the memory busy (at two
 * blocks an SM, 512 threads with a few 2-byte bf16 loads each in flight
 * through a 0.6 us latency, about 1 TB/s of an H200's 4.8 by Little's law;
 * the partial sums, chunks x features floats, stay small). Returns the
 * chunk count (1: no second pass) and the columns of each in *chunk_cols. */
static inline int reduce_chunks(const cuda_impl *c, unsigned gx, long cols, int lanes,
                                size_t partial_floats, int *chunk_cols)
{
    long chunks = ((long)c->sm_count * 8 + gx - 1) / gx;
    long max_by_cols = (cols + lanes - 1) / lanes;
    long max_by_scratch = (long)(CUDA_REDUCE_SCRATCH_FLOATS / partial_floats);
    if (chunks > max_by_cols)
        chunks = max_by_cols;
    if (chunks > max_by_scratch)
        chunks = max_by_scratch;
    if (chunks > 65535)
        chunks = 65535;
    if (chunks < 1)
        chunks = 1;
    *chunk_cols = (int)((cols + chunks - 1) / chunks);
    return (int)((cols + *chunk_cols - 1) / *chunk_cols);
}

#endif
