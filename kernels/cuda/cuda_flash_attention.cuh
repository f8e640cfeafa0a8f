/* The kernels of the CUDA backend's fused attention (the host side, and
 * what they compute, in cuda_flash_attention.cu). Device code alone, so
 * that tests/kernels/flash_emulation.cc can run these very kernels on the
 * host, a pthread a CUDA thread, where no GPU is. */
#ifndef ACCUBENCH_CUDA_FLASH_ATTENTION_CUH
#define ACCUBENCH_CUDA_FLASH_ATTENTION_CUH

#include <math.h>

#include <type_traits>

#include "cuda_device.cuh"

/* The kernels' shared memory. A macro so that the host emulation of these
 * kernels (tests/kernels/flash_emulation.cc) can hand each block its own.
 * Aligned to 16 bytes, as the tensor-core kernels' 16-byte stores and
 * ldmatrix rows need (a float's 4 is all the declaration would otherwise
 * promise). */
#ifndef FA_SHARED
#define FA_SHARED(name) extern __shared__ __align__(16) float name[]
#endif

#define FA_THREADS 256 /* a 16 x 16 grid for the tile products; 8 warps */

/* The CUDA cores' kernels (fmaf, fp32 tiles): fp32 storage (exact to fp32,
 * as gpu-check holds fp32 to the CPU's op: tensor cores would round q, k,
 * v and dy far past its 1e-5), and bf16 past the tensor-core kernels' head
 * dims (cuda_flash_tc.cuh, included at the end). Queries (and keys) a
 * tile: 64 up to hd 128; 32 at 256, so that the backward's tiles stay
 * within an H200's 227 KiB of shared memory a block. A tile's rows are
 * padded by one float, so that 16 threads reading a column of a
 * row-major tile hit 16 banks. */
template <int HD> struct fa_tiles {
    static constexpr int B = HD <= 128 ? 64 : 32;
    static constexpr int LDH = HD + 1; /* a row of a [B x HD] tile */
    static constexpr int LDB = B + 1;  /* a row of a [B x B] tile */
    static constexpr int R = B / 16;   /* a thread's rows of a tile product */
    static constexpr int CB = B / 16;  /* its columns of a [B x B] product */
    static constexpr int CH = HD / 16; /* its columns of a [B x HD] product */
    static constexpr int OPND = B * LDH * 4, SCORES = B * LDB * 4;
    /* the forward's q, k, v, scores and three row arrays; the backward's
     * q, dy, k, v, scores, dscores and two row arrays */
    static constexpr int FWD_BYTES = 3 * OPND + SCORES + 3 * B * 4;
    static constexpr int BWD_BYTES = 4 * OPND + 2 * SCORES + 2 * B * 4;
};

/* Shared memory handed out in order, a tile at a time. */
struct fa_carve {
    char *p;
    template <typename X> __device__ __forceinline__ X *take(int bytes)
    {
        X *x = (X *)p;
        p += bytes;
        return x;
    }
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
 * src[i * ld + e], e < hd) into a row-major [B x HD] tile (row stride LD);
 * zero past row t and past column hd. Consecutive threads read
 * consecutive elements of a row. */
template <typename T, int HD, int B, int LD>
__device__ __forceinline__ void load_tile(float *dst, const T *src, size_t ld, int row0, int t,
                                          int hd)
{
    for (int idx = (int)threadIdx.x; idx < B * HD; idx += FA_THREADS) {
        const int i = idx / HD, e = idx % HD;
        dst[i * LD + e] = row0 + i < t && e < hd ? load(src, (size_t)(row0 + i) * ld + e) : 0.0f;
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

/* Where one (sequence, head) of a grid's block is. The grid is tile-major:
 * block b is unit b % units and the (b / units)-th tile in the order
 * asked for, the heaviest first where last_first (the last query tiles see
 * every key below them), so every unit's heaviest tile is dispatched
 * before any unit's next one and the short ones fill in behind. Numbered
 * unit-major instead (all of a unit's tiles, then the next unit's), the
 * last units' heaviest tiles started near the launch's end: by a
 * simulation of GPT-2 small's 1,536 blocks a layer on 132 SMs, a makespan
 * 1.17-1.24 times the ideal, against 1.01-1.09 tile-major. */
struct fa_unit {
    size_t seq, unit; /* unit = seq * heads + h */
    int h, tile;
};

__device__ __forceinline__ fa_unit fa_unit_of(int heads, int tiles, bool last_first)
{
    fa_unit u;
    const unsigned units = gridDim.x / (unsigned)tiles;
    u.unit = blockIdx.x % units;
    const int rank = (int)(blockIdx.x / units);
    u.tile = last_first ? tiles - 1 - rank : rank;
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
    using F = fa_tiles<HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    FA_SHARED(smem);
    fa_carve c{(char *)smem};
    float *qs = c.take<float>(F::OPND), *ks = c.take<float>(F::OPND);
    float *vs = c.take<float>(F::OPND), *ss = c.take<float>(F::SCORES);
    float *row_m = c.take<float>(B * 4), *row_l = c.take<float>(B * 4);
    float *row_a = c.take<float>(B * 4);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const T *q = qkv + u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const int q0 = u.tile * B, warp = (int)threadIdx.x / 32, lane = (int)threadIdx.x % 32;

    load_tile<T, HD, B, LDH>(qs, q, ld, q0, t, hd);
    for (int i = (int)threadIdx.x; i < B; i += FA_THREADS) {
        row_m[i] = -INFINITY;
        row_l[i] = 0.0f;
    }
    float acc[F::R][F::CH] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        load_tile<T, HD, B, LDH>(ks, q + d, ld, k0, t, hd);
        load_tile<T, HD, B, LDH>(vs, q + 2 * d, ld, k0, t, hd);
        __syncthreads();
        float s[F::R][F::CB] = {};
        tile_product<F::R, F::CB, HD>(s, qs, LDH, 1, ks, 1, LDH); /* Q K^T */
        tile_store<F::R, F::CB>(ss, LDB, s);
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
                row[j] = fa_seen(q0 + i, k0 + j, t) ? ew_exp(row[j] * scale - m_new) : 0.0f;
                sum += row[j];
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
        const int ty = (int)threadIdx.x / 16;
#pragma unroll
        for (int r = 0; r < F::R; r++) {
            const float a = row_a[ty + 16 * r];
#pragma unroll
            for (int c = 0; c < F::CH; c++)
                acc[r][c] *= a;
        }
        tile_product<F::R, F::CH, B>(acc, ss, LDB, 1, vs, LDH, 1); /* += P V */
        __syncthreads(); /* before the next key tile overwrites ks, vs and ss */
    }
    /* 1 / l per row; every real row saw key 0, so l >= 1 there */
    for (int i = (int)threadIdx.x; i < B; i += FA_THREADS) {
        if (q0 + i < t)
            lse[u.unit * (size_t)t + (size_t)(q0 + i)] = row_m[i] + logf(row_l[i]);
        row_a[i] = q0 + i < t ? 1.0f / row_l[i] : 0.0f;
    }
    __syncthreads();
    rows_store<T, F::R, F::CH>(y + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd, d, q0, t,
                               hd, acc, row_a);
}

/* --------------------------------------------------------------- backward */

/* The backward's shared memory, carved the same way by its kernels. */
template <int HD> struct fa_bwd_smem {
    using F = fa_tiles<HD>;
    float *qs, *dys, *ks, *vs, *ss, *dps, *row_lse, *row_d;
    __device__ __forceinline__ explicit fa_bwd_smem(float *smem)
    {
        fa_carve c{(char *)smem};
        qs = c.take<float>(F::OPND);
        dys = c.take<float>(F::OPND);
        ks = c.take<float>(F::OPND);
        vs = c.take<float>(F::OPND);
        ss = c.take<float>(F::SCORES);
        dps = c.take<float>(F::SCORES);
        row_lse = c.take<float>(F::B * 4);
        row_d = c.take<float>(F::B * 4);
    }
};

/* The tiles both backward loops make for one (query tile, key tile):
 * S = Q K^T and dP = dY V^T; then P (again, from the lse) into ss and
 * dS = P (dP - D) scale into dps. */
template <int HD>
__device__ __forceinline__ void scores_and_dscores(const fa_bwd_smem<HD> &m, float scale,
                                                   int q0, int k0, int t)
{
    using F = fa_tiles<HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    float s[F::R][F::CB] = {};
    tile_product<F::R, F::CB, HD>(s, m.qs, LDH, 1, m.ks, 1, LDH);
    tile_store<F::R, F::CB>(m.ss, LDB, s);
    float s2[F::R][F::CB] = {};
    tile_product<F::R, F::CB, HD>(s2, m.dys, LDH, 1, m.vs, 1, LDH);
    tile_store<F::R, F::CB>(m.dps, LDB, s2);
    __syncthreads();
    for (int idx = (int)threadIdx.x; idx < B * B; idx += FA_THREADS) {
        const int i = idx / B, j = idx % B;
        const float p = fa_seen(q0 + i, k0 + j, t)
                            ? ew_exp(m.ss[i * LDB + j] * scale - m.row_lse[i])
                            : 0.0f;
        m.ss[i * LDB + j] = p;
        m.dps[i * LDB + j] = p * (m.dps[i * LDB + j] - m.row_d[i]) * scale;
    }
    __syncthreads();
}

/* The rows of a query tile: q and dy tiles, the lse and D of each (0 past
 * t). D is read from the dq slots (see cuda_flash_attention.cu). */
template <typename T, int HD>
__device__ __forceinline__ void load_query_tile(const fa_bwd_smem<HD> &m, const T *q,
                                                const T *dy, const float *lse, const T *dq,
                                                size_t ld, size_t d, int q0, int t, int hd)
{
    constexpr int B = fa_tiles<HD>::B, LDH = fa_tiles<HD>::LDH;
    load_tile<T, HD, B, LDH>(m.qs, q, ld, q0, t, hd);
    load_tile<T, HD, B, LDH>(m.dys, dy, d, q0, t, hd);
    for (int i = (int)threadIdx.x; i < B; i += FA_THREADS) {
        const bool real = q0 + i < t;
        m.row_lse[i] = real ? lse[q0 + i] : 0.0f;
        m.row_d[i] = real ? unstash_f32(dq + (size_t)(q0 + i) * ld) : 0.0f;
    }
}

/* Kernel 1: D_i = dy_i . y_i for each query and head (= sum_j P_ij dP_ij),
 * a warp a query's head, into its dq slot (see the top). rows = queries x
 * heads, a query's heads side by side (h fastest). y and dy in the
 * [d x N] token layout; D of the stored y (bf16's rounding of y and all),
 * as FlashAttention-2 takes it. */
template <typename T>
__global__ void __launch_bounds__(FA_THREADS)
    flash_backward_d_kernel(const T *y, const T *dy, T *dqkv, int hd, int heads, size_t rows)
{
    const size_t row = (size_t)blockIdx.x * (FA_THREADS / 32) + threadIdx.x / 32;
    const int lane = (int)threadIdx.x % 32;
    if (row >= rows) /* a whole warp or none: rows go a warp each */
        return;
    const size_t col = row / (size_t)heads, h = row % (size_t)heads, d = (size_t)heads * hd;
    const T *yr = y + col * d + h * (size_t)hd, *gr = dy + col * d + h * (size_t)hd;
    float sum = 0.0f;
    for (int e = lane; e < hd; e += 32)
        sum += load(yr, (size_t)e) * load(gr, (size_t)e);
    sum = warp_sum(sum);
    if (lane == 0)
        stash_f32(dqkv + col * 3 * d + h * (size_t)hd, sum);
}

/* Kernel 3: a block per query tile, over the key tiles up to its
 * diagonal: dQ += dS K. */
template <typename T, int HD>
__global__ void __launch_bounds__(FA_THREADS)
    flash_backward_dq_kernel(const T *qkv, const float *lse, const T *dy, T *dqkv, float scale,
                             int hd, int heads, int t, int tiles)
{
    using F = fa_tiles<HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    FA_SHARED(smem);
    const fa_bwd_smem<HD> m(smem);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const T *q = qkv + at;
    T *dq = dqkv + at;
    const int q0 = u.tile * B;

    load_query_tile<T, HD>(m, q, dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd,
                           lse + u.unit * (size_t)t, dq, ld, d, q0, t, hd);
    float acc[F::R][F::CH] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        load_tile<T, HD, B, LDH>(m.ks, q + d, ld, k0, t, hd);
        load_tile<T, HD, B, LDH>(m.vs, q + 2 * d, ld, k0, t, hd);
        __syncthreads();
        scores_and_dscores<HD>(m, scale, q0, k0, t);
        tile_product<F::R, F::CH, B>(acc, m.dps, LDB, 1, m.ks, LDH, 1); /* += dS K */
        __syncthreads(); /* before the next key tile overwrites ks, vs, ss and dps */
    }
    rows_store<T, F::R, F::CH>(dq, ld, q0, t, hd, acc, nullptr);
}

/* Kernel 2: a block per key tile, over the query tiles from its diagonal
 * down; dK and dV in registers, written once. */
template <typename T, int HD>
__global__ void __launch_bounds__(FA_THREADS)
    flash_backward_dkv_kernel(const T *qkv, const float *lse, const T *dy, T *dqkv,
                              float scale, int hd, int heads, int t, int tiles)
{
    using F = fa_tiles<HD>;
    constexpr int B = F::B, LDH = F::LDH, LDB = F::LDB;
    FA_SHARED(smem);
    const fa_bwd_smem<HD> m(smem);
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
    for (int qb = u.tile; qb < tiles; qb++) {
        const int q0 = qb * B;
        load_query_tile<T, HD>(m, q, dyu, lseu, dq, ld, d, q0, t, hd);
        __syncthreads();
        scores_and_dscores<HD>(m, scale, q0, k0, t);
        /* rows of these products are keys: A(j, i) = tile[i * LDB + j] */
        tile_product<F::R, F::CH, B>(dv, m.ss, 1, LDB, m.dys, LDH, 1);  /* += P^T dY */
        tile_product<F::R, F::CH, B>(dk, m.dps, 1, LDB, m.qs, LDH, 1); /* += dS^T Q */
        __syncthreads(); /* before the next query tile overwrites qs, dys, ss and dps */
    }
    rows_store<T, F::R, F::CH>(dq + d, ld, k0, t, hd, dk, nullptr);
    rows_store<T, F::R, F::CH>(dq + 2 * d, ld, k0, t, hd, dv, nullptr);
}

#include "cuda_flash_tc.cuh"

/* Which kernels a storage and head-dim bucket run: bf16's up to 128 on
 * the tensor cores (cuda_flash_tc.cuh), the rest on the CUDA cores; and
 * the tile sizes of those kernels. */
template <typename T, int HD> struct fa_path {
    static constexpr bool TC = std::is_same<T, bf16_bits>::value && HD <= 128;
    using tiles = typename std::conditional<TC, fa_tc_tiles<HD>, fa_tiles<HD>>::type;
};

#endif
