/* The bf16 fused attention on the tensor cores (included by
 * cuda_flash_attention.cuh, whose row helpers it uses; what the kernels
 * compute is at the top of cuda_flash_attention.cu), arranged as
 * FlashAttention-2 arranges it: a block of 4 warps owns a tile of 64
 * queries (or keys), each warp 16 of them; the operand tiles (q, k, v, dy)
 * sit in shared memory as the storage holds them, row-major, and every
 * product runs on mma.sync (cuda_flash_mma.cuh) with its result left in
 * the warp's registers: the forward's scores, their online softmax and the
 * output; the backward's scores, P, dP and dS, and its dq, dk, dv. No
 * [64 x 64] tile goes to shared memory, and a key tile costs a block two
 * barriers.
 *
 * The operand tiles are loaded 16 bytes a lane where a head's rows allow
 * it (hd a multiple of 8, the buffers 16-byte aligned: the host says, in
 * `vec`), else an element at a time; either way zero past row t and past
 * column hd. Rows are HD + 8 elements apart, so that the 8 rows an
 * ldmatrix phase reads fall in 8 different 16-byte groups of banks.
 *
 * Head dims up to 128 (the buckets 32, 64, 80, 128): a warp keeps [16 x
 * hd] accumulators (two of them in the backward's dk and dv: 128
 * registers at 128), so 256 runs on the CUDA cores' kernels. */
#ifndef ACCUBENCH_CUDA_FLASH_TC_CUH
#define ACCUBENCH_CUDA_FLASH_TC_CUH

#include "cuda_flash_mma.cuh"

#define FA_TC_THREADS 128 /* 4 warps, 16 rows of a 64-row tile each */

template <int HD> struct fa_tc_tiles {
    static constexpr int B = 64;      /* queries (or keys) a tile */
    static constexpr int LD = HD + 8; /* a row of an operand tile, in elements */
    static constexpr int OPND = B * LD * 2;
    /* the forward's q, k and v; the backward's q, dy, k and v, and each
     * query's lse and D */
    static constexpr int FWD_BYTES = 3 * OPND;
    static constexpr int BWD_BYTES = 4 * OPND + 2 * B * 4;
    static_assert(HD % 16 == 0 && HD <= 128, "a tensor-core head dim: 32, 64, 80 or 128");
};

/* Rows row0 .. row0 + 64 of one head's part (element (i, e) at src[i * ld
 * + e], e < hd) into a row-major [64 x HD] tile (row stride LD). */
template <int HD>
__device__ __forceinline__ void fa_tc_stage(unsigned short *dst, const bf16_bits *src, size_t ld,
                                            int row0, int t, int hd, bool vec)
{
    constexpr int B = fa_tc_tiles<HD>::B, LD = fa_tc_tiles<HD>::LD, CH = HD / 8;
    if (vec) {
        for (int idx = (int)threadIdx.x; idx < B * CH; idx += FA_TC_THREADS) {
            const int i = idx / CH, e = idx % CH * 8;
            int4 v = {0, 0, 0, 0};
            if (row0 + i < t && e < hd)
                v = *reinterpret_cast<const int4 *>(src + (size_t)(row0 + i) * ld + e);
            *reinterpret_cast<int4 *>(dst + i * LD + e) = v;
        }
    } else {
        for (int idx = (int)threadIdx.x; idx < B * HD; idx += FA_TC_THREADS) {
            const int i = idx / HD, e = idx % HD;
            dst[i * LD + e] = row0 + i < t && e < hd ? src[(size_t)(row0 + i) * ld + e] : 0;
        }
    }
}

/* The fragment at column n of a warp's rows: its row (0..15) and first
 * column (of 2) for c[2 * half]; g and c as in cuda_flash_mma.cuh. */
__device__ __forceinline__ int fa_frag_row(int half) { return (int)threadIdx.x % 32 / 4 + 8 * half; }
__device__ __forceinline__ int fa_frag_col(int n) { return 8 * n + (int)threadIdx.x % 4 * 2; }

/* A warp's [16 x hd] result out to dst (element (i, e) at dst[i * ld +
 * e]), rows row0 + i < t and columns e < hd, each times row_scale[half]
 * (the row's, for c[2 half] and c[2 half + 1]). */
template <int HD>
__device__ __forceinline__ void fa_tc_store(bf16_bits *dst, size_t ld, int row0, int t, int hd,
                                            const fa_rows<HD> &acc, const float (&row_scale)[2])
{
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int i = row0 + fa_frag_row(half);
        if (i >= t)
            continue;
#pragma unroll
        for (int n = 0; n < HD / 8; n++)
#pragma unroll
            for (int k = 0; k < 2; k++)
                if (fa_frag_col(n) + k < hd)
                    store(dst, (size_t)i * ld + (size_t)(fa_frag_col(n) + k),
                          acc[n][2 * half + k] * row_scale[half]);
    }
}

/* ---------------------------------------------------------------- forward */

template <int HD>
__global__ void __launch_bounds__(FA_TC_THREADS)
    flash_tc_forward_kernel(const bf16_bits *qkv, bf16_bits *y, float *lse, float scale, int hd,
                            int heads, int t, int tiles, bool vec)
{
    using F = fa_tc_tiles<HD>;
    constexpr int B = F::B, LD = F::LD;
    FA_SHARED(smem);
    fa_carve c{(char *)smem};
    unsigned short *qs = c.take<unsigned short>(F::OPND), *ks = c.take<unsigned short>(F::OPND);
    unsigned short *vs = c.take<unsigned short>(F::OPND);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const bf16_bits *q = qkv + u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const int q0 = u.tile * B, w0 = (int)threadIdx.x / 32 * 16; /* the warp's first row */

    fa_tc_stage<HD>(qs, q, ld, q0, t, hd, vec);
    /* per row (g and g + 8): the running max, and this lane's part of
     * the running sum (its 16 columns; the quad's 4 parts add at the end,
     * all scaled alike) */
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    float o[HD / 8][4] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        fa_tc_stage<HD>(ks, q + d, ld, k0, t, hd, vec);
        fa_tc_stage<HD>(vs, q + 2 * d, ld, k0, t, hd, vec);
        __syncthreads();
        float s[B / 8][4] = {};
        fa_warp_abt<B, HD>(s, qs, LD, w0, ks, LD); /* S = Q K^T */
        /* the online softmax on the fragments: a row's 64 columns are in
         * the 4 lanes of a quad (xor 1 and 2 reach them all) */
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int i = q0 + w0 + fa_frag_row(half);
            float mx = -INFINITY;
#pragma unroll
            for (int n = 0; n < B / 8; n++)
#pragma unroll
                for (int k = 0; k < 2; k++) {
                    float &x = s[n][2 * half + k];
                    x = fa_seen(i, k0 + fa_frag_col(n) + k, t) ? x * scale : -INFINITY;
                    mx = fmaxf(mx, x);
                }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float m_new = fmaxf(m[half], mx);
            /* m -inf: nothing to shrink (and exp(-inf - -inf) is no
             * number); m_new -inf: the row sees no key yet, P is 0 */
            const float a = m[half] == -INFINITY ? 0.0f : ew_exp(m[half] - m_new);
            float sum = 0.0f;
#pragma unroll
            for (int n = 0; n < B / 8; n++)
#pragma unroll
                for (int k = 0; k < 2; k++) {
                    float &x = s[n][2 * half + k];
                    x = x == -INFINITY ? 0.0f : ew_exp(x - m_new);
                    sum += x;
                }
            l[half] = l[half] * a + sum;
            m[half] = m_new;
#pragma unroll
            for (int n = 0; n < HD / 8; n++) {
                o[n][2 * half] *= a;
                o[n][2 * half + 1] *= a;
            }
        }
        fa_warp_pb<HD, B>(o, s, vs, LD); /* O += P V, P rounded to bf16 */
        __syncthreads(); /* before the next key tile overwrites ks and vs */
    }
    float inv[2];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        l[half] += __shfl_xor_sync(0xffffffffu, l[half], 1);
        l[half] += __shfl_xor_sync(0xffffffffu, l[half], 2);
        const int i = q0 + w0 + fa_frag_row(half);
        /* every real row saw key 0, so l >= 1 there */
        if (i < t && threadIdx.x % 4 == 0)
            lse[u.unit * (size_t)t + (size_t)i] = m[half] + logf(l[half]);
        inv[half] = i < t ? 1.0f / l[half] : 0.0f;
    }
    fa_tc_store<HD>(y + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd, d, q0 + w0, t, hd, o,
                    inv);
}

/* --------------------------------------------------------------- backward */

/* The backward's shared memory, carved alike by its two kernels. */
template <int HD> struct fa_tc_bwd_smem {
    using F = fa_tc_tiles<HD>;
    unsigned short *qs, *dys, *ks, *vs;
    float *row_lse, *row_d; /* a query tile's lse and D */
    __device__ __forceinline__ explicit fa_tc_bwd_smem(float *smem)
    {
        fa_carve c{(char *)smem};
        qs = c.take<unsigned short>(F::OPND);
        dys = c.take<unsigned short>(F::OPND);
        ks = c.take<unsigned short>(F::OPND);
        vs = c.take<unsigned short>(F::OPND);
        row_lse = c.take<float>(F::B * 4);
        row_d = c.take<float>(F::B * 4);
    }
};

/* A query tile's q and dy tiles, and each query's lse and D (0 past t; D
 * read from its dq slot, see cuda_flash_attention.cu). */
template <int HD>
__device__ __forceinline__ void fa_tc_query_tile(const fa_tc_bwd_smem<HD> &m, const bf16_bits *q,
                                                 const bf16_bits *dy, const float *lse,
                                                 const bf16_bits *dq, size_t ld, size_t d,
                                                 int q0, int t, int hd, bool vec)
{
    fa_tc_stage<HD>(m.qs, q, ld, q0, t, hd, vec);
    fa_tc_stage<HD>(m.dys, dy, d, q0, t, hd, vec);
    for (int i = (int)threadIdx.x; i < fa_tc_tiles<HD>::B; i += FA_TC_THREADS) {
        const bool real = q0 + i < t;
        m.row_lse[i] = real ? lse[q0 + i] : 0.0f;
        m.row_d[i] = real ? unstash_f32(dq + (size_t)(q0 + i) * ld) : 0.0f;
    }
}

/* P and dS of a warp's [16 x 64] scores s and dp (in place): P again from
 * the lse, dS = P (dP - D) scale, in fp32. Fragment (r, c) is query
 * `query(r, c)` and key `key(r, c)`, the query's lse and D at
 * row_lse[query - q0] and row_d[query - q0]. */
template <typename Query, typename Key>
__device__ __forceinline__ void fa_tc_dscores(float (&s)[8][4], float (&dp)[8][4],
                                              const float *row_lse, const float *row_d,
                                              float scale, int q0, int t, Query query, Key key)
{
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = fa_frag_row(e / 2), col = fa_frag_col(n) + e % 2;
            const int i = query(r, col), j = key(r, col);
            const float p = fa_seen(i, j, t) ? ew_exp(s[n][e] * scale - row_lse[i - q0]) : 0.0f;
            s[n][e] = p;
            dp[n][e] = p * (dp[n][e] - row_d[i - q0]) * scale;
        }
}

/* Kernel 2 on the tensor cores: a block per key tile, each warp 16 keys,
 * over the query tiles from its diagonal down. A warp's products have keys
 * for rows: S^T = K Q^T and dP^T = V dY^T, so that P^T and dS^T are A
 * fragments of dV += P^T dY and dK += dS^T Q. */
template <int HD>
__global__ void __launch_bounds__(FA_TC_THREADS)
    flash_tc_backward_dkv_kernel(const bf16_bits *qkv, const float *lse, const bf16_bits *dy,
                                 bf16_bits *dqkv, float scale, int hd, int heads, int t,
                                 int tiles, bool vec)
{
    constexpr int B = fa_tc_tiles<HD>::B, LD = fa_tc_tiles<HD>::LD;
    FA_SHARED(smem);
    const fa_tc_bwd_smem<HD> m(smem);
    /* the first key tiles see the most queries: they go first */
    const fa_unit u = fa_unit_of(heads, tiles, false);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const bf16_bits *q = qkv + at, *dyu = dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd;
    const float *lseu = lse + u.unit * (size_t)t;
    bf16_bits *dq = dqkv + at;
    const int k0 = u.tile * B, w0 = (int)threadIdx.x / 32 * 16;

    fa_tc_stage<HD>(m.ks, q + d, ld, k0, t, hd, vec);
    fa_tc_stage<HD>(m.vs, q + 2 * d, ld, k0, t, hd, vec);
    float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};
    for (int qb = u.tile; qb < tiles; qb++) {
        const int q0 = qb * B;
        fa_tc_query_tile<HD>(m, q, dyu, lseu, dq, ld, d, q0, t, hd, vec);
        __syncthreads();
        float s[B / 8][4] = {}, dp[B / 8][4] = {};
        fa_warp_abt<B, HD>(s, m.ks, LD, w0, m.qs, LD);   /* S^T = K Q^T */
        fa_warp_abt<B, HD>(dp, m.vs, LD, w0, m.dys, LD); /* dP^T = V dY^T */
        fa_tc_dscores(s, dp, m.row_lse, m.row_d, scale, q0, t,
                      [&](int, int col) { return q0 + col; },
                      [&](int r, int) { return k0 + w0 + r; });
        fa_warp_pb<HD, B>(dv, s, m.dys, LD); /* dV += P^T dY */
        fa_warp_pb<HD, B>(dk, dp, m.qs, LD); /* dK += dS^T Q */
        __syncthreads(); /* before the next query tile overwrites qs, dys and the rows */
    }
    const float one[2] = {1.0f, 1.0f};
    fa_tc_store<HD>(dq + d, ld, k0 + w0, t, hd, dk, one);
    fa_tc_store<HD>(dq + 2 * d, ld, k0 + w0, t, hd, dv, one);
}

/* Kernel 3 on the tensor cores: a block per query tile, each warp 16
 * queries, over the key tiles up to its diagonal: dQ += dS K. */
template <int HD>
__global__ void __launch_bounds__(FA_TC_THREADS)
    flash_tc_backward_dq_kernel(const bf16_bits *qkv, const float *lse, const bf16_bits *dy,
                                bf16_bits *dqkv, float scale, int hd, int heads, int t,
                                int tiles, bool vec)
{
    constexpr int B = fa_tc_tiles<HD>::B, LD = fa_tc_tiles<HD>::LD;
    FA_SHARED(smem);
    const fa_tc_bwd_smem<HD> m(smem);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const bf16_bits *q = qkv + at;
    bf16_bits *dq = dqkv + at;
    const int q0 = u.tile * B, w0 = (int)threadIdx.x / 32 * 16;

    fa_tc_query_tile<HD>(m, q, dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd,
                         lse + u.unit * (size_t)t, dq, ld, d, q0, t, hd, vec);
    float acc[HD / 8][4] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        fa_tc_stage<HD>(m.ks, q + d, ld, k0, t, hd, vec);
        fa_tc_stage<HD>(m.vs, q + 2 * d, ld, k0, t, hd, vec);
        __syncthreads();
        float s[B / 8][4] = {}, dp[B / 8][4] = {};
        fa_warp_abt<B, HD>(s, m.qs, LD, w0, m.ks, LD);   /* S = Q K^T */
        fa_warp_abt<B, HD>(dp, m.dys, LD, w0, m.vs, LD); /* dP = dY V^T */
        fa_tc_dscores(s, dp, m.row_lse, m.row_d, scale, q0, t,
                      [&](int r, int) { return q0 + w0 + r; },
                      [&](int, int col) { return k0 + col; });
        fa_warp_pb<HD, B>(acc, dp, m.ks, LD); /* dQ += dS K */
        __syncthreads(); /* before the next key tile overwrites ks and vs */
    }
    /* D's slot is overwritten here, read into row_d above by this block
     * alone (no other block reads these queries' D after kernel 2) */
    const float one[2] = {1.0f, 1.0f};
    fa_tc_store<HD>(dq, ld, q0 + w0, t, hd, acc, one);
}

#endif
