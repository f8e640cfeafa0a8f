/* The portable GEMM: what the CPU backend runs with no BLAS library, and
 * what the tests check the libraries against. */
#include "cpu_gemm.h"
#include "cpu_parallel.h"

#include <string.h>

/* The portable GEMM, blocked the way BLAS libraries are: a KC x NC panel
 * of B and an MC x KC block of A are packed (zero-padded to whole tiles) so
 * that a register tile of C, MR x NR, accumulates over the whole KC depth
 * before it touches memory. With FMA (AVX) the 16 x 4 tile lives in eight
 * ymm registers. Column panels run on separate threads. */
enum { MR = 16, NR = 4, MC = 128, KC = 256, NC = 256 };

static inline float elem(const float *x, int ld, int trans, int row, int col)
{
    return trans ? x[(size_t)col + (size_t)row * ld] : x[(size_t)row + (size_t)col * ld];
}

/* The tile gets an FMA (AVX) clone picked at load time by a CPU feature
 * check; the default clone runs anywhere. (Not "arch=haswell": that clone
 * is picked only on an Intel Haswell, never on a Zen.) None under
 * ThreadSanitizer: see CPU_HOT (cpu_internal.h). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define GEMM_HOT __attribute__((target_clones("fma", "default")))
#else
#define GEMM_HOT
#endif

/* Eight floats: GCC's vector extension, lowered to one ymm register with
 * AVX and to two xmm registers without. */
typedef float v8 __attribute__((vector_size(32)));

/* acc = A tile (MR x kb, packed by column) x B tile (kb x NR, packed by
 * row), held in NR x 2 vector registers; then C (mb x nb valid) += alpha *
 * acc. */
GEMM_HOT static void tile(int kb, const float *ap, const float *bp, float alpha, float *c,
                          int ldc, int mb, int nb)
{
    v8 acc[NR][2] = {{{0}}};
    for (int p = 0; p < kb; p++) {
        v8 a0, a1;
        memcpy(&a0, ap + (size_t)p * MR, sizeof a0);
        memcpy(&a1, ap + (size_t)p * MR + 8, sizeof a1);
        for (int j = 0; j < NR; j++) {
            float bj = bp[(size_t)p * NR + j];
            acc[j][0] += a0 * bj;
            acc[j][1] += a1 * bj;
        }
    }
    for (int j = 0; j < nb; j++) {
        float out[MR];
        memcpy(out, acc[j], sizeof out);
        for (int i = 0; i < mb; i++)
            c[i + (size_t)j * ldc] += alpha * out[i];
    }
}

typedef struct gemm_job {
    int trans_a, trans_b, m, n, k;
    float alpha;
    const float *a, *b;
    int lda, ldb, ldc;
    float *c;
} gemm_job;

/* Columns [first, last) of C, in NC-wide panels. */
static void gemm_columns(void *ctx, size_t first, size_t last)
{
    const gemm_job *g = ctx;
    static _Thread_local float apack[MC * KC], bpack[KC * NC];
    for (int j0 = (int)first; j0 < (int)last; j0 += NC) {
        int nb = (int)last - j0 < NC ? (int)last - j0 : NC;
        int nb_pad = (nb + NR - 1) / NR * NR;
        for (int p0 = 0; p0 < g->k; p0 += KC) {
            int kb = g->k - p0 < KC ? g->k - p0 : KC;
            /* B panel: for each NR-wide column group, kb rows of NR values. */
            for (int j = 0; j < nb_pad; j += NR)
                for (int p = 0; p < kb; p++)
                    for (int jj = 0; jj < NR; jj++)
                        bpack[(size_t)j * kb + (size_t)p * NR + jj] =
                            j + jj < nb ? elem(g->b, g->ldb, g->trans_b, p0 + p, j0 + j + jj)
                                        : 0.0f;
            for (int i0 = 0; i0 < g->m; i0 += MC) {
                int mb = g->m - i0 < MC ? g->m - i0 : MC;
                int mb_pad = (mb + MR - 1) / MR * MR;
                /* A block: for each MR-tall row group, kb columns of MR values. */
                for (int i = 0; i < mb_pad; i += MR)
                    for (int p = 0; p < kb; p++)
                        for (int ii = 0; ii < MR; ii++)
                            apack[(size_t)i * kb + (size_t)p * MR + ii] =
                                i + ii < mb ? elem(g->a, g->lda, g->trans_a, i0 + i + ii, p0 + p)
                                            : 0.0f;
                for (int j = 0; j < nb_pad; j += NR)
                    for (int i = 0; i < mb_pad; i += MR)
                        tile(kb, apack + (size_t)i * kb, bpack + (size_t)j * kb, g->alpha,
                             g->c + (size_t)(i0 + i) + (size_t)(j0 + j) * g->ldc, g->ldc,
                             mb - i < MR ? mb - i : MR, nb - j < NR ? nb - j : NR);
            }
        }
    }
}

/* C = beta C, the first step of every product (beta = 0 overwrites C, so
 * that NaN in an unset C does not survive). */
static void scale_c(int m, int n, float beta, float *c, int ldc)
{
    for (int j = 0; j < n; j++) {
        float *cj = c + (size_t)j * ldc;
        if (beta == 0.0f)
            memset(cj, 0, (size_t)m * sizeof *cj);
        else if (beta != 1.0f)
            for (int i = 0; i < m; i++)
                cj[i] *= beta;
    }
}

/* Whether a product is too small to split between threads: its columns
 * then run on one thread, and a batch of such products is split instead. */
static int product_runs_alone(int m, int k)
{
    return (size_t)m * (size_t)k < ((size_t)1 << 18);
}

void cpu_sgemm_portable(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb,
                        float beta, float *c, int ldc)
{
    scale_c(m, n, beta, c, ldc);
    if (k == 0 || alpha == 0.0f || m == 0 || n == 0)
        return;
    gemm_job g = {trans_a, trans_b, m, n, k, alpha, a, b, lda, ldb, ldc, c};
    /* Whole panels per thread, and only when there is work for several. */
    size_t min_cols = product_runs_alone(m, k) ? (size_t)n : NC;
    cpu_parallel_for((size_t)n, min_cols, gemm_columns, &g);
}

typedef struct batch_job {
    gemm_job g;
    float beta;
    int64_t stride_a, stride_b, stride_c;
} batch_job;

/* Products [first, last) of a batch, each on the calling thread. */
static void gemm_products(void *ctx, size_t first, size_t last)
{
    const batch_job *job = ctx;
    for (size_t i = first; i < last; i++) {
        gemm_job g = job->g;
        g.a += (int64_t)i * job->stride_a;
        g.b += (int64_t)i * job->stride_b;
        g.c += (int64_t)i * job->stride_c;
        scale_c(g.m, g.n, job->beta, g.c, g.ldc);
        if (g.k > 0 && g.alpha != 0.0f && g.m > 0 && g.n > 0)
            gemm_columns(&g, 0, (size_t)g.n);
    }
}

void cpu_sgemm_portable_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                                const float *a, int lda, int64_t stride_a, const float *b,
                                int ldb, int64_t stride_b, float beta, float *c, int ldc,
                                int64_t stride_c, int batch)
{
    if (batch <= 1 || !product_runs_alone(m, k)) {
        /* Large products split their own columns between threads. */
        for (int i = 0; i < (batch > 1 ? batch : 1); i++)
            cpu_sgemm_portable(trans_a, trans_b, m, n, k, alpha, a + (int64_t)i * stride_a,
                               lda, b + (int64_t)i * stride_b, ldb, beta,
                               c + (int64_t)i * stride_c, ldc);
        return;
    }
    /* Small ones (attention's per-head products) go whole to threads, with
     * about 2^21 multiply-adds per thread at least. */
    batch_job job = {{trans_a, trans_b, m, n, k, alpha, a, b, lda, ldb, ldc, c}, beta,
                     stride_a, stride_b, stride_c};
    size_t work = (size_t)m * (size_t)n * (size_t)(k > 0 ? k : 1);
    cpu_parallel_for((size_t)batch, ((size_t)1 << 21) / work + 1, gemm_products, &job);
}
