/* The fused attention's tile products on the tensor cores, for bf16
 * storage (included by cuda_flash_attention.cuh, whose FA_THREADS it
 * uses). WMMA's m16n16k8 in tf32, accumulated in fp32, read straight from
 * the fp32 shared-memory tiles the CUDA-core products use. bf16 values are
 * exact in tf32, so the only operands rounded are P and dS, to 10 bits of
 * mantissa: finer than the bf16 P of FlashAttention-2.
 *
 * WMMA reads and writes a tile whose row stride is a multiple of 4 floats
 * and whose first element is 32-byte aligned: fa_tiles pads these kernels'
 * rows by 4 floats, not 1. Transposed operands (K^T, V^T, P^T, dS^T) are
 * the row-major tiles read col-major. An accumulator fragment's layout is
 * opaque, so what needs a row of a product (the softmax, the forward's
 * rescale) is done on it stored in shared memory. */
#ifndef ACCUBENCH_CUDA_FLASH_MMA_CUH
#define ACCUBENCH_CUDA_FLASH_MMA_CUH

/* tests/kernels/flash_emulation.cc stands in its own on the host */
#ifndef FA_WMMA_EMULATED
#include <mma.h>
#endif

namespace fa_wmma = nvcuda::wmma;

typedef fa_wmma::fragment<fa_wmma::accumulator, 16, 16, 8, float> fa_acc;

/* Where element (r, c) of a matrix laid out as L with row stride ld is
 * (WMMA's layouts are incomplete types: tags, never values). */
template <typename L> struct fa_layout;
template <> struct fa_layout<fa_wmma::row_major> {
    static __device__ __forceinline__ int at(int r, int c, int ld) { return r * ld + c; }
};
template <> struct fa_layout<fa_wmma::col_major> {
    static __device__ __forceinline__ int at(int r, int c, int ld) { return c * ld + r; }
};

/* acc += A B over k < K for the 16 x 16 output tile at (i0, j0): A(i, k)
 * at a[fa_layout<LA>::at(i, k, lda)], B(k, j) likewise. The
 * fragments are rounded to tf32 as the API asks (the hardware would
 * otherwise drop the low bits, not round them). */
template <typename LA, typename LB, int K>
__device__ __forceinline__ void fa_mma(fa_acc &acc, const float *a, int lda, const float *b,
                                       int ldb, int i0, int j0)
{
    fa_wmma::fragment<fa_wmma::matrix_a, 16, 16, 8, fa_wmma::precision::tf32, LA> fa;
    fa_wmma::fragment<fa_wmma::matrix_b, 16, 16, 8, fa_wmma::precision::tf32, LB> fb;
#pragma unroll 2
    for (int k = 0; k < K; k += 8) {
        fa_wmma::load_matrix_sync(fa, a + fa_layout<LA>::at(i0, k, lda), (unsigned)lda);
        fa_wmma::load_matrix_sync(fb, b + fa_layout<LB>::at(k, j0, ldb), (unsigned)ldb);
#pragma unroll
        for (int e = 0; e < fa.num_elements; e++)
            fa.x[e] = fa_wmma::__float_to_tf32(fa.x[e]);
#pragma unroll
        for (int e = 0; e < fb.num_elements; e++)
            fb.x[e] = fa_wmma::__float_to_tf32(fb.x[e]);
        fa_wmma::mma_sync(acc, fa, fb, acc);
    }
}

/* C = A B (or C += A B, with `add`) into the row-major [M x N] tile c
 * (row stride ldc), its 16 x 16 tiles shared out among the warps: warp w
 * takes tiles w, w + 8, ... in row-major order. */
template <typename LA, typename LB, int M, int N, int K>
__device__ __forceinline__ void fa_mma_tiles(float *c, int ldc, const float *a, int lda,
                                             const float *b, int ldb, bool add)
{
    constexpr int TN = N / 16;
    for (int tile = (int)threadIdx.x / 32; tile < M / 16 * TN; tile += FA_THREADS / 32) {
        const int i0 = tile / TN * 16, j0 = tile % TN * 16;
        fa_acc acc;
        if (add)
            fa_wmma::load_matrix_sync(acc, c + i0 * ldc + j0, (unsigned)ldc,
                                      fa_wmma::mem_row_major);
        else
            fa_wmma::fill_fragment(acc, 0.0f);
        fa_mma<LA, LB, K>(acc, a, lda, b, ldb, i0, j0);
        fa_wmma::store_matrix_sync(c + i0 * ldc + j0, acc, (unsigned)ldc,
                                   fa_wmma::mem_row_major);
    }
}

/* A warp's share of an [M x N] output kept in registers over a whole
 * loop (the backward's dQ, dK and dV only ever add): tiles w, w + 8, ...
 * as fa_mma_tiles shares them, stored once at the end. */
template <int M, int N> struct fa_acc_tiles {
    static constexpr int TN = N / 16, TILES = M / 16 * TN;
    static constexpr int MINE = (TILES + FA_THREADS / 32 - 1) / (FA_THREADS / 32);
    fa_acc f[MINE];

    __device__ __forceinline__ void zero()
    {
#pragma unroll
        for (int n = 0; n < MINE; n++)
            fa_wmma::fill_fragment(f[n], 0.0f);
    }
    template <typename LA, typename LB, int K>
    __device__ __forceinline__ void add(const float *a, int lda, const float *b, int ldb)
    {
#pragma unroll
        for (int n = 0; n < MINE; n++) {
            const int tile = (int)threadIdx.x / 32 + n * (FA_THREADS / 32);
            if (tile < TILES)
                fa_mma<LA, LB, K>(f[n], a, lda, b, ldb, tile / TN * 16, tile % TN * 16);
        }
    }
    /* into the row-major tile c (row stride ldc) */
    __device__ __forceinline__ void store(float *c, int ldc) const
    {
#pragma unroll
        for (int n = 0; n < MINE; n++) {
            const int tile = (int)threadIdx.x / 32 + n * (FA_THREADS / 32);
            if (tile < TILES)
                fa_wmma::store_matrix_sync(c + tile / TN * 16 * ldc + tile % TN * 16, f[n],
                                           (unsigned)ldc, fa_wmma::mem_row_major);
        }
    }
};

/* Rows row0 + i < t, columns e < hd of a row-major [B x HD] tile (row
 * stride LD) out to dst (element (i, e) at dst[i * ld + e]), times
 * row_scale[i] where given. Consecutive threads write consecutive elements
 * of a row. */
template <typename T, int HD, int B, int LD>
__device__ __forceinline__ void store_tile(T *dst, size_t ld, const float *src, int row0,
                                           int t, int hd, const float *row_scale)
{
    for (int idx = (int)threadIdx.x; idx < B * HD; idx += FA_THREADS) {
        const int i = idx / HD, e = idx % HD;
        if (row0 + i < t && e < hd)
            store(dst, (size_t)(row0 + i) * ld + (size_t)e,
                  src[i * LD + e] * (row_scale ? row_scale[i] : 1.0f));
    }
}

#endif
