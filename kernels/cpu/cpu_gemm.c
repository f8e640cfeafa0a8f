/* CPU GEMM: OpenBLAS cblas_sgemm, or a portable blocked fallback. */
#include "cpu_gemm.h"
#include "cpu_parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ACCUBENCH_HAVE_OPENBLAS
#include "cpu_openblas.h"
#endif

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
 * is picked only on an Intel Haswell, never on a Zen.) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
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

#ifdef ACCUBENCH_HAVE_OPENBLAS
/* OpenBLAS meets beta = 0 with a pass of its own that zeroes C with plain
 * stores (each line read for ownership first) before the kernel adds into
 * it. memset zeroes at the write bandwidth, and just before the kernel, so
 * C is still in cache when it is read: the same sums (0 + x is x) for less
 * memory traffic. */
static void zero_for_beta0(int m, int n, float *beta, float *c, int ldc)
{
    if (*beta != 0.0f || m <= 0)
        return;
    if (ldc == m)
        memset(c, 0, (size_t)m * n * sizeof *c);
    else
        for (int j = 0; j < n; j++)
            memset(c + (size_t)j * ldc, 0, (size_t)m * sizeof *c);
    *beta = 1.0f;
}

/* Every product large enough is cut into blocks of C, one block per
 * thread of the pool, each a single-threaded OpenBLAS call: every thread
 * reads its own part of one operand once, and no OpenBLAS thread is left
 * spinning against the pool's between ops. OpenBLAS's own threads split a
 * skinny product so that each of them packs the whole large operand (model
 * S at 8x8, a 1024 x 8 x 1024 GEMM on two threads: about 0.6 ms through
 * OpenBLAS's threads, 0.2 ms cut by rows), and measured side by side on two
 * idle cores the row split was as fast or faster for the larger products
 * too (S at 256x1: 42.7-43.0 ms a step against 44.1-48.2 ms, three
 * interleaved runs each).
 *
 * C is cut along its longer side. The GPT's products are wide and short
 * (128 x 1024 x 512: d_model rows, tokens as columns), and cut by rows each
 * of two threads got 64 rows of C: of the 11 costliest shapes of a gpt-cpu
 * 16x1 step, the wide ones ran 9-34% faster cut by columns, the tall ones
 * 4-8% faster cut by rows (medians of 101 interleaved calls, two threads). */
#define SPLIT_BLOCK 64

typedef struct split_job {
    const cpu_openblas *blas;
    int trans_a, trans_b, m, n, k;
    float alpha;
    const float *a;
    int lda;
    const float *b;
    int ldb;
    float beta;
    float *c;
    int ldc;
    int by_cols; /* blocks of columns of C (and of op(B)), else of rows (and of op(A)) */
    int block;   /* rows or columns per block, a multiple of SPLIT_BLOCK */
} split_job;

/* One single-threaded product: C (mb x nb) of the job's operands. */
static void blas_product(const split_job *g, const float *a, const float *b, float *c, int mb,
                         int nb)
{
    float beta = g->beta;
    zero_for_beta0(mb, nb, &beta, c, g->ldc);
    g->blas->sgemm(CblasColMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                   g->trans_b ? CblasTrans : CblasNoTrans, mb, nb, g->k, g->alpha, a, g->lda,
                   b, g->ldb, beta, c, g->ldc);
}

static void gemm_blocks(void *ctx, size_t first, size_t last)
{
    const split_job *g = ctx;
    for (size_t blk = first; blk < last; blk++) {
        int i0 = (int)blk * g->block;
        if (g->by_cols) {
            /* Columns i0.. of op(B): of B itself, or its rows when transposed. */
            int nb = g->n - i0 < g->block ? g->n - i0 : g->block;
            const float *b = g->b + (g->trans_b ? (size_t)i0 : (size_t)i0 * g->ldb);
            blas_product(g, g->a, b, g->c + (size_t)i0 * g->ldc, g->m, nb);
        } else {
            /* Rows i0.. of op(A): of A itself, or its columns when transposed. */
            int mb = g->m - i0 < g->block ? g->m - i0 : g->block;
            const float *a = g->a + (g->trans_a ? (size_t)i0 * g->lda : (size_t)i0);
            blas_product(g, a, g->b, g->c + i0, mb, g->n);
        }
    }
}

/* The side of C a product is cut along, or 0 where it is too small to cut
 * between the pool's threads. */
static int split_side(int threads, int m, int n)
{
    int side = n > m ? n : m;
    return threads > 1 && side >= threads * SPLIT_BLOCK ? side : 0;
}

void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc)
{
    const cpu_openblas *blas = cpu_openblas_get();
    if (!blas->sgemm) {
        cpu_sgemm_portable(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    int threads = cpu_parallel_threads(), side = split_side(threads, m, n);
    if (side) {
        split_job job = {blas, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                         n > m, (side + threads - 1) / threads};
        job.block = (job.block + SPLIT_BLOCK - 1) / SPLIT_BLOCK * SPLIT_BLOCK;
        int blas_threads = blas->num_threads();
        blas->set_num_threads(1);
        cpu_parallel_for((size_t)((side + job.block - 1) / job.block), 1, gemm_blocks, &job);
        blas->set_num_threads(blas_threads);
        return;
    }
    zero_for_beta0(m, n, &beta, c, ldc);
    blas->sgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
                ldb, beta, c, ldc);
}

/* OpenBLAS 0.3.21 has no strided-batched call: one product after another,
 * each split between OpenBLAS's own threads as it sees fit. */
/* Products [first, last) of a batch, each whole on the calling thread. */
typedef struct blas_batch_job {
    split_job g;
    int64_t stride_a, stride_b, stride_c;
} blas_batch_job;

static void gemm_batch_products(void *ctx, size_t first, size_t last)
{
    const blas_batch_job *job = ctx;
    const split_job *g = &job->g;
    for (size_t i = first; i < last; i++)
        blas_product(g, g->a + (int64_t)i * job->stride_a, g->b + (int64_t)i * job->stride_b,
                     g->c + (int64_t)i * job->stride_c, g->m, g->n);
}

/* OpenBLAS has no batched sgemm, and runs a product as small as
 * attention's per-head ones (64 x 64 x 32) on one thread: called one by
 * one, the heads ran on one core of two. Small products of a batch go
 * whole to the pool's threads instead, OpenBLAS on one thread inside each,
 * at least about 2^20 multiply-adds per chunk. Each product is one
 * thread's, so the result does not depend on the threads. */
static int batch_by_products(const cpu_openblas *blas, int m, int n, int k, int batch)
{
    int threads = cpu_parallel_threads();
    return blas->sgemm && batch > 1 && threads > 1 && !split_side(threads, m, n) &&
           (size_t)m * (size_t)n * (size_t)k > 0;
}

void cpu_sgemm_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, int64_t stride_a, const float *b, int ldb,
                       int64_t stride_b, float beta, float *c, int ldc, int64_t stride_c,
                       int batch)
{
    const cpu_openblas *blas = cpu_openblas_get();
    if (batch_by_products(blas, m, n, k, batch)) {
        blas_batch_job job = {{blas, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                               c, ldc, 0, 0}, stride_a, stride_b, stride_c};
        size_t work = (size_t)m * (size_t)n * (size_t)k;
        int blas_threads = blas->num_threads();
        blas->set_num_threads(1);
        cpu_parallel_for((size_t)batch, ((size_t)1 << 20) / work + 1, gemm_batch_products,
                         &job);
        blas->set_num_threads(blas_threads);
        return;
    }
    for (int i = 0; i < (batch > 1 ? batch : 1); i++)
        cpu_sgemm(trans_a, trans_b, m, n, k, alpha, a + (int64_t)i * stride_a, lda,
                  b + (int64_t)i * stride_b, ldb, beta, c + (int64_t)i * stride_c, ldc);
}

const char *cpu_blas_core(void)
{
    const cpu_openblas *blas = cpu_openblas_get();
    return blas->sgemm ? blas->corename() : "portable";
}

/* A data-parallel rank's share of the cores (ACCUBENCH_CPU_THREADS, set by
 * the program) bounds OpenBLAS's threads as it bounds the pool's. */
void cpu_blas_threads_from_env(void)
{
    const cpu_openblas *blas = cpu_openblas_get();
    if (blas->sgemm && getenv("ACCUBENCH_CPU_THREADS"))
        blas->set_num_threads(cpu_parallel_threads());
}

const char *cpu_blas_description(void)
{
    const cpu_openblas *blas = cpu_openblas_get();
    static char text[160];
    if (!blas->sgemm) {
        snprintf(text, sizeof text, "portable blocked GEMM (%s)", blas->error);
        return text;
    }
    /* openblas_get_config() reads e.g. "OpenBLAS 0.3.21 NO_LAPACKE ...". */
    char name[32] = "OpenBLAS", version[32] = "";
    sscanf(blas->config(), "%31s %31s", name, version);
    snprintf(text, sizeof text, "%s %s core %s threads %d", name, version, blas->corename(),
             blas->num_threads());
    return text;
}
#else
void cpu_blas_threads_from_env(void)
{
    /* the portable GEMM's threads are cpu_parallel_threads() already */
}

void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc)
{
    cpu_sgemm_portable(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cpu_sgemm_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, int64_t stride_a, const float *b, int ldb,
                       int64_t stride_b, float beta, float *c, int ldc, int64_t stride_c,
                       int batch)
{
    cpu_sgemm_portable_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                               stride_b, beta, c, ldc, stride_c, batch);
}

const char *cpu_blas_core(void)
{
    return "portable";
}

const char *cpu_blas_description(void)
{
    return "portable blocked GEMM (no OpenBLAS)";
}
#endif
