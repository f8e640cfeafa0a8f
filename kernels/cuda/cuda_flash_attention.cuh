/* The kernels of the CUDA backend's fused attention (the host side, and
 * what they compute, in cuda_flash_attention.cu). Device code alone, so
 * that tests/kernels/flash_emulation.cc can run these very kernels on the
 * host, a pthread a CUDA thread, where no GPU is. */
#ifndef ACCUBENCH_CUDA_FLASH_ATTENTION_CUH
#define ACCUBENCH_CUDA_FLASH_ATTENTION_CUH

#include <math.h>

#include "cuda_kernels.h"

/* The kernels' shared memory. A macro so that the host emulation of these
 * kernels (tests/kernels/flash_emulation.cc) can hand each block its own.
 * Aligned to 32 bytes, as WMMA's tiles must be (a float's 4 is all the
 * declaration would otherwise promise). */
#ifndef FA_SHARED
#define FA_SHARED(name) extern __shared__ __align__(32) float name[]
#endif

#define FA_THREADS 256 /* a 16 x 16 grid for the tile products; 8 warps */

#include "cuda_flash_mma.cuh"

/* Whether a storage's kernels run their products on the tensor cores:
 * bf16's, whose values tf32 holds exactly. fp32's stay on the CUDA cores
 * (fmaf), as exact as the CPU's op, which gpu-check holds them to. */
template <typename T> struct fa_tc {
    static constexpr bool on = false;
};
template <> struct fa_tc<bf16_bits> {
    static constexpr bool on = true;
};

/* Queries (and keys) a tile: 64 up to hd 128; 32 at 256, so that the
 * backward's six tiles stay within an H200's 227 KiB of shared memory a
 * block. Rows of a tile in shared memory are padded by one float on the
 * CUDA cores: 16 threads reading a column of a row-major tile then hit 16
 * banks. On the tensor cores by 4: WMMA's row strides are multiples of 4
 * floats and its tiles 32-byte aligned. */
template <typename T, int HD> struct fa_tiles {
    static constexpr bool TC = fa_tc<T>::on;
    static constexpr int B = HD <= 128 ? 64 : 32;
    static constexpr int PAD = TC ? 4 : 1;
    static constexpr int LDH = HD + PAD; /* a row of a [B x HD] tile */
    static constexpr int LDB = B + PAD;  /* a row of a [B x B] tile */
    static constexpr int R = B / 16;     /* a thread's rows of a tile product */
    static constexpr int CB = B / 16;    /* its columns of a [B x B] product */
    static constexpr int CH = HD / 16;   /* its columns of a [B x HD] product */
    /* floats of shared memory: the forward's q, k, v (and on the tensor
     * cores its output: a fragment cannot be rescaled by row) and scores
     * tiles and three row arrays; the backward's q, dy, k, v, scores and
     * dscores tiles and two row arrays */
    static constexpr int FWD = (TC ? 4 : 3) * B * LDH + B * LDB + 3 * B;
    static constexpr int BWD = 4 * B * LDH + 2 * B * LDB + 2 * B;
};

/* acc[r][c] += sum_{k < K} A(ty + 16 r, k) B(k, tx + 16 c), out of shared
 * memory: A(i, k) = a[i * a_row + k * a_k], B(k, j) = b[k * b_k + j * b_col]
 * (strides that make any of attention's products, transposed or not, from
 * row-major tiles). */
template <int R, int C, int K>
__device__ __forceinline__ void tile_product(float (&acc)[R][C], const float *a, int a_row,
                                             int a_k, const float *b, int b_k, int b_col)
{
    const int ty = (int)threadIdx.x / 16, tx = (int)threadIdx.x % 16;
#pragma unroll 4
    for (int k = 0; k < K; k++) {
        float av[R], bv[C];
#pragma unroll
        for (int r = 0; r < R; r++)
            av[r] = a[(ty + 16 * r) * a_row + k * a_k];
#pragma unroll
        for (int c = 0; c < C; c++)
            bv[c] = b[k * b_k + (tx + 16 * c) * b_col];
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int c = 0; c < C; c++)
                acc[r][c] = fmaf(av[r], bv[c], acc[r][c]);
    }
}

/* A [B x B] product's pieces into a row-major tile (ld LDB). */
template <int R, int C>
__device__ __forceinline__ void tile_store(float *dst, int ld, const float (&acc)[R][C])
{
    const int ty = (int)threadIdx.x / 16, tx = (int)threadIdx.x % 16;
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int c = 0; c < C; c++)
            dst[(ty + 16 * r) * ld + tx + 16 * c] = acc[r][c];
}

/* Rows row0 .. row0 + B of one head's part (element (i, e) at
 * src[i * ld + e], e < hd) into a row-major [B x HD] tile (row stride LD),
 * fp32; zero past row t and past column hd. Consecutive threads read
 * consecutive elements of a row. */
template <typename T, int HD, int B, int LD>
__device__ __forceinline__ void load_tile(float *dst, const T *src, size_t ld, int row0, int t,
                                          int hd)
{
    for (int idx = (int)threadIdx.x; idx < B * HD; idx += FA_THREADS) {
        const int i = idx / HD, e = idx % HD;
        float v = 0.0f;
        if (row0 + i < t && e < hd)
            v = load(src, (size_t)(row0 + i) * ld + (size_t)e);
        dst[i * LD + e] = v;
    }
}

/* A [B x HD] product's pieces (rows row0 + ty + 16 r < t, columns
 * tx + 16 c < hd) into dst (element (i, e) at dst[i * ld + e]), times
 * row_scale[row] where given. */
template <typename T, int R, int C>
__device__ __forceinline__ void rows_store(T *dst, size_t ld, int row0, int t, int hd,
                                           const float (&acc)[R][C], const float *row_scale)
{
    const int ty = (int)threadIdx.x / 16, tx = (int)threadIdx.x % 16;
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int i = ty + 16 * r;
        if (row0 + i >= t)
            continue;
        const float f = row_scale ? row_scale[i] : 1.0f;
#pragma unroll
        for (int c = 0; c < C; c++) {
            const int e = tx + 16 * c;
            if (e < hd)
                store(dst, (size_t)(row0 + i) * ld + (size_t)e, acc[r][c] * f);
        }
    }
}

/* Query i sees key j (causal, and only real queries: i < t). */
__device__ __forceinline__ bool fa_seen(int i, int j, int t) { return j <= i && i < t; }

/* D in a dq slot's first 4 bytes (see the top): the fp32 itself, or its
 * two halves in two bf16 slots (so no 4-byte alignment is needed). */
__device__ __forceinline__ void stash_f32(float *slot, float v) { slot[0] = v; }
__device__ __forceinline__ void stash_f32(bf16_bits *slot, float v)
{
    const unsigned u = __float_as_uint(v);
    slot[0] = (bf16_bits)(u & 0xffffu);
    slot[1] = (bf16_bits)(u >> 16);
}
__device__ __forceinline__ float unstash_f32(const float *slot) { return slot[0]; }
__device__ __forceinline__ float unstash_f32(const bf16_bits *slot)
{
    return __uint_as_float((unsigned)slot[0] | ((unsigned)slot[1] << 16));
}

/* Where one (sequence, head) of a grid's block is. Blocks go by tile
 * within a unit, the last tiles (most work: every key below them in the
 * forward) first, so that the short ones fill in behind. */
struct fa_unit {
    size_t seq, unit; /* unit = seq * heads + h */
    int h, tile;
};

__device__ __forceinline__ fa_unit fa_unit_of(int heads, int tiles, bool last_first)
{
    fa_unit u;
    u.unit = blockIdx.x / (unsigned)tiles;
    const int in_unit = (int)(blockIdx.x % (unsigned)tiles);
    u.tile = last_first ? tiles - 1 - in_unit : in_unit;
    u.h = (int)(u.unit % (size_t)heads);
    u.seq = u.unit / (size_t)heads;
    return u;
}

/* ---------------------------------------------------------------- forward */

template <typename T, int HD>
__global__ void __launch_bounds__(FA_THREADS)
    flash_forward_kernel(const T *qkv, T *y, float *lse, float scale, int hd, int heads, int t,
                         int tiles)
{
    using F = fa_tiles<T, HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    FA_SHARED(smem);
    float *qs = smem, *ks = qs + B * LDH, *vs = ks + B * LDH, *os = vs + B * LDH;
    float *ss = F::TC ? os + B * LDH : os; /* os: the tensor cores' output tile */
    float *row_m = ss + B * LDB, *row_l = row_m + B, *row_a = row_l + B;
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const T *q = qkv + u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const int q0 = u.tile * B, warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;

    load_tile<T, HD, B, LDH>(qs, q, ld, q0, t, hd);
    for (int i = (int)threadIdx.x; i < B; i += FA_THREADS) {
        row_m[i] = -INFINITY;
        row_l[i] = 0.0f;
    }
    if (F::TC)
        for (int idx = (int)threadIdx.x; idx < B * LDH; idx += FA_THREADS)
            os[idx] = 0.0f;
    float acc[F::R][F::CH] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        load_tile<T, HD, B, LDH>(ks, q + d, ld, k0, t, hd);
        load_tile<T, HD, B, LDH>(vs, q + 2 * d, ld, k0, t, hd);
        __syncthreads();
        if constexpr (F::TC) { /* Q K^T */
            fa_mma_tiles<fa_wmma::row_major, fa_wmma::col_major, B, B, HD>(ss, LDB, qs, LDH, ks,
                                                                          LDH, false);
        } else {
            float s[F::R][F::CB] = {};
            tile_product<F::R, F::CB, HD>(s, qs, LDH, 1, ks, 1, LDH);
            tile_store<F::R, F::CB>(ss, LDB, s);
        }
        __syncthreads();
        /* A warp a row: the row's new max, its probabilities against it,
         * and the factor its earlier sum and output shrink by. A row that
         * sees no key yet (or none: past t) keeps max -inf and adds 0. */
        for (int i = warp; i < B; i += FA_THREADS / 32) {
            float *row = ss + i * LDB;
            float mx = -INFINITY;
            for (int j = lane; j < B; j += 32)
                if (fa_seen(q0 + i, k0 + j, t))
                    mx = fmaxf(mx, row[j] * scale);
            mx = warp_max(mx);
            const float m_old = row_m[i], m_new = fmaxf(m_old, mx);
            float sum = 0.0f;
            for (int j = lane; j < B; j += 32) {
                const float p = fa_seen(q0 + i, k0 + j, t) ? ew_exp(row[j] * scale - m_new)
                                                           : 0.0f;
                row[j] = p;
                sum += p;
            }
            sum = warp_sum(sum);
            if (lane == 0) {
                /* m_old -inf: nothing to shrink (and exp(-inf - -inf) is no number) */
                const float a = m_old == -INFINITY ? 0.0f : ew_exp(m_old - m_new);
                row_a[i] = a;
                row_l[i] = row_l[i] * a + sum;
                row_m[i] = m_new;
            }
        }
        __syncthreads();
        if constexpr (F::TC) {
            /* the rescale in shared memory, where the rows are (a
             * fragment's element order is not given) */
            for (int idx = (int)threadIdx.x; idx < B * HD; idx += FA_THREADS)
                os[idx / HD * LDH + idx % HD] *= row_a[idx / HD];
            __syncthreads();
            fa_mma_tiles<fa_wmma::row_major, fa_wmma::row_major, B, HD, B>(os, LDH, ss, LDB, vs,
                                                                          LDH, true); /* += P V */
        } else {
            const int ty = (int)threadIdx.x / 16;
#pragma unroll
            for (int r = 0; r < F::R; r++) {
                const float a = row_a[ty + 16 * r];
#pragma unroll
                for (int c = 0; c < F::CH; c++)
                    acc[r][c] *= a;
            }
            tile_product<F::R, F::CH, B>(acc, ss, LDB, 1, vs, LDH, 1); /* += P V */
        }
        __syncthreads(); /* before the next key tile overwrites ks, vs and ss */
    }
    /* 1 / l per row; every real row saw key 0, so l >= 1 there */
    for (int i = (int)threadIdx.x; i < B; i += FA_THREADS) {
        if (q0 + i < t)
            lse[u.unit * (size_t)t + (size_t)(q0 + i)] = row_m[i] + logf(row_l[i]);
        row_a[i] = q0 + i < t ? 1.0f / row_l[i] : 0.0f;
    }
    __syncthreads();
    T *yu = y + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd;
    if constexpr (F::TC)
        store_tile<T, HD, B, LDH>(yu, d, os, q0, t, hd, row_a);
    else
        rows_store<T, F::R, F::CH>(yu, d, q0, t, hd, acc, row_a);
}

/* --------------------------------------------------------------- backward */

/* The tiles both backward loops make for one (query tile, key tile):
 * S = Q K^T and dP = dY V^T into ss and dps; then, with `ds`, P (again,
 * from the lse) into ss and dS = P (dP - D) scale into dps. */
template <typename T, int HD>
__device__ __forceinline__ void scores_and_dscores(float *ss, float *dps, const float *qs,
                                                   const float *dys, const float *ks,
                                                   const float *vs, const float *row_lse,
                                                   const float *row_d, float scale, int q0,
                                                   int k0, int t, bool ds)
{
    using F = fa_tiles<T, HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    if constexpr (F::TC) {
        using fa_wmma::row_major, fa_wmma::col_major;
        fa_mma_tiles<row_major, col_major, B, B, HD>(ss, LDB, qs, LDH, ks, LDH, false);
        fa_mma_tiles<row_major, col_major, B, B, HD>(dps, LDB, dys, LDH, vs, LDH, false);
    } else {
        float s[F::R][F::CB] = {};
        tile_product<F::R, F::CB, HD>(s, qs, LDH, 1, ks, 1, LDH);
        tile_store<F::R, F::CB>(ss, LDB, s);
        float s2[F::R][F::CB] = {};
        tile_product<F::R, F::CB, HD>(s2, dys, LDH, 1, vs, 1, LDH);
        tile_store<F::R, F::CB>(dps, LDB, s2);
    }
    __syncthreads();
    if (!ds)
        return;
    for (int idx = (int)threadIdx.x; idx < B * B; idx += FA_THREADS) {
        const int i = idx / B, j = idx % B;
        const float p = fa_seen(q0 + i, k0 + j, t)
                            ? ew_exp(ss[i * LDB + j] * scale - row_lse[i])
                            : 0.0f;
        ss[i * LDB + j] = p;
        dps[i * LDB + j] = p * (dps[i * LDB + j] - row_d[i]) * scale;
    }
    __syncthreads();
}

/* The backward's shared memory, carved the same way by its kernels. */
template <typename T, int HD> struct fa_bwd_smem {
    float *qs, *dys, *ks, *vs, *ss, *dps, *row_lse, *row_d;
    __device__ __forceinline__ explicit fa_bwd_smem(float *smem)
    {
        using F = fa_tiles<T, HD>;
        qs = smem;
        dys = qs + F::B * F::LDH;
        ks = dys + F::B * F::LDH;
        vs = ks + F::B * F::LDH;
        ss = vs + F::B * F::LDH;
        dps = ss + F::B * F::LDB;
        row_lse = dps + F::B * F::LDB;
        row_d = row_lse + F::B;
    }
};

/* The rows of a query tile: q and dy tiles, the lse and (with `with_d`) D
 * of each (0 past t). D is read from the dq slots (see the top). */
template <typename T, int HD>
__device__ __forceinline__ void load_query_tile(const fa_bwd_smem<T, HD> &m, const T *q,
                                                const T *dy, const float *lse, const T *dq,
                                                size_t ld, size_t d, int q0, int t, int hd,
                                                bool with_d)
{
    constexpr int B = fa_tiles<T, HD>::B, LDH = fa_tiles<T, HD>::LDH;
    load_tile<T, HD, B, LDH>(m.qs, q, ld, q0, t, hd);
    load_tile<T, HD, B, LDH>(m.dys, dy, d, q0, t, hd);
    for (int i = (int)threadIdx.x; i < B; i += FA_THREADS) {
        const bool real = q0 + i < t;
        m.row_lse[i] = real ? lse[q0 + i] : 0.0f;
        m.row_d[i] = real && with_d ? unstash_f32(dq + (size_t)(q0 + i) * ld) : 0.0f;
    }
}

/* Kernels 1 (PASS_D) and 3: a block per query tile, over the key tiles up
 * to its diagonal. */
template <typename T, int HD, bool PASS_D>
__global__ void __launch_bounds__(FA_THREADS)
    flash_backward_dq_kernel(const T *qkv, const float *lse, const T *dy, T *dqkv, float scale,
                             int hd, int heads, int t, int tiles)
{
    using F = fa_tiles<T, HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    FA_SHARED(smem);
    const fa_bwd_smem<T, HD> m(smem);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const T *q = qkv + at;
    T *dq = dqkv + at;
    const int q0 = u.tile * B, warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;

    load_query_tile<T, HD>(m, q, dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd,
                           lse + u.unit * (size_t)t, dq, ld, d, q0, t, hd, !PASS_D);
    float acc[F::R][F::CH] = {};
    fa_acc_tiles<B, HD> tc_acc; /* the tensor cores' acc */
    if (F::TC)
        tc_acc.zero();
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        load_tile<T, HD, B, LDH>(m.ks, q + d, ld, k0, t, hd);
        load_tile<T, HD, B, LDH>(m.vs, q + 2 * d, ld, k0, t, hd);
        __syncthreads();
        scores_and_dscores<T, HD>(m.ss, m.dps, m.qs, m.dys, m.ks, m.vs, m.row_lse, m.row_d, scale,
                               q0, k0, t, !PASS_D);
        if (PASS_D) {
            /* A warp a row, the same rows every key tile: D_i += sum_j P dP */
            for (int i = warp; i < B; i += FA_THREADS / 32) {
                float sum = 0.0f;
                for (int j = lane; j < B; j += 32)
                    if (fa_seen(q0 + i, k0 + j, t))
                        sum += ew_exp(m.ss[i * LDB + j] * scale - m.row_lse[i]) *
                               m.dps[i * LDB + j];
                sum = warp_sum(sum);
                if (lane == 0)
                    m.row_d[i] += sum;
            }
        } else if constexpr (F::TC) { /* += dS K */
            tc_acc.template add<fa_wmma::row_major, fa_wmma::row_major, B>(m.dps, LDB, m.ks, LDH);
        } else {
            tile_product<F::R, F::CH, B>(acc, m.dps, LDB, 1, m.ks, LDH, 1); /* += dS K */
        }
        __syncthreads(); /* before the next key tile overwrites ks, vs, ss and dps */
    }
    if (PASS_D) {
        for (int i = (int)threadIdx.x; i < B; i += FA_THREADS)
            if (q0 + i < t)
                stash_f32(dq + (size_t)(q0 + i) * ld, m.row_d[i]);
    } else if constexpr (F::TC) {
        tc_acc.store(m.qs, LDH); /* free now: the loop's last barrier is behind */
        __syncthreads();
        store_tile<T, HD, B, LDH>(dq, ld, m.qs, q0, t, hd, nullptr);
    } else {
        rows_store<T, F::R, F::CH>(dq, ld, q0, t, hd, acc, nullptr);
    }
}

/* Kernel 2: a block per key tile, over the query tiles from its diagonal
 * down; dK and dV in registers, written once. */
template <typename T, int HD>
__global__ void __launch_bounds__(FA_THREADS)
    flash_backward_dkv_kernel(const T *qkv, const float *lse, const T *dy, T *dqkv,
                              float scale, int hd, int heads, int t, int tiles)
{
    using F = fa_tiles<T, HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    FA_SHARED(smem);
    const fa_bwd_smem<T, HD> m(smem);
    /* the first key tiles see the most queries: they go first */
    const fa_unit u = fa_unit_of(heads, tiles, false);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const T *q = qkv + at, *dyu = dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd;
    const float *lseu = lse + u.unit * (size_t)t;
    T *dq = dqkv + at;
    const int k0 = u.tile * B;

    load_tile<T, HD, B, LDH>(m.ks, q + d, ld, k0, t, hd);
    load_tile<T, HD, B, LDH>(m.vs, q + 2 * d, ld, k0, t, hd);
    float dk[F::R][F::CH] = {}, dv[F::R][F::CH] = {};
    fa_acc_tiles<B, HD> tc_dk, tc_dv; /* the tensor cores' dk and dv */
    if (F::TC) {
        tc_dk.zero();
        tc_dv.zero();
    }
    for (int qb = u.tile; qb < tiles; qb++) {
        const int q0 = qb * B;
        load_query_tile<T, HD>(m, q, dyu, lseu, dq, ld, d, q0, t, hd, true);
        __syncthreads();
        scores_and_dscores<T, HD>(m.ss, m.dps, m.qs, m.dys, m.ks, m.vs, m.row_lse, m.row_d, scale,
                               q0, k0, t, true);
        /* rows of these products are keys: A(j, i) = tile[i * LDB + j] */
        if constexpr (F::TC) {
            using fa_wmma::row_major, fa_wmma::col_major;
            tc_dv.template add<col_major, row_major, B>(m.ss, LDB, m.dys, LDH);  /* += P^T dY */
            tc_dk.template add<col_major, row_major, B>(m.dps, LDB, m.qs, LDH); /* += dS^T Q */
        } else {
            tile_product<F::R, F::CH, B>(dv, m.ss, 1, LDB, m.dys, LDH, 1);  /* += P^T dY */
            tile_product<F::R, F::CH, B>(dk, m.dps, 1, LDB, m.qs, LDH, 1); /* += dS^T Q */
        }
        __syncthreads(); /* before the next query tile overwrites qs, dys, ss and dps */
    }
    if constexpr (F::TC) {
        /* through qs and dys, free now: the loop's last barrier is behind */
        tc_dk.store(m.qs, LDH);
        tc_dv.store(m.dys, LDH);
        __syncthreads();
        store_tile<T, HD, B, LDH>(dq + d, ld, m.qs, k0, t, hd, nullptr);
        store_tile<T, HD, B, LDH>(dq + 2 * d, ld, m.dys, k0, t, hd, nullptr);
    } else {
        rows_store<T, F::R, F::CH>(dq + d, ld, k0, t, hd, dk, nullptr);
        rows_store<T, F::R, F::CH>(dq + 2 * d, ld, k0, t, hd, dv, nullptr);
    }
}

#endif
