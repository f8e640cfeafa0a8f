/* The bf16 fused attention on the tensor cores (included by
 * cuda_flash_attention.cuh, whose shared-memory carving, causal mask, grid
 * order and D slot it shares; what the kernels compute is at the top of
 * cuda_flash_attention.cu), arranged as FlashAttention-2 arranges it: a
 * block of 4 warps owns a tile of 64 queries (or keys), each warp 16 of
 * them; the operand tiles (q, k, v, dy) sit in shared memory as the storage
 * holds them, row-major, and every product runs on mma.sync
 * (cuda_flash_mma.cuh) with its result left in the warp's registers: the
 * forward's scores, their online softmax and the output; the backward's
 * scores, P, dP and dS, and its dq, dk, dv. No [64 x 64] tile goes to
 * shared memory, and a key tile costs a block two barriers.
 *
 * The tiles a loop walks through (the forward's and dq's key tiles, dk
 * and dv's query tiles) are double-buffered: the next one's copies are in
 * flight (cp.async) while the warps multiply the current one. They are
 * copied 16 bytes a lane where a head's rows allow it (hd a multiple of
 * 8, the buffers 16-byte aligned: the host says, in `vec`), else stored an
 * element at a time (then the barrier alone publishes them); either way
 * zero past row t and past column hd. Rows are HD + 8 elements apart, so
 * that the 8 rows an ldmatrix phase reads fall in 8 different 16-byte
 * groups of banks.
 *
 * Head dims up to 128 (the buckets 32, 64, 80, 128): a warp keeps [16 x
 * hd] accumulators (two of them in the backward's dk and dv: 128
 * registers at 128), so 256 runs on the CUDA cores' kernels. */
#ifndef ACCUBENCH_CUDA_FLASH_TC_CUH
#define ACCUBENCH_CUDA_FLASH_TC_CUH

#include "cuda_flash_mma.cuh"

#define FA_TC_THREADS 128 /* 4 warps, 16 rows of a 64-row tile each */

/* The exponentials are fa_exp2's (cuda_flash_mma.cuh), so the scores are
 * scaled by scale log2(e) and the softmax's max is kept in those units:
 * exp(s scale - m) = 2^(s scale log2(e) - m log2(e)). */
#define FA_LOG2E 1.4426950408889634f
#define FA_LN2 0.6931471805599453f

template <int HD> struct fa_tc_tiles {
    static constexpr int B = 64;      /* queries (or keys) a tile */
    static constexpr int LD = HD + 8; /* a row of an operand tile, in elements */
    static constexpr int ELEMS = B * LD, OPND = ELEMS * 2; /* an operand tile */
    static constexpr int ROWS = 2 * B * 4; /* a query tile's lse and D */
    /* the forward's q and two buffers of k and v; the backward's tiles
     * read throughout (k and v, or q and dy) and two buffers of the tiles
     * it walks through (q, dy and their rows, or k and v) */
    static constexpr int FWD_BYTES = 5 * OPND;
    static constexpr int BWD_BYTES = 6 * OPND + 2 * ROWS;
    static_assert(HD % 16 == 0 && HD <= 128, "a tensor-core head dim: 32, 64, 80 or 128");
};

/* Rows row0 .. row0 + 64 of one head's part (element (i, e) at src[i * ld
 * + e], e < hd) into a row-major [64 x HD] tile (row stride LD): with
 * `vec` by copies in flight (the caller commits and waits for them), else
 * by stores. */
template <int HD>
__device__ __forceinline__ void fa_tc_stage(unsigned short *dst, const bf16_bits *src, size_t ld,
                                            int row0, int t, int hd, bool vec)
{
    constexpr int B = fa_tc_tiles<HD>::B, LD = fa_tc_tiles<HD>::LD, CH = HD / 8;
    if (vec) {
        for (int idx = (int)threadIdx.x; idx < B * CH; idx += FA_TC_THREADS) {
            const int i = idx / CH, e = idx % CH * 8;
            if (row0 + i < t && e < hd)
                fa_cp16(dst + i * LD + e, src + (size_t)(row0 + i) * ld + e);
            else
                *reinterpret_cast<int4 *>(dst + i * LD + e) = int4{0, 0, 0, 0};
        }
    } else {
        for (int idx = (int)threadIdx.x; idx < B * HD; idx += FA_TC_THREADS) {
            const int i = idx / HD, e = idx % HD;
            dst[i * LD + e] = row0 + i < t && e < hd ? src[(size_t)(row0 + i) * ld + e] : 0;
        }
    }
}

/* The pipeline's step before a loop's current buffers are read: the next
 * tiles' copies set going (stage_next, into the other buffers) where there
 * are next tiles, this thread's copies of the current ones waited for, and
 * the barrier that publishes everyone's. */
template <typename Stage>
__device__ __forceinline__ void fa_tc_advance(bool has_next, Stage stage_next)
{
    if (has_next) {
        stage_next();
        fa_cp_commit();
        fa_cp_wait<1>();
    } else {
        fa_cp_wait<0>();
    }
    __syncthreads();
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
    unsigned short *qs = c.take<unsigned short>(F::OPND);
    unsigned short *kbuf = c.take<unsigned short>(2 * F::OPND); /* two k tiles, two v */
    unsigned short *vbuf = c.take<unsigned short>(2 * F::OPND);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const bf16_bits *q = qkv + u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const int q0 = u.tile * B, w0 = (int)threadIdx.x / 32 * 16; /* the warp's first row */
    const float scale2 = scale * FA_LOG2E;
    auto stage_keys = [&](int kb) {
        const int at = kb % 2 * F::ELEMS;
        fa_tc_stage<HD>(kbuf + at, q + d, ld, kb * B, t, hd, vec);
        fa_tc_stage<HD>(vbuf + at, q + 2 * d, ld, kb * B, t, hd, vec);
    };

    fa_tc_stage<HD>(qs, q, ld, q0, t, hd, vec);
    stage_keys(0);
    fa_cp_commit();
    /* per row (g and g + 8): the running max (in log2 units), and this
     * lane's part of the running sum (its 16 columns; the quad's 4 parts
     * add at the end, all scaled alike) */
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    float o[HD / 8][4] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        fa_tc_advance(kb < u.tile, [&] { stage_keys(kb + 1); });
        const unsigned short *ks = kbuf + kb % 2 * F::ELEMS, *vs = vbuf + kb % 2 * F::ELEMS;
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
                    x = fa_seen(i, k0 + fa_frag_col(n) + k, t) ? x * scale2 : -INFINITY;
                    mx = fmaxf(mx, x);
                }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float m_new = fmaxf(m[half], mx);
            /* m -inf: nothing to shrink (and exp(-inf - -inf) is no
             * number); m_new -inf: the row sees no key yet, P is 0 */
            const float a = m[half] == -INFINITY ? 0.0f : fa_exp2(m[half] - m_new);
            float sum = 0.0f;
#pragma unroll
            for (int n = 0; n < B / 8; n++)
#pragma unroll
                for (int k = 0; k < 2; k++) {
                    float &x = s[n][2 * half + k];
                    x = x == -INFINITY ? 0.0f : fa_exp2(x - m_new);
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
        __syncthreads(); /* before the tile after next is copied into ks and vs */
    }
    float inv[2];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        l[half] += __shfl_xor_sync(0xffffffffu, l[half], 1);
        l[half] += __shfl_xor_sync(0xffffffffu, l[half], 2);
        const int i = q0 + w0 + fa_frag_row(half);
        /* every real row saw key 0, so l >= 1 there */
        if (i < t && threadIdx.x % 4 == 0)
            lse[u.unit * (size_t)t + (size_t)i] = m[half] * FA_LN2 + logf(l[half]);
        inv[half] = i < t ? 1.0f / l[half] : 0.0f;
    }
    fa_tc_store<HD>(y + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd, d, q0 + w0, t, hd, o,
                    inv);
}

/* --------------------------------------------------------------- backward */

/* A query tile's q and dy tiles, and each query's lse (times log2(e), for
 * fa_exp2) in rows[0, 64) and D in rows[64, 128) (0 past t; D read from
 * its dq slot, see cuda_flash_attention.cu). */
template <int HD>
__device__ __forceinline__ void fa_tc_query_tile(unsigned short *qs, unsigned short *dys,
                                                 float *rows, const bf16_bits *q,
                                                 const bf16_bits *dy, const float *lse,
                                                 const bf16_bits *dq, size_t ld, size_t d,
                                                 int q0, int t, int hd, bool vec)
{
    constexpr int B = fa_tc_tiles<HD>::B;
    fa_tc_stage<HD>(qs, q, ld, q0, t, hd, vec);
    fa_tc_stage<HD>(dys, dy, d, q0, t, hd, vec);
    for (int i = (int)threadIdx.x; i < B; i += FA_TC_THREADS) {
        const bool real = q0 + i < t;
        rows[i] = real ? lse[q0 + i] * FA_LOG2E : 0.0f;
        rows[B + i] = real ? unstash_f32(dq + (size_t)(q0 + i) * ld) : 0.0f;
    }
}

/* P and dS of a warp's [16 x 64] scores s and dp (in place): P again from
 * the lse, dS = P (dP - D) scale, in fp32. Fragment (r, c) is query
 * `query(r, c)` and key `key(r, c)`, the query's lse (times log2(e)) and D
 * at rows[query - q0] and rows[64 + query - q0] (fa_tc_query_tile's). */
template <typename Query, typename Key>
__device__ __forceinline__ void fa_tc_dscores(float (&s)[8][4], float (&dp)[8][4],
                                              const float *rows, float scale, int q0, int t,
                                              Query query, Key key)
{
    const float scale2 = scale * FA_LOG2E;
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int r = fa_frag_row(e / 2), col = fa_frag_col(n) + e % 2;
            const int i = query(r, col), j = key(r, col);
            const float p = fa_seen(i, j, t) ? fa_exp2(s[n][e] * scale2 - rows[i - q0]) : 0.0f;
            s[n][e] = p;
            dp[n][e] = p * (dp[n][e] - rows[64 + i - q0]) * scale;
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
    using F = fa_tc_tiles<HD>;
    constexpr int B = F::B, LD = F::LD;
    FA_SHARED(smem);
    fa_carve c{(char *)smem};
    unsigned short *ks = c.take<unsigned short>(F::OPND), *vs = c.take<unsigned short>(F::OPND);
    unsigned short *qbuf = c.take<unsigned short>(2 * F::OPND); /* two of each */
    unsigned short *dybuf = c.take<unsigned short>(2 * F::OPND);
    float *rowbuf = c.take<float>(2 * F::ROWS);
    /* the first key tiles see the most queries: they go first */
    const fa_unit u = fa_unit_of(heads, tiles, false);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const bf16_bits *q = qkv + at, *dyu = dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd;
    const float *lseu = lse + u.unit * (size_t)t;
    bf16_bits *dq = dqkv + at;
    const int k0 = u.tile * B, w0 = (int)threadIdx.x / 32 * 16;
    auto stage_queries = [&](int qb) {
        const int b = qb % 2;
        fa_tc_query_tile<HD>(qbuf + b * F::ELEMS, dybuf + b * F::ELEMS, rowbuf + b * 2 * B, q,
                             dyu, lseu, dq, ld, d, qb * B, t, hd, vec);
    };

    fa_tc_stage<HD>(ks, q + d, ld, k0, t, hd, vec);
    fa_tc_stage<HD>(vs, q + 2 * d, ld, k0, t, hd, vec);
    stage_queries(u.tile);
    fa_cp_commit();
    float dk[HD / 8][4] = {}, dv[HD / 8][4] = {};
    for (int qb = u.tile; qb < tiles; qb++) {
        const int q0 = qb * B, b = qb % 2;
        fa_tc_advance(qb + 1 < tiles, [&] { stage_queries(qb + 1); });
        const unsigned short *qs = qbuf + b * F::ELEMS, *dys = dybuf + b * F::ELEMS;
        float s[B / 8][4] = {}, dp[B / 8][4] = {};
        fa_warp_abt<B, HD>(s, ks, LD, w0, qs, LD);   /* S^T = K Q^T */
        fa_warp_abt<B, HD>(dp, vs, LD, w0, dys, LD); /* dP^T = V dY^T */
        fa_tc_dscores(s, dp, rowbuf + b * 2 * B, scale, q0, t,
                      [&](int, int col) { return q0 + col; },
                      [&](int r, int) { return k0 + w0 + r; });
        fa_warp_pb<HD, B>(dv, s, dys, LD); /* dV += P^T dY */
        fa_warp_pb<HD, B>(dk, dp, qs, LD); /* dK += dS^T Q */
        __syncthreads(); /* before the tile after next is copied into these buffers */
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
    using F = fa_tc_tiles<HD>;
    constexpr int B = F::B, LD = F::LD;
    FA_SHARED(smem);
    fa_carve c{(char *)smem};
    unsigned short *qs = c.take<unsigned short>(F::OPND), *dys = c.take<unsigned short>(F::OPND);
    float *rows = c.take<float>(F::ROWS);
    unsigned short *kbuf = c.take<unsigned short>(2 * F::OPND); /* two of each */
    unsigned short *vbuf = c.take<unsigned short>(2 * F::OPND);
    const fa_unit u = fa_unit_of(heads, tiles, true);
    const size_t d = (size_t)heads * (size_t)hd, ld = 3 * d;
    const size_t at = u.seq * (size_t)t * ld + (size_t)u.h * (size_t)hd;
    const bf16_bits *q = qkv + at;
    bf16_bits *dq = dqkv + at;
    const int q0 = u.tile * B, w0 = (int)threadIdx.x / 32 * 16;
    auto stage_keys = [&](int kb) {
        const int b = kb % 2 * F::ELEMS;
        fa_tc_stage<HD>(kbuf + b, q + d, ld, kb * B, t, hd, vec);
        fa_tc_stage<HD>(vbuf + b, q + 2 * d, ld, kb * B, t, hd, vec);
    };

    fa_tc_query_tile<HD>(qs, dys, rows, q, dy + u.seq * (size_t)t * d + (size_t)u.h * (size_t)hd,
                         lse + u.unit * (size_t)t, dq, ld, d, q0, t, hd, vec);
    stage_keys(0);
    fa_cp_commit();
    float acc[HD / 8][4] = {};
    for (int kb = 0; kb <= u.tile; kb++) {
        const int k0 = kb * B;
        fa_tc_advance(kb < u.tile, [&] { stage_keys(kb + 1); });
        const unsigned short *ks = kbuf + kb % 2 * F::ELEMS, *vs = vbuf + kb % 2 * F::ELEMS;
        float s[B / 8][4] = {}, dp[B / 8][4] = {};
        fa_warp_abt<B, HD>(s, qs, LD, w0, ks, LD);   /* S = Q K^T */
        fa_warp_abt<B, HD>(dp, dys, LD, w0, vs, LD); /* dP = dY V^T */
        fa_tc_dscores(s, dp, rows, scale, q0, t, [&](int r, int) { return q0 + w0 + r; },
                      [&](int, int col) { return k0 + col; });
        fa_warp_pb<HD, B>(acc, dp, ks, LD); /* dQ += dS K */
        __syncthreads(); /* before the tile after next is copied into ks and vs */
    }
    /* D's slot is overwritten here, read into rows above by this block
     * alone (no other block reads these queries' D after kernel 2) */
    const float one[2] = {1.0f, 1.0f};
    fa_tc_store<HD>(dq, ld, q0 + w0, t, hd, acc, one);
}

#endif
