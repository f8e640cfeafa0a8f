/* What the CUDA backend's kernels share: element access in either
 * storage, 16-byte row access, the online softmax's statistics, warp
 * reductions and the grid-stride loop. Device code alone (the launches'
 * helpers are cuda_kernels.h's), so that tests/kernels/cuda_emulation.h
 * can compile it, and the kernels that include it, on the host. */
#ifndef ACCUBENCH_CUDA_DEVICE_CUH
#define ACCUBENCH_CUDA_DEVICE_CUH

#include <math.h>
#include <stddef.h>

#include <type_traits>

#include "elementwise.h"

/* A block's statically sized shared array: BLOCK_SHARED(float, part,
 * [8][33]) declares `__shared__ float part[8][33]`. A macro so that the
 * host emulation hands each block a fresh one, poisoned with NaN. */
#ifndef BLOCK_SHARED
#define BLOCK_SHARED(type, name, dims) __shared__ type name dims
#endif

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

/* Kernels with a warp per column: four warps a block. */
#define ROW_THREADS 128
#define ROW_WARPS (ROW_THREADS / 32)

#define FOR_EACH_WARP_COLUMN(col, ncols)                                          \
    for (size_t col = (size_t)blockIdx.x * ROW_WARPS + threadIdx.x / 32; col < (ncols); \
         col += (size_t)gridDim.x * ROW_WARPS)

/* A column held in a warp's registers, NV vectors of V a lane (lane l's
 * n-th vector starts at element (32 n + l) V): the fewest of 1, 2, 4 and
 * 8 that hold n elements, or 0 past 8 (a loop kernel then). Powers of two
 * keep the kernels' instantiations few; a vector wholly past the column is
 * predicated off. */
__host__ __device__ inline int column_regs(int n, int v)
{
    for (int nv = 1; nv <= 8; nv *= 2)
        if (n <= 32 * v * nv)
            return nv;
    return 0;
}

/* f(std::integral_constant<int, nv>{}) for nv from column_regs; false
 * where the column does not fit the registers (nv 0). */
template <typename F> inline bool with_column_regs(int nv, F f)
{
    switch (nv) {
    case 1: f(std::integral_constant<int, 1>{}); return true;
    case 2: f(std::integral_constant<int, 2>{}); return true;
    case 4: f(std::integral_constant<int, 4>{}); return true;
    case 8: f(std::integral_constant<int, 8>{}); return true;
    default: return false;
    }
}

/* A grid-stride loop's block, and the loop. */
#define EW_THREADS 256

#define GRID_STRIDE(i, n)                                                     \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);  \
         i += (size_t)blockDim.x * gridDim.x)

#endif
