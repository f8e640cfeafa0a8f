/* The CUDA backend's fused causal attention (backend_ops.attention_forward
 * and attention_backward), arranged as FlashAttention-2 arranges it, with
 * the CPU's op's signature and layouts (backend.h): q, k and v read where
 * the projection wrote them ([3d x N], token layout), y and dqkv written
 * there too, and nothing kept for the backward but each query's fp32
 * log-sum-exp. So the [T x T] scores and probabilities never go to memory,
 * and the memory need the harness charges the fused path (the lse, no
 * scores, no permute scratch) is all this op uses: no buffer of its own.
 *
 * A thread block owns one tile of B queries (or keys) of one (sequence,
 * head): its q, k, v and dy tiles are staged in shared memory, and the
 * outputs accumulate in fp32 whatever the storage. The tile products run
 * two ways:
 *   - bf16 on the tensor cores (cuda_flash_tc.cuh), head dims up to 128:
 *     4 warps a block, 16 queries (or keys) a warp, every product on
 *     mma.sync m16n8k16 in bf16 with fp32 accumulators, its operands
 *     gathered from the bf16 tiles by ldmatrix, its result left in the
 *     warp's registers in PTX's documented layout: the online softmax
 *     runs there, and P and dS (rounded to bf16, as FlashAttention-2
 *     rounds them) are the next product's operands straight from there.
 *     The scores, the softmax's statistics and the lse are fp32. An
 *     earlier arrangement on WMMA, whose fragment layout is opaque, sent
 *     every [64 x 64] score tile and the forward's output through shared
 *     memory and measured 1.38x slower than the unfused path on an H200
 *     (GPT-2 small, bf16, micro 8);
 *   - fp32 on the CUDA cores (fmaf), the tiles in fp32, a 16 x 16 grid of
 *     threads each a (B/16) x (B/16) piece in registers: exact to fp32,
 *     as gpu-check holds fp32 to the CPU's op (tensor cores would round
 *     fp32's q, k, v and dy, far past its 1e-5). The op is given the
 *     storage, not the dtype, so the tf32 dtype (fp32 storage) runs here
 *     too, and so does bf16 at head dim 256.
 * tests/kernels/flash_emulation.cc runs both on the host; whether fused or
 * unfused is the default is for the measured ratio of check-gpu's
 * `attention` stage to decide.
 *
 * Forward: per query tile, the key tiles up to its diagonal one, with the
 * online softmax (running max m and sum l per row, the output rescaled when
 * the max grows); y = acc / l, lse = m + log l (of the scaled scores, as
 * the CPU's op keeps it).
 *
 * Backward, three kernels, none with atomics (so a step's gradient is the
 * same to the bit from run to run, as check-gpu's determinism stage
 * demands):
 *   1. D_i = dY_i . Y_i (= sum_j P_ij dP_ij), read from the forward's y as
 *      FlashAttention-2 reads it: a warp a query's head, no products;
 *   2. per key tile, over the query tiles at and below its diagonal:
 *      P again from the lse, dS = P (dP - D) scale, dV += P^T dY,
 *      dK += dS^T Q, in registers, written once;
 *   3. per query tile, over the key tiles: dQ += dS K, written once.
 * D needs fp32 [T x heads x B] that the harness does not charge: it is
 * kept in the first 4 bytes of each query's dq slot in dqkv (kernel 1
 * writes it, kernels 2 and 3 read it, kernel 3 overwrites it with dq in
 * the same block that read it), so the op uses exactly the memory the
 * harness computes for it.
 *
 * Head dims are templated in buckets (32, 64, 80, 128, 256); a smaller one
 * runs in the next bucket up, its tiles zero past hd (zeros add nothing to
 * a score; the columns past hd are never written). */
#include <stdint.h>
#include <stdio.h>

#include "cuda_backend.h"
#include "cuda_flash_attention.cuh"
#include "cuda_kernels.h"

/* ------------------------------------------------------------------ host */

/* Dynamic shared memory past 48 KiB must be asked for, per kernel: done
 * once as the backend starts (cuda_flash_attention_prepare), never at a
 * launch, which may be inside a graph's capture. A launch checks its need
 * against the device's per-block limit, read then too. */
template <typename K>
static int fa_allow_smem(backend *b, K kernel, size_t bytes)
{
    if (bytes <= (size_t)cuda_of(b)->smem_optin)
        CUDA_CHECK(b, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)bytes));
    return BK_OK;
}

static int fa_smem_fits(backend *b, size_t bytes, const char *name)
{
    if (bytes <= (size_t)cuda_of(b)->smem_optin)
        return BK_OK;
    snprintf(b->error, sizeof b->error,
             "fused attention: %s needs %zu bytes of shared memory a block, the device has %d "
             "(%s=%s runs without it)",
             name, bytes, cuda_of(b)->smem_optin, CUDA_ATTENTION_ENV,
             attention_name(ATTENTION_UNFUSED));
    return BK_UNSUPPORTED;
}

template <typename T, int HD>
static int fa_prepare(backend *b)
{
    int rc;
    if constexpr (fa_path<T, HD>::TC) {
        using F = fa_tc_tiles<HD>;
        if ((rc = fa_allow_smem(b, flash_tc_forward_kernel<HD>, F::FWD_BYTES)) ||
            (rc = fa_allow_smem(b, flash_tc_backward_dq_kernel<HD>, F::BWD_BYTES)))
            return rc;
        return fa_allow_smem(b, flash_tc_backward_dkv_kernel<HD>, F::BWD_BYTES);
    } else {
        using F = fa_tiles<HD>;
        if ((rc = fa_allow_smem(b, flash_forward_kernel<T, HD>, F::FWD_BYTES)) ||
            (rc = fa_allow_smem(b, flash_backward_dq_kernel<T, HD>, F::BWD_BYTES)))
            return rc;
        return fa_allow_smem(b, flash_backward_dkv_kernel<T, HD>, F::BWD_BYTES);
    }
}

/* Whether the tensor-core kernels may stage a buffer's rows 16 bytes at a
 * time: hd a multiple of 8 (so every row of every head starts on 16
 * bytes, ld being a multiple of hd) and the buffer 16-byte aligned. */
static bool fa_vec(int hd, const void *p) { return hd % 8 == 0 && (uintptr_t)p % 16 == 0; }

/* n thread blocks, or the reason a grid cannot hold them. */
static int fa_blocks(backend *b, size_t n, unsigned *blocks)
{
    if (n > 0x7fffffffu) {
        snprintf(b->error, sizeof b->error, "fused attention: %zu thread blocks, over the "
                 "grid's 2^31 - 1", n);
        return BK_UNSUPPORTED;
    }
    *blocks = (unsigned)n;
    return BK_OK;
}

/* The grid: a block per tile of each (sequence, head). */
static int fa_grid(backend *b, int t, int tile, int heads, int batch, int *tiles,
                   unsigned *blocks)
{
    *tiles = (t + tile - 1) / tile;
    return fa_blocks(b, (size_t)*tiles * (size_t)heads * (size_t)batch, blocks);
}

template <typename T, int HD>
static int fa_forward(backend *b, const void *qkv, void *y, float *lse, float scale, int hd,
                      int heads, int t, int batch)
{
    constexpr bool TC = fa_path<T, HD>::TC;
    const int tile = fa_path<T, HD>::tiles::B;
    const size_t bytes = (size_t)fa_path<T, HD>::tiles::FWD_BYTES;
    int tiles, rc;
    unsigned blocks;
    if ((rc = fa_grid(b, t, tile, heads, batch, &tiles, &blocks)) ||
        (rc = fa_smem_fits(b, bytes, "the forward's kernel")))
        return rc;
    cudaStream_t st = cuda_of(b)->stream;
    if constexpr (TC)
        flash_tc_forward_kernel<HD><<<blocks, FA_TC_THREADS, bytes, st>>>(
            (const bf16_bits *)qkv, (bf16_bits *)y, lse, scale, hd, heads, t, tiles,
            fa_vec(hd, qkv));
    else
        flash_forward_kernel<T, HD><<<blocks, FA_THREADS, bytes, st>>>(
            (const T *)qkv, (T *)y, lse, scale, hd, heads, t, tiles);
    CUDA_CHECK_LAUNCH(b, "flash_forward_kernel");
    return BK_OK;
}

template <typename T, int HD>
static int fa_backward(backend *b, const void *qkv, const void *y, const float *lse,
                       const void *dy, void *dqkv, float scale, int hd, int heads, int t,
                       int batch)
{
    constexpr bool TC = fa_path<T, HD>::TC;
    const int tile = fa_path<T, HD>::tiles::B;
    const size_t bytes = (size_t)fa_path<T, HD>::tiles::BWD_BYTES;
    const size_t rows = (size_t)t * (size_t)batch * (size_t)heads;
    const size_t warps = FA_THREADS / 32;
    cudaStream_t st = cuda_of(b)->stream;
    int tiles, rc;
    unsigned blocks, d_blocks;
    if ((rc = fa_grid(b, t, tile, heads, batch, &tiles, &blocks)) ||
        (rc = fa_blocks(b, (rows + warps - 1) / warps, &d_blocks)) ||
        (rc = fa_smem_fits(b, bytes, "the backward's kernels")))
        return rc;
    const T *x = (const T *)qkv, *g = (const T *)dy;
    T *dx = (T *)dqkv;
    flash_backward_d_kernel<T>
        <<<d_blocks, FA_THREADS, 0, st>>>((const T *)y, g, dx, hd, heads, rows);
    CUDA_CHECK_LAUNCH(b, "flash_backward_d_kernel");
    if constexpr (TC) {
        const bool vec = fa_vec(hd, qkv) && fa_vec(hd, dy);
        flash_tc_backward_dkv_kernel<HD>
            <<<blocks, FA_TC_THREADS, bytes, st>>>(x, lse, g, dx, scale, hd, heads, t, tiles, vec);
        CUDA_CHECK_LAUNCH(b, "flash_backward_dkv_kernel");
        flash_tc_backward_dq_kernel<HD>
            <<<blocks, FA_TC_THREADS, bytes, st>>>(x, lse, g, dx, scale, hd, heads, t, tiles, vec);
    } else {
        flash_backward_dkv_kernel<T, HD>
            <<<blocks, FA_THREADS, bytes, st>>>(x, lse, g, dx, scale, hd, heads, t, tiles);
        CUDA_CHECK_LAUNCH(b, "flash_backward_dkv_kernel");
        flash_backward_dq_kernel<T, HD>
            <<<blocks, FA_THREADS, bytes, st>>>(x, lse, g, dx, scale, hd, heads, t, tiles);
    }
    CUDA_CHECK_LAUNCH(b, "flash_backward_dq_kernel");
    return BK_OK;
}

/* The bucket a head dim runs in, or 0 with the reason where none takes
 * it: past 256, and hd 1 in bf16 (D's 4 bytes need two 2-byte slots). */
static int fa_bucket(backend *b, storage s, int hd)
{
    static const int buckets[] = {32, 64, 80, 128, 256};
    if (s == STORAGE_BF16 && hd < 2) {
        snprintf(b->error, sizeof b->error, "fused attention on cuda: head dim 1 in bf16 "
                 "(%s=%s runs it)", CUDA_ATTENTION_ENV, attention_name(ATTENTION_UNFUSED));
        return 0;
    }
    for (int i = 0; i < (int)(sizeof buckets / sizeof buckets[0]); i++)
        if (hd <= buckets[i])
            return buckets[i];
    snprintf(b->error, sizeof b->error, "fused attention on cuda takes head dims up to 256, "
             "not %d (%s=%s runs it)", hd, CUDA_ATTENTION_ENV, attention_name(ATTENTION_UNFUSED));
    return 0;
}

extern "C" int cuda_flash_attention_prepare(backend *b)
{
    cuda_impl *c = cuda_of(b);
    CUDA_CHECK(b, cudaDeviceGetAttribute(&c->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                         c->device));
    int rc;
    if ((rc = fa_prepare<float, 32>(b)) || (rc = fa_prepare<float, 64>(b)) ||
        (rc = fa_prepare<float, 80>(b)) || (rc = fa_prepare<float, 128>(b)) ||
        (rc = fa_prepare<float, 256>(b)) || (rc = fa_prepare<bf16_bits, 32>(b)) ||
        (rc = fa_prepare<bf16_bits, 64>(b)) || (rc = fa_prepare<bf16_bits, 80>(b)) ||
        (rc = fa_prepare<bf16_bits, 128>(b)))
        return rc;
    return fa_prepare<bf16_bits, 256>(b);
}

#define FA_DISPATCH(call_f32, call_bf16)                                      \
    switch (fa_bucket(b, s, hd)) {                                            \
    case 32: return s == STORAGE_BF16 ? call_bf16(32) : call_f32(32);        \
    case 64: return s == STORAGE_BF16 ? call_bf16(64) : call_f32(64);        \
    case 80: return s == STORAGE_BF16 ? call_bf16(80) : call_f32(80);        \
    case 128: return s == STORAGE_BF16 ? call_bf16(128) : call_f32(128);     \
    case 256: return s == STORAGE_BF16 ? call_bf16(256) : call_f32(256);     \
    default: return BK_UNSUPPORTED;                                           \
    }

extern "C" int cuda_attention_forward(backend *b, storage s, const void *qkv, void *y,
                                      float *lse, float scale, int hd, int heads, int t,
                                      int batch)
{
    if (hd <= 0 || heads <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
#define FWD_F32(H) fa_forward<float, H>(b, qkv, y, lse, scale, hd, heads, t, batch)
#define FWD_BF16(H) fa_forward<bf16_bits, H>(b, qkv, y, lse, scale, hd, heads, t, batch)
    FA_DISPATCH(FWD_F32, FWD_BF16)
#undef FWD_F32
#undef FWD_BF16
}

extern "C" int cuda_attention_backward(backend *b, storage s, const void *qkv, const void *y,
                                       const float *lse, const void *dy, void *dqkv,
                                       float scale, int hd, int heads, int t, int batch)
{
    if (hd <= 0 || heads <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
#define BWD_F32(H) fa_backward<float, H>(b, qkv, y, lse, dy, dqkv, scale, hd, heads, t, batch)
#define BWD_BF16(H) \
    fa_backward<bf16_bits, H>(b, qkv, y, lse, dy, dqkv, scale, hd, heads, t, batch)
    FA_DISPATCH(BWD_F32, BWD_BF16)
#undef BWD_F32
#undef BWD_BF16
}
