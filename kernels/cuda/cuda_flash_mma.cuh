/* The fused attention's tile products on the tensor cores, for bf16
 * storage (included by cuda_flash_attention.cuh, whose FA_THREADS it
 * uses). WMMA's m16n16k16 in bf16, accumulated in fp32, read from bf16
 * shared-memory tiles: q, k, v and dy as the storage holds them (exact),
 * P and dS rounded to bf16 (round to nearest even) as FlashAttention-2
 * rounds them, from the fp32 scores and softmax the kernels keep.
 *
 * A warp computes a strip of WM x WN output tiles of 16 x 16 (fa_strip
 * picks the strip per product from its shape), so that each k step loads
 * WM A fragments and WN B fragments for WM * WN mmas: shared memory, not
 * the tensor cores, is what bounds these products, and a 16 x 16 tile a
 * warp would load two fragments an mma.
 *
 * WMMA reads a bf16 tile whose row stride is a multiple of 8 elements (16
 * bytes) and an fp32 one whose stride is a multiple of 4, the first
 * element 32-byte aligned: fa_tiles pads the bf16 rows by 8, the fp32 ones
 * by 4. Transposed operands (K^T, V^T, P^T, dS^T) are the row-major tiles
 * read col-major. An accumulator fragment's layout is opaque, so what
 * needs a row of a product (the softmax, the forward's rescale) is done on
 * it stored in shared memory. */
#ifndef ACCUBENCH_CUDA_FLASH_MMA_CUH
#define ACCUBENCH_CUDA_FLASH_MMA_CUH

/* tests/kernels/flash_emulation.cc stands in its own on the host */
#ifndef FA_WMMA_EMULATED
#include <cuda_bf16.h>
#include <mma.h>
#endif

namespace fa_wmma = nvcuda::wmma;

typedef __nv_bfloat16 fa_bf16;
typedef fa_wmma::fragment<fa_wmma::accumulator, 16, 16, 16, float> fa_acc;

/* A bf16 storage element as it is (the storage's bits are bf16's), and an
 * fp32 value rounded to bf16 (P and dS). */
__device__ __forceinline__ fa_bf16 fa_bf16_of_bits(unsigned short u)
{
    return __ushort_as_bfloat16(u);
}
__device__ __forceinline__ fa_bf16 fa_to_bf16(float f) { return __float2bfloat16_rn(f); }

/* Where element (r, c) of a matrix laid out as L with row stride ld is
 * (WMMA's layouts are incomplete types: tags, never values). */
template <typename L> struct fa_layout;
template <> struct fa_layout<fa_wmma::row_major> {
    static __device__ __forceinline__ int at(int r, int c, int ld) { return r * ld + c; }
};
template <> struct fa_layout<fa_wmma::col_major> {
    static __device__ __forceinline__ int at(int r, int c, int ld) { return c * ld + r; }
};

/* The strip of WM x WN tiles a warp takes of an [M x N] product, the
 * strips handed to the warps in turn (ROUNDS of them for the busiest).
 * Chosen for the fewest fragment loads a k step by the busiest warp (the
 * product's time where shared memory bounds it: ROUNDS * (WM + WN)), then
 * the fewest over the block, with at most 4 tiles a warp (32 registers of
 * accumulators). 64 x 64: 16 x 32 (3 loads for 2 mmas); 64 x 80: 64 x 16
 * (5 warps of 8 busy, 5 loads for 4 mmas, against 3 rounds of 16 x 16 at
 * 2 for 1); 64 x 128 and 32 x 256: 32 x 32 (4 for 4); 32 x 32 and
 * 64 x 32: 16 x 16, a tile a warp. */
__host__ __device__ constexpr int fa_pick_strip(int tm, int tn, int warps)
{
    int best = 0;
    long best_cost = 1L << 40;
    for (int wm = 1; wm <= 4; wm++)
        for (int wn = 1; wn <= 4; wn++) {
            if (tm % wm || tn % wn || wm * wn > 4)
                continue;
            const int strips = tm / wm * (tn / wn), rounds = (strips + warps - 1) / warps;
            if (rounds * wm * wn > 4)
                continue;
            const long cost = (long)rounds * (wm + wn) * 4096 + (long)strips * (wm + wn);
            if (cost < best_cost) {
                best_cost = cost;
                best = wm * 8 + wn;
            }
        }
    return best;
}
template <int M, int N> struct fa_strip {
    static constexpr int TM = M / 16, TN = N / 16, WARPS = FA_THREADS / 32;
    static constexpr int WM = fa_pick_strip(TM, TN, WARPS) / 8;
    static constexpr int WN = fa_pick_strip(TM, TN, WARPS) % 8;
    static constexpr int SN = TN / WN, STRIPS = TM / WM * SN;
    static constexpr int ROUNDS = (STRIPS + WARPS - 1) / WARPS;
    static_assert(M % 16 == 0 && N % 16 == 0 && WM > 0 && WN > 0, "no strip fits the product");
};

/* acc[r][c] += A B over k < K for the strip's tile (r, c), whose first
 * element is (i0 + 16 r, j0 + 16 c): A(i, k) at a[fa_layout<LA>::at(i, k,
 * lda)], B(k, j) likewise. */
template <typename LA, typename LB, int WM, int WN, int K>
__device__ __forceinline__ void fa_strip_mma(fa_acc (&acc)[WM][WN], const fa_bf16 *a, int lda,
                                             const fa_bf16 *b, int ldb, int i0, int j0)
{
    fa_wmma::fragment<fa_wmma::matrix_a, 16, 16, 16, fa_bf16, LA> fa[WM];
    fa_wmma::fragment<fa_wmma::matrix_b, 16, 16, 16, fa_bf16, LB> fb[WN];
#pragma unroll 2
    for (int k = 0; k < K; k += 16) {
#pragma unroll
        for (int r = 0; r < WM; r++)
            fa_wmma::load_matrix_sync(fa[r], a + fa_layout<LA>::at(i0 + 16 * r, k, lda),
                                      (unsigned)lda);
#pragma unroll
        for (int c = 0; c < WN; c++)
            fa_wmma::load_matrix_sync(fb[c], b + fa_layout<LB>::at(k, j0 + 16 * c, ldb),
                                      (unsigned)ldb);
#pragma unroll
        for (int r = 0; r < WM; r++)
#pragma unroll
            for (int c = 0; c < WN; c++)
                fa_wmma::mma_sync(acc[r][c], fa[r], fb[c], acc[r][c]);
    }
}

/* C = A B (or C += A B, with `add`) into the row-major fp32 [M x N] tile c
 * (row stride ldc), by strips. */
template <typename LA, typename LB, int M, int N, int K>
__device__ __forceinline__ void fa_mma_tiles(float *c, int ldc, const fa_bf16 *a, int lda,
                                             const fa_bf16 *b, int ldb, bool add)
{
    using S = fa_strip<M, N>;
    for (int s = (int)threadIdx.x / 32; s < S::STRIPS; s += S::WARPS) {
        const int i0 = s / S::SN * S::WM * 16, j0 = s % S::SN * S::WN * 16;
        fa_acc acc[S::WM][S::WN];
#pragma unroll
        for (int r = 0; r < S::WM; r++)
#pragma unroll
            for (int q = 0; q < S::WN; q++) {
                float *at = c + (i0 + 16 * r) * ldc + j0 + 16 * q;
                if (add)
                    fa_wmma::load_matrix_sync(acc[r][q], at, (unsigned)ldc,
                                              fa_wmma::mem_row_major);
                else
                    fa_wmma::fill_fragment(acc[r][q], 0.0f);
            }
        fa_strip_mma<LA, LB, S::WM, S::WN, K>(acc, a, lda, b, ldb, i0, j0);
#pragma unroll
        for (int r = 0; r < S::WM; r++)
#pragma unroll
            for (int q = 0; q < S::WN; q++)
                fa_wmma::store_matrix_sync(c + (i0 + 16 * r) * ldc + j0 + 16 * q, acc[r][q],
                                           (unsigned)ldc, fa_wmma::mem_row_major);
    }
}

/* A warp's strips of an [M x N] output kept in registers over a whole
 * loop (the backward's dQ, dK and dV only ever add): strips w, w + 8, ...
 * as fa_mma_tiles shares them, stored once at the end. */
template <int M, int N> struct fa_acc_tiles {
    using S = fa_strip<M, N>;
    fa_acc f[S::ROUNDS][S::WM][S::WN];

    __device__ __forceinline__ void zero()
    {
#pragma unroll
        for (int n = 0; n < S::ROUNDS; n++)
#pragma unroll
            for (int r = 0; r < S::WM; r++)
#pragma unroll
                for (int q = 0; q < S::WN; q++)
                    fa_wmma::fill_fragment(f[n][r][q], 0.0f);
    }
    template <typename LA, typename LB, int K>
    __device__ __forceinline__ void add(const fa_bf16 *a, int lda, const fa_bf16 *b, int ldb)
    {
#pragma unroll
        for (int n = 0; n < S::ROUNDS; n++) {
            const int s = (int)threadIdx.x / 32 + n * S::WARPS;
            if (s < S::STRIPS)
                fa_strip_mma<LA, LB, S::WM, S::WN, K>(f[n], a, lda, b, ldb,
                                                      s / S::SN * S::WM * 16,
                                                      s % S::SN * S::WN * 16);
        }
    }
    /* into the row-major fp32 tile c (row stride ldc) */
    __device__ __forceinline__ void store(float *c, int ldc) const
    {
#pragma unroll
        for (int n = 0; n < S::ROUNDS; n++) {
            const int s = (int)threadIdx.x / 32 + n * S::WARPS;
            if (s >= S::STRIPS)
                continue;
            const int i0 = s / S::SN * S::WM * 16, j0 = s % S::SN * S::WN * 16;
#pragma unroll
            for (int r = 0; r < S::WM; r++)
#pragma unroll
                for (int q = 0; q < S::WN; q++)
                    fa_wmma::store_matrix_sync(c + (i0 + 16 * r) * ldc + j0 + 16 * q,
                                               f[n][r][q], (unsigned)ldc,
                                               fa_wmma::mem_row_major);
        }
    }
};

/* Rows row0 + i < t, columns e < hd of a row-major fp32 [B x HD] tile
 * (row stride LD) out to dst (element (i, e) at dst[i * ld + e]), times
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
