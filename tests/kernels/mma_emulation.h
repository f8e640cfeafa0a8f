/* The tensor-core calls of the bf16 fused attention (kernels/cuda/
 * cuda_flash_mma.cuh: mma.sync m16n8k16 and ldmatrix x4, plain and
 * transposed) on the host, for tests/kernels/flash_emulation.cc: included
 * there after cuda_emulation.h, and never seen by the real build.
 *
 * Each is a warp's collective, as on the device: every lane publishes what
 * it holds (its fragment registers, or its row's address), the warp meets
 * at its barrier, each lane builds its own result from the lanes' values
 * by PTX's documented fragment layouts (the table at the top of
 * cuda_flash_mma.cuh), and the warp meets again before any slot is
 * reused. So a lane whose registers hold the wrong elements, a fragment
 * read as another's layout, or a lane that skips the call (the warp then
 * waits until emu_start's limit ends the run) shows in the results. The
 * mma adds its 16 products (each exact in fp32: two bf16) in k order, one
 * rounding each; the device's order within a k step is not given, so a
 * last bit may differ. ldmatrix checks what the device needs of a row's
 * address, and aborts with the reason otherwise: 16-byte aligned from the
 * base of the block's shared memory, and inside it. cp.async is below. */
#ifndef ACCUBENCH_MMA_EMULATION_H
#define ACCUBENCH_MMA_EMULATION_H

#define FA_MMA_EMULATED

static unsigned emu_mma_a[EMU_MAX_THREADS][4], emu_mma_b[EMU_MAX_THREADS][2];
static const unsigned short *emu_ldsm_row[EMU_MAX_THREADS];

static inline float emu_bf16_lo(unsigned r) { return ew_bf16_bits_to_f32((unsigned short)r); }
static inline float emu_bf16_hi(unsigned r) { return ew_bf16_bits_to_f32((unsigned short)(r >> 16)); }

/* the first thread of the caller's warp, and the caller's g and c */
static inline unsigned emu_warp0() { return emu_tid / 32 * 32; }
static inline void emu_warp_meet() { pthread_barrier_wait(&emu_warp_bar[emu_tid / 32]); }

static inline void fa_mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    memcpy(emu_mma_a[emu_tid], a, sizeof a);
    emu_mma_b[emu_tid][0] = b0;
    emu_mma_b[emu_tid][1] = b1;
    emu_warp_meet();
    /* the whole A (16 x 16) and B (16 x 8) from the lanes' registers */
    float A[16][16], Bm[16][8];
    for (unsigned lane = 0; lane < 32; lane++) {
        const unsigned *ra = emu_mma_a[emu_warp0() + lane], *rb = emu_mma_b[emu_warp0() + lane];
        const int g = (int)lane / 4, c = (int)lane % 4;
        for (int reg = 0; reg < 4; reg++) {
            const int row = g + 8 * (reg % 2), col = 2 * c + 8 * (reg / 2);
            A[row][col] = emu_bf16_lo(ra[reg]);
            A[row][col + 1] = emu_bf16_hi(ra[reg]);
        }
        for (int reg = 0; reg < 2; reg++) {
            Bm[2 * c + 8 * reg][g] = emu_bf16_lo(rb[reg]);
            Bm[2 * c + 8 * reg + 1][g] = emu_bf16_hi(rb[reg]);
        }
    }
    const int g = (int)(emu_tid % 32) / 4, c = (int)(emu_tid % 32) % 4;
    for (int e = 0; e < 4; e++) {
        const int row = g + 8 * (e / 2), col = 2 * c + e % 2;
        float s = d[e];
        for (int k = 0; k < 16; k++)
            s = fmaf(A[row][k], Bm[k][col], s);
        d[e] = s;
    }
    emu_warp_meet();
}

/* lane `from`'s row address, checked as the device would need it */
static inline const unsigned short *emu_ldsm_row_of(unsigned from)
{
    const unsigned short *p = emu_ldsm_row[emu_warp0() + from];
    const long off = (long)((const char *)p - (const char *)emu_smem);
    const char *why = nullptr;
    if (off % 16)
        why = "a row's address is not 16-byte aligned";
    else if (off < 0 || off + 16 > (long)(emu_smem_floats * sizeof(float)))
        why = "a row is outside shared memory";
    if (why) {
        fprintf(stderr, "ldmatrix emulation: lane %u: %s (offset %ld bytes)\n", from, why, off);
        abort();
    }
    return p;
}

static inline void emu_ldsm(unsigned (&r)[4], const unsigned short *row, bool trans)
{
    emu_ldsm_row[emu_tid] = row;
    emu_warp_meet();
    const unsigned g = emu_tid % 32 / 4, c = emu_tid % 32 % 4;
    for (unsigned j = 0; j < 4; j++) {
        unsigned short lo, hi;
        if (trans) { /* the transpose's (g, 2c..): column g of rows 2c and 2c + 1 */
            lo = emu_ldsm_row_of(8 * j + 2 * c)[g];
            hi = emu_ldsm_row_of(8 * j + 2 * c + 1)[g];
        } else { /* (g, 2c..): row g's columns 2c and 2c + 1 */
            lo = emu_ldsm_row_of(8 * j + g)[2 * c];
            hi = emu_ldsm_row_of(8 * j + g)[2 * c + 1];
        }
        r[j] = (unsigned)lo | (unsigned)hi << 16;
    }
    emu_warp_meet();
}
static inline void fa_ldsm_x4(unsigned (&r)[4], const unsigned short *row) { emu_ldsm(r, row, false); }
static inline void fa_ldsm_x4_t(unsigned (&r)[4], const unsigned short *row) { emu_ldsm(r, row, true); }

/* cp.async: each thread's copies queued in order, grouped by its commits,
 * and made only when a wait lets their group land; so a tile read before
 * its wait and barrier is read as it was (NaN, or the tile before), and
 * the results show it. */
struct emu_copy {
    void *dst;
    const void *src;
};
static thread_local std::vector<emu_copy> emu_cp_queued;
static thread_local std::vector<size_t> emu_cp_group_ends; /* into emu_cp_queued */

static inline void fa_cp16(void *dst, const void *src)
{
    const long off = (long)((const char *)dst - (const char *)emu_smem);
    const char *why = nullptr;
    if (off % 16 || (uintptr_t)src % 16)
        why = "an address is not 16-byte aligned";
    else if (off < 0 || off + 16 > (long)(emu_smem_floats * sizeof(float)))
        why = "the destination is outside shared memory";
    if (why) {
        fprintf(stderr, "cp.async emulation: %s (shared offset %ld bytes)\n", why, off);
        abort();
    }
    emu_cp_queued.push_back({dst, src});
}
static inline void fa_cp_commit() { emu_cp_group_ends.push_back(emu_cp_queued.size()); }
template <int N> static inline void fa_cp_wait()
{
    const size_t groups = emu_cp_group_ends.size();
    if (groups <= (size_t)N)
        return;
    const size_t landed = emu_cp_group_ends[groups - N - 1]; /* copies in the landed groups */
    for (size_t i = 0; i < landed; i++)
        memcpy(emu_cp_queued[i].dst, emu_cp_queued[i].src, 16);
    emu_cp_queued.erase(emu_cp_queued.begin(), emu_cp_queued.begin() + (long)landed);
    emu_cp_group_ends.erase(emu_cp_group_ends.begin(),
                            emu_cp_group_ends.begin() + (long)(groups - N));
    for (size_t &end : emu_cp_group_ends)
        end -= landed;
}

static inline float fa_exp2(float x) { return exp2f(x); }

static inline unsigned fa_pack_bf16(float lo, float hi)
{
    return (unsigned)ew_f32_to_bf16_bits(lo) | (unsigned)ew_f32_to_bf16_bits(hi) << 16;
}

#endif
