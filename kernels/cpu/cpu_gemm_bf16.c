/* The CPU backend's GEMM over bf16 operands: C = alpha op(A) op(B) +
 * beta C, A and B in bf16, C in fp32 (weight gradients, accumulated with
 * beta = 1) or bf16 (activations), products summed in fp32 and C rounded
 * once, as cuBLAS's bf16 path does with CUBLAS_COMPUTE_32F.
 *
 * C is cut into tiles of TILE x TILE, a tile one thread's. Where oneDNN's
 * bf16 GEMM computes on this host (AVX-512 and later), a tile is one call
 * of it on the operands where they lie. Elsewhere a tile is made by the
 * fp32 GEMM (the library cpu_sgemm uses) over panels of A and B converted
 * to fp32, TILE deep at a time: the portable path, at the fp32 GEMM's speed
 * less the conversions (each element of A converted once per TILE columns
 * of C, each of B once per TILE rows). The panels are the tile's own,
 * 768 KiB a thread at most: never a whole operand, so that what a bf16 run
 * holds beyond its buffers does not grow with the model. */
#include "cpu_gemm_bf16.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_bf16.h"
#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "cpu_onednn.h"

#define TILE 256

typedef struct bf16_job {
    int trans_a, trans_b, m, n, k;
    float alpha, beta;
    const bf16_bits *a, *b;
    int lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    void *c;
    storage c_storage;
    int tiles_m, tiles_n;
    int onednn;        /* oneDNN's bf16 GEMM computes here */
    int out_of_memory; /* set by a chunk that could not get its panels */
} bf16_job;

/* op(A)'s rows [i0, i0 + mb) x columns [l0, l0 + kb) in fp32, laid out as
 * A is (transposed or not) with its own leading dimension: returned. */
CPU_HOT static int panel_a(const bf16_job *g, const bf16_bits *a, int i0, int mb, int l0, int kb,
                           float *out)
{
    if (!g->trans_a) { /* A is m x k: a column of the panel is mb elements */
        for (int l = 0; l < kb; l++)
            bf16_to_f32(a + (size_t)(l0 + l) * g->lda + i0, out + (size_t)l * mb, (size_t)mb);
        return mb;
    }
    for (int i = 0; i < mb; i++) /* A is k x m */
        bf16_to_f32(a + (size_t)(i0 + i) * g->lda + l0, out + (size_t)i * kb, (size_t)kb);
    return kb;
}

/* op(B)'s rows [l0, l0 + kb) x columns [j0, j0 + nb), as panel_a. */
CPU_HOT static int panel_b(const bf16_job *g, const bf16_bits *b, int l0, int kb, int j0, int nb,
                           float *out)
{
    if (!g->trans_b) { /* B is k x n */
        for (int j = 0; j < nb; j++)
            bf16_to_f32(b + (size_t)(j0 + j) * g->ldb + l0, out + (size_t)j * kb, (size_t)kb);
        return kb;
    }
    for (int l = 0; l < kb; l++) /* B is n x k */
        bf16_to_f32(b + (size_t)(l0 + l) * g->ldb + j0, out + (size_t)l * nb, (size_t)nb);
    return nb;
}

/* The tile's C as fp32 (where C is bf16, into `scratch` when beta reads
 * it) and where it lies; *ld its leading dimension. */
CPU_HOT static float *tile_c_in(const bf16_job *g, void *c, int i0, int mb, int j0, int nb,
                                float *scratch, int *ld)
{
    if (g->c_storage == STORAGE_F32) {
        *ld = g->ldc;
        return (float *)c + i0 + (size_t)j0 * g->ldc;
    }
    *ld = mb;
    if (g->beta != 0.0f) /* beta 0: C is not read, as in BLAS (it may hold NaN) */
        for (int j = 0; j < nb; j++)
            bf16_to_f32((const bf16_bits *)c + i0 + (size_t)(j0 + j) * g->ldc,
                        scratch + (size_t)j * mb, (size_t)mb);
    return scratch;
}

CPU_HOT static void tile_c_out(const bf16_job *g, void *c, int i0, int mb, int j0, int nb,
                               const float *scratch)
{
    if (g->c_storage == STORAGE_F32)
        return;
    for (int j = 0; j < nb; j++)
        f32_to_bf16(scratch + (size_t)j * mb, (bf16_bits *)c + i0 + (size_t)(j0 + j) * g->ldc,
                    (size_t)mb);
}

/* Tile `t` (product, then tile row, then tile column). */
static void one_tile(const bf16_job *g, size_t t, float *pa, float *pb, float *pc)
{
    size_t per_product = (size_t)g->tiles_m * (size_t)g->tiles_n;
    int64_t p = (int64_t)(t / per_product);
    int i0 = (int)(t % per_product / (size_t)g->tiles_n) * TILE;
    int j0 = (int)(t % (size_t)g->tiles_n) * TILE;
    int mb = g->m - i0 < TILE ? g->m - i0 : TILE, nb = g->n - j0 < TILE ? g->n - j0 : TILE;
    const bf16_bits *a = g->a + p * g->stride_a, *b = g->b + p * g->stride_b;
    void *c = (char *)g->c + p * g->stride_c * (int64_t)storage_bytes(g->c_storage);
    int ldc;
    float *cf = tile_c_in(g, c, i0, mb, j0, nb, pc, &ldc);
    if (g->onednn) {
        const bf16_bits *at = a + (g->trans_a ? (size_t)i0 * g->lda : (size_t)i0);
        const bf16_bits *bt = b + (g->trans_b ? (size_t)j0 : (size_t)j0 * g->ldb);
        if (!cpu_onednn_gemm_bf16(g->trans_a, g->trans_b, mb, nb, g->k, g->alpha, at, g->lda,
                                  bt, g->ldb, g->beta, cf, ldc)) {
            tile_c_out(g, c, i0, mb, j0, nb, cf);
            return;
        }
    }
    /* k blocks summed into the fp32 tile; beta applies to the first. A k of
     * 0 still runs one product: C = beta C. */
    for (int l0 = 0; l0 < g->k || l0 == 0; l0 += TILE) {
        int kb = g->k - l0 < TILE ? g->k - l0 : TILE;
        int lda = panel_a(g, a, i0, mb, l0, kb, pa), ldb = panel_b(g, b, l0, kb, j0, nb, pb);
        cpu_sgemm_in_loop(g->trans_a, g->trans_b, mb, nb, kb, g->alpha, pa, lda > 0 ? lda : 1,
                          pb, ldb > 0 ? ldb : 1, l0 ? 1.0f : g->beta, cf, ldc);
        if (kb <= 0)
            break;
    }
    tile_c_out(g, c, i0, mb, j0, nb, cf);
}

static void tiles(void *ctx, size_t first, size_t last)
{
    bf16_job *g = ctx;
    float *scratch = malloc(3 * (size_t)TILE * TILE * sizeof *scratch);
    if (!scratch) {
        __atomic_store_n(&g->out_of_memory, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t t = first; t < last; t++)
        one_tile(g, t, scratch, scratch + TILE * TILE, scratch + 2 * TILE * TILE);
    free(scratch);
}

int cpu_gemm_bf16(const gemm_desc *d)
{
    if (d->m <= 0 || d->n <= 0)
        return 0;
    int batch = d->batch > 1 ? d->batch : 1;
    bf16_job g = {d->trans_a, d->trans_b, d->m, d->n, d->k, d->alpha, d->beta, d->a, d->b,
                  d->lda, d->ldb, d->ldc, d->stride_a, d->stride_b, d->stride_c, d->c,
                  d->c_storage, (d->m + TILE - 1) / TILE, (d->n + TILE - 1) / TILE,
                  cpu_onednn_has_gemm_bf16(), 0};
    size_t count = (size_t)batch * (size_t)g.tiles_m * (size_t)g.tiles_n;
    /* At least about 2^20 multiply-adds a chunk, as the fp32 batches. */
    size_t work = (size_t)(d->m < TILE ? d->m : TILE) * (size_t)(d->n < TILE ? d->n : TILE) *
                  (size_t)(d->k > 0 ? d->k : 1);
    cpu_gemm_parallel_for(count, ((size_t)1 << 20) / work + 1, tiles, &g);
    return g.out_of_memory ? -1 : 0;
}

const char *cpu_gemm_bf16_description(void)
{
    return cpu_onednn_has_gemm_bf16() ? "bf16 GEMM: oneDNN's"
                                      : "bf16 GEMM: fp32 over converted panels";
}
