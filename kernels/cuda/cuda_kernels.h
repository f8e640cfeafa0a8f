/* What the CUDA backend's kernel files share: element access in either
 * storage, the launch size of a grid-stride loop, and warp reductions.
 * Seen only by the .cu files of kernels/cuda/. */
#ifndef ACCUBENCH_CUDA_KERNELS_H
#define ACCUBENCH_CUDA_KERNELS_H

#include <stdint.h>

#include "cuda_internal.h"
#include "elementwise.h"

typedef unsigned short bf16_bits;

/* Storage-generic element access: fp32 as is, bf16 through the shared
 * round-to-nearest-even conversion. */
__device__ __forceinline__ float load(const float *p, size_t i) { return p[i]; }
__device__ __forceinline__ float load(const bf16_bits *p, size_t i)
{
    return ew_bf16_bits_to_f32(p[i]);
}
__device__ __forceinline__ void store(float *p, size_t i, float x) { p[i] = x; }
__device__ __forceinline__ void store(bf16_bits *p, size_t i, float x)
{
    p[i] = ew_f32_to_bf16_bits(x);
}
/* The value a store of x would leave, read back. */
template <typename T> __device__ __forceinline__ float quantize(float x);
template <> __device__ __forceinline__ float quantize<float>(float x) { return x; }
template <> __device__ __forceinline__ float quantize<bf16_bits>(float x)
{
    return ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(x));
}

/* ---- 16-byte row access: V elements of a row per lane per load (8 in bf16,
 * 4 in fp32); V = 1 where a row or a buffer is not 16-byte aligned. A lane
 * reading 2 bytes at a time leaves most of a memory transaction unused. */
template <typename T, int V> union vec_pack {
    int4 raw;
    T e[V];
};

template <typename T, int V>
__device__ __forceinline__ void load_vec(const T *p, size_t i, float *out)
{
    if constexpr (V == 1) {
        out[0] = load(p, i);
    } else {
        vec_pack<T, V> u;
        u.raw = *reinterpret_cast<const int4 *>(p + i);
        for (int k = 0; k < V; k++)
            out[k] = load(u.e, k);
    }
}

template <typename T, int V>
__device__ __forceinline__ void store_vec(T *p, size_t i, const float *in)
{
    if constexpr (V == 1) {
        store(p, i, in[0]);
    } else {
        vec_pack<T, V> u;
        for (int k = 0; k < V; k++)
            store(u.e, k, in[k]);
        *reinterpret_cast<int4 *>(p + i) = u.raw;
    }
}

/* Whether rows of `row_elems` elements of T starting at these buffers can
 * be read 16 bytes at a time. */
template <typename T>
static inline int rows_vectorisable(size_t row_elems, const void *a, const void *b)
{
    const size_t v = 16 / sizeof(T);
    return row_elems % v == 0 && ((uintptr_t)a | (uintptr_t)b) % 16 == 0;
}

/* ---- One-pass softmax statistics (Milakov and Gimelshein, 2018): the
 * running max m and s = sum exp(x - m), rescaled when the max grows, so a
 * row is read once for both instead of once for each. */
__device__ __forceinline__ void online_add(float &m, float &s, float x)
{
    if (x > m) {
        s = s * ew_exp(m - x) + 1.0f; /* m = -inf at first: s is 0 then */
        m = x;
    } else {
        s += ew_exp(x - m);
    }
}

/* Both statistics across the warp: every lane gets the row's. A lane that
 * saw no element holds (-inf, 0). */
__device__ __forceinline__ void warp_online(float &m, float &s)
{
    for (int off = 16; off > 0; off >>= 1) {
        float om = __shfl_xor_sync(0xffffffffu, m, off);
        float os = __shfl_xor_sync(0xffffffffu, s, off);
        float nm = fmaxf(m, om);
        s = (m == -INFINITY ? 0.0f : s * ew_exp(m - nm)) +
            (om == -INFINITY ? 0.0f : os * ew_exp(om - nm));
        m = nm;
    }
}

#define EW_THREADS 256

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

#define GRID_STRIDE(i, n)                                                     \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);  \
         i += (size_t)blockDim.x * gridDim.x)

/* How a column reduction (the bias gradient, LayerNorm's dgamma/dbeta)
 * splits its `cols` columns into chunks for a grid of gx blocks across
 * the features: about two blocks per SM in all, each chunk at least one
 * column per lane, and every chunk's partial sums (`partial_floats` each)
 * within the reduction scratch. Returns the chunk count (1: no second
 * pass) and the columns of each in *chunk_cols. */
static inline int reduce_chunks(const cuda_impl *c, unsigned gx, long cols, int lanes,
                                size_t partial_floats, int *chunk_cols)
{
    long chunks = ((long)c->sm_count * 2 + gx - 1) / gx;
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

/* Reductions across a warp's 32 lanes (xor shuffles: every lane gets the
 * result). */
__device__ __forceinline__ float warp_max(float x)
{
    for (int off = 16; off > 0; off >>= 1)
        x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
    return x;
}

__device__ __forceinline__ float warp_sum(float x)
{
    for (int off = 16; off > 0; off >>= 1)
        x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}

#endif
