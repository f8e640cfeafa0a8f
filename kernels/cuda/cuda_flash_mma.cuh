/* The PTX pieces of the bf16 fused attention (cuda_flash_tc.cuh): the
 * warp-wide mma.sync m16n8k16 (bf16 operands, fp32 accumulators) and
 * ldmatrix, which gathers its operands from shared memory, the two warp
 * products built from them, cp.async and the special-function unit's
 * ex2. The fragments' layouts are PTX's documented ones, so that a
 * product's result stays in registers with a known owner: the softmax
 * runs on the scores where the mma left them, and P (and dS) feed the
 * next product from those registers, as FlashAttention-2 arranges it. g = lane / 4 and c = lane % 4 below.
 *
 *   A (16 x 16, row): a[0] = A(g, 2c..2c+1), a[1] = A(g+8, 2c..),
 *                     a[2] = A(g, 2c+8..), a[3] = A(g+8, 2c+8..)
 *   B (16 x 8, col):  b[0] = B(2c..2c+1, g), b[1] = B(2c+8.., g)
 *   C (16 x 8, f32):  c[0..1] = C(g, 2c..2c+1), c[2..3] = C(g+8, 2c..)
 *
 * a register holding two bf16, the lower column (or row, for B) in its low
 * half. tests/kernels/mma_emulation.h stands in for all of the calls
 * below on the host (FA_MMA_EMULATED): the warp's ones from the layouts
 * above, cp.async as copies made when their group is waited for. */
#ifndef ACCUBENCH_CUDA_FLASH_MMA_CUH
#define ACCUBENCH_CUDA_FLASH_MMA_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "the bf16 fused attention needs sm_80 or later (mma.sync m16n8k16 in bf16)"
#endif

#ifndef FA_MMA_EMULATED
/* d += a b for one 16 x 8 tile, k = 16 */
__device__ __forceinline__ void fa_mma(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                       unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Four 8 x 8 bf16 matrices, matrix j's row r at the address lane 8 j + r
 * gives (16 bytes, 16-byte aligned): r[j] = its (g, 2c..2c+1), or with
 * `_t` its (2c..2c+1, g), the transpose's. */
__device__ __forceinline__ void fa_ldsm_x4(unsigned (&r)[4], const unsigned short *row)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
}
__device__ __forceinline__ void fa_ldsm_x4_t(unsigned (&r)[4], const unsigned short *row)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
}

/* 2^x on the special-function unit (ex2.approx: about 2 ulp, 0 at -inf):
 * one instruction where elementwise.h's exact-to-the-CPU ew_exp is about
 * 25, which would make the exponentials, not the tensor cores, bound the
 * kernels; what it feeds is rounded to bf16 (2^-9) anyway. */
__device__ __forceinline__ float fa_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* cp.async: 16 bytes from global to shared memory without passing
 * through registers (.cg: cached in L2 only), in flight while the thread
 * goes on; fa_cp_commit closes the thread's group of copies so far, and
 * fa_cp_wait<N> waits until at most N of its groups are still in flight.
 * Each thread waits for its own copies: a barrier after the wait publishes
 * them to the block. Both addresses 16-byte aligned. */
__device__ __forceinline__ void fa_cp16(void *dst, const void *src)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(dst);
    const size_t from = __cvta_generic_to_global(src);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(at), "l"(from) : "memory");
}
__device__ __forceinline__ void fa_cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void fa_cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* lo and hi rounded to bf16 (to nearest even), lo in the low half */
__device__ __forceinline__ unsigned fa_pack_bf16(float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#endif

/* A warp's [16 x N] fp32 product in C fragments: acc[n] is columns 8n.. */
template <int N> using fa_rows = float[N / 8][4];

/* acc += A B^T: A the rows a_row0.. a_row0 + 16 of a row-major bf16 tile
 * (row stride lda), B a row-major [N x K] one (stride ldb): each k step one
 * A fragment, and one ldmatrix for each two of B's 8-column tiles. */
template <int N, int K>
__device__ __forceinline__ void fa_warp_abt(fa_rows<N> &acc, const unsigned short *a, int lda,
                                            int a_row0, const unsigned short *b, int ldb)
{
    static_assert(N % 16 == 0 && K % 16 == 0, "fa_warp_abt: tiles of 16");
    const int lane = (int)threadIdx.x % 32;
    /* A's matrices: rows 0-7 and 8-15 of k 0-7, then of k 8-15; B's: rows
     * (B's n) 0-7 at k 0-7 and at k 8-15, then rows 8-15 likewise */
    const unsigned short *ap = a + (a_row0 + lane % 16) * lda + lane / 16 * 8;
    const unsigned short *bp = b + (lane % 8 + lane / 16 * 8) * ldb + lane / 8 % 2 * 8;
#pragma unroll
    for (int k = 0; k < K; k += 16) {
        unsigned af[4];
        fa_ldsm_x4(af, ap + k);
#pragma unroll
        for (int n = 0; n < N; n += 16) {
            unsigned bf[4];
            fa_ldsm_x4(bf, bp + n * ldb + k);
            fa_mma(acc[n / 8], af, bf[0], bf[1]);
            fa_mma(acc[n / 8 + 1], af, bf[2], bf[3]);
        }
    }
}

/* acc += P B: P a warp's [16 x K] fp32 product in its C fragments (the
 * scores' probabilities, say), rounded to bf16 as it becomes A fragments
 * (two 8-column C tiles make one: FlashAttention-2's reuse of registers);
 * B the rows 0.. K of a row-major [K x N] bf16 tile (stride ldb), read
 * transposed by ldmatrix into B fragments. */
template <int N, int K>
__device__ __forceinline__ void fa_warp_pb(fa_rows<N> &acc, const fa_rows<K> &p,
                                           const unsigned short *b, int ldb)
{
    static_assert(N % 16 == 0 && K % 16 == 0, "fa_warp_pb: tiles of 16");
    const int lane = (int)threadIdx.x % 32;
    /* B's matrices: rows (k) 0-7 and 8-15 of columns 0-7, then of 8-15 */
    const unsigned short *bp = b + (lane % 16) * ldb + lane / 16 * 8;
#pragma unroll
    for (int k = 0; k < K; k += 16) {
        const unsigned af[4] = {fa_pack_bf16(p[k / 8][0], p[k / 8][1]),
                                fa_pack_bf16(p[k / 8][2], p[k / 8][3]),
                                fa_pack_bf16(p[k / 8 + 1][0], p[k / 8 + 1][1]),
                                fa_pack_bf16(p[k / 8 + 1][2], p[k / 8 + 1][3])};
#pragma unroll
        for (int n = 0; n < N; n += 16) {
            unsigned bf[4];
            fa_ldsm_x4_t(bf, bp + k * ldb + n);
            fa_mma(acc[n / 8], af, bf[0], bf[1]);
            fa_mma(acc[n / 8 + 1], af, bf[2], bf[3]);
        }
    }
}

#endif
