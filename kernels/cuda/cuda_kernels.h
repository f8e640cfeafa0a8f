/* What the CUDA backend's kernel files share: element access in either
 * storage, the launch size of a grid-stride loop, and warp reductions.
 * Seen only by the .cu files of kernels/cuda/. */
#ifndef ACCUBENCH_CUDA_KERNELS_H
#define ACCUBENCH_CUDA_KERNELS_H

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
