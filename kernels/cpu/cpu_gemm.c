/* The CPU backend's GEMM: every product large enough is cut into blocks of
 * C between the pool's threads, each block one single-threaded call of a
 * BLAS library (oneDNN's sgemm, else OpenBLAS's); the portable GEMM where
 * neither loads. ACCUBENCH_CPU_GEMM chooses the library. */
#include "cpu_gemm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_onednn.h"
#include "cpu_openblas.h"
#include "cpu_parallel.h"

#define CHOICE_ENV "ACCUBENCH_CPU_GEMM"

static const char *const LIBRARY_NAMES[] = {
    [CPU_GEMM_PORTABLE] = "portable", [CPU_GEMM_OPENBLAS] = "openblas",
    [CPU_GEMM_ONEDNN] = "onednn",
};

/* Why a library cannot run: NULL when it loads (the portable GEMM always). */
static const char *library_unavailable(cpu_gemm_library lib)
{
    return lib == CPU_GEMM_ONEDNN ? cpu_onednn_load()
           : lib == CPU_GEMM_OPENBLAS ? cpu_openblas_load() : NULL;
}

/* ACCUBENCH_CPU_GEMM's library, or -1 where it is unset or names none. */
static int library_from_env(void)
{
    const char *env = getenv(CHOICE_ENV);
    for (int i = 0; env && i < (int)(sizeof LIBRARY_NAMES / sizeof *LIBRARY_NAMES); i++)
        if (!strcmp(env, LIBRARY_NAMES[i]))
            return i;
    return -1;
}

/* The library every product runs through, chosen on first use: the one
 * ACCUBENCH_CPU_GEMM names where it loads, else the fastest that loads.
 * oneDNN first: on the GPT's short, wide products its kernels ran 15-45%
 * faster than OpenBLAS 0.3.21's on one core (docs/cpu-backend.md). */
static cpu_gemm_library library;
static pthread_once_t library_once = PTHREAD_ONCE_INIT;

static void choose_library(void)
{
    int named = library_from_env();
    if (named >= 0 && !library_unavailable((cpu_gemm_library)named)) {
        library = (cpu_gemm_library)named;
        return;
    }
    library = !library_unavailable(CPU_GEMM_ONEDNN) ? CPU_GEMM_ONEDNN
              : !library_unavailable(CPU_GEMM_OPENBLAS) ? CPU_GEMM_OPENBLAS
                                                        : CPU_GEMM_PORTABLE;
}

static cpu_gemm_library current_library(void)
{
    pthread_once(&library_once, choose_library);
    return library;
}

int cpu_gemm_use(cpu_gemm_library lib)
{
    current_library();
    if (library_unavailable(lib))
        return 0;
    library = lib;
    return 1;
}

int cpu_gemm_choice_check(char *why, size_t why_len)
{
    const char *env = getenv(CHOICE_ENV);
    if (!env)
        return 0;
    int named = library_from_env();
    if (named < 0) {
        snprintf(why, why_len, CHOICE_ENV "='%s': needs onednn, openblas or portable (unset "
                 "it for the fastest that loads)", env);
        return -1;
    }
    const char *unavailable = library_unavailable((cpu_gemm_library)named);
    if (unavailable) {
        snprintf(why, why_len, CHOICE_ENV "=%s: %s", env, unavailable);
        return -1;
    }
    return 0;
}

/* One product on the calling thread's share: the library's single-threaded
 * call (OpenBLAS held to one thread by the caller, hold_one_thread). Where
 * oneDNN refuses a call (out of memory for its packed panels), the
 * portable GEMM makes the same product. */
static void library_product(cpu_gemm_library lib, int trans_a, int trans_b, int m, int n, int k,
                            float alpha, const float *a, int lda, const float *b, int ldb,
                            float beta, float *c, int ldc)
{
    if (lib == CPU_GEMM_OPENBLAS) {
        cpu_openblas_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    if (lib == CPU_GEMM_ONEDNN &&
        !cpu_onednn_sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        return;
    cpu_sgemm_portable(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* While the pool's threads each run a block, OpenBLAS runs on one thread
 * (its own would spin against the pool's); oneDNN always does. Returns
 * what release_threads restores. */
static int hold_one_thread(cpu_gemm_library lib)
{
    if (lib != CPU_GEMM_OPENBLAS)
        return 0;
    int threads = cpu_openblas_threads();
    cpu_openblas_set_threads(1);
    return threads;
}

static void release_threads(cpu_gemm_library lib, int threads)
{
    if (lib == CPU_GEMM_OPENBLAS)
        cpu_openblas_set_threads(threads);
}

/* Every product large enough is cut into blocks of C, one block per
 * thread of the pool, each a single-threaded library call: every thread
 * reads its own part of one operand once, and no library thread is left
 * spinning against the pool's between ops. OpenBLAS's own threads split a
 * skinny product so that each of them packs the whole large operand (model
 * S at 8x8, a 1024 x 8 x 1024 GEMM on two threads: about 0.6 ms through
 * OpenBLAS's threads, 0.2 ms cut by rows), and measured side by side on two
 * idle cores the row split was as fast or faster for the larger products
 * too (S at 256x1: 42.7-43.0 ms a step against 44.1-48.2 ms, three
 * interleaved runs each). oneDNN's OpenMP threads, left to split a gpt-cpu
 * 16x1 step's products, made the step slower than the cut: a median 15%
 * (0.88x to 1.52x over seven interleaved pairs).
 *
 * C is cut along its longer side. The GPT's products are wide and short
 * (128 x 1024 x 512: d_model rows, tokens as columns), and cut by rows each
 * of two threads got 64 rows of C: of the 11 costliest shapes of a gpt-cpu
 * 16x1 step, the wide ones ran 9-34% faster cut by columns, the tall ones
 * 4-8% faster cut by rows (medians of 101 interleaved calls, two threads). */
#define SPLIT_BLOCK 64

typedef struct split_job {
    cpu_gemm_library lib;
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
static void block_product(const split_job *g, const float *a, const float *b, float *c, int mb,
                          int nb)
{
    library_product(g->lib, g->trans_a, g->trans_b, mb, nb, g->k, g->alpha, a, g->lda, b,
                    g->ldb, g->beta, c, g->ldc);
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
            block_product(g, g->a, b, g->c + (size_t)i0 * g->ldc, g->m, nb);
        } else {
            /* Rows i0.. of op(A): of A itself, or its columns when transposed. */
            int mb = g->m - i0 < g->block ? g->m - i0 : g->block;
            const float *a = g->a + (g->trans_a ? (size_t)i0 * g->lda : (size_t)i0);
            block_product(g, a, g->b, g->c + i0, mb, g->n);
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
    cpu_gemm_library lib = current_library();
    if (lib == CPU_GEMM_PORTABLE) {
        cpu_sgemm_portable(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    int threads = cpu_parallel_threads(), side = split_side(threads, m, n);
    if (!side) {
        library_product(lib, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    split_job job = {lib, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                     n > m, (side + threads - 1) / threads};
    job.block = (job.block + SPLIT_BLOCK - 1) / SPLIT_BLOCK * SPLIT_BLOCK;
    int held = hold_one_thread(lib);
    cpu_parallel_for((size_t)((side + job.block - 1) / job.block), 1, gemm_blocks, &job);
    release_threads(lib, held);
}

void cpu_gemm_parallel_for(size_t n, size_t min_chunk, cpu_range_fn fn, void *ctx)
{
    cpu_gemm_library lib = current_library();
    int held = hold_one_thread(lib);
    cpu_parallel_for(n, min_chunk, fn, ctx);
    release_threads(lib, held);
}

void cpu_sgemm_in_loop(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta,
                       float *c, int ldc)
{
    library_product(current_library(), trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                    c, ldc);
}

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
        block_product(g, g->a + (int64_t)i * job->stride_a, g->b + (int64_t)i * job->stride_b,
                      g->c + (int64_t)i * job->stride_c, g->m, g->n);
}

/* Neither library's strided-batched call is used: OpenBLAS 0.3.21 has
 * none, and runs a product as small as attention's per-head ones (64 x 64
 * x 32) on one thread, so called one by one the heads ran on one core of
 * two. Small products of a batch go whole to the pool's threads instead,
 * the library on one thread inside each, at least about 2^20
 * multiply-adds per chunk. Each product is one thread's, so the result
 * does not depend on the threads. */
static int batch_by_products(int m, int n, int k, int batch)
{
    int threads = cpu_parallel_threads();
    return batch > 1 && threads > 1 && !split_side(threads, m, n) &&
           (size_t)m * (size_t)n * (size_t)k > 0;
}

void cpu_sgemm_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, int64_t stride_a, const float *b, int ldb,
                       int64_t stride_b, float beta, float *c, int ldc, int64_t stride_c,
                       int batch)
{
    cpu_gemm_library lib = current_library();
    if (lib == CPU_GEMM_PORTABLE) {
        cpu_sgemm_portable_batched(trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                   stride_b, beta, c, ldc, stride_c, batch);
        return;
    }
    if (batch_by_products(m, n, k, batch)) {
        blas_batch_job job = {{lib, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                               ldc, 0, 0}, stride_a, stride_b, stride_c};
        size_t work = (size_t)m * (size_t)n * (size_t)k;
        cpu_gemm_parallel_for((size_t)batch, ((size_t)1 << 20) / work + 1,
                              gemm_batch_products, &job);
        return;
    }
    for (int i = 0; i < (batch > 1 ? batch : 1); i++)
        cpu_sgemm(trans_a, trans_b, m, n, k, alpha, a + (int64_t)i * stride_a, lda,
                  b + (int64_t)i * stride_b, ldb, beta, c + (int64_t)i * stride_c, ldc);
}

/* A data-parallel rank's share of the cores (ACCUBENCH_CPU_THREADS, set by
 * the program) bounds OpenBLAS's threads as it bounds the pool's (oneDNN
 * runs on one thread a call whatever the count). */
void cpu_blas_threads_from_env(void)
{
    if (current_library() == CPU_GEMM_OPENBLAS && getenv("ACCUBENCH_CPU_THREADS"))
        cpu_openblas_set_threads(cpu_parallel_threads());
}

/* The library and its threads: OpenBLAS says its own; oneDNN's calls and
 * the portable GEMM run on the pool's (cpu_parallel_threads), which the
 * words after the library name, so that runs on other thread counts
 * neither append to one file nor compare unremarked. */
const char *cpu_blas_description(void)
{
    static char text[320];
    cpu_gemm_library lib = current_library();
    int pool = cpu_parallel_threads();
    if (lib == CPU_GEMM_ONEDNN) {
        char dnnl[256];
        cpu_onednn_describe(dnnl, sizeof dnnl);
        snprintf(text, sizeof text, "%s threads %d", dnnl, pool);
    } else if (lib == CPU_GEMM_OPENBLAS) {
        cpu_openblas_describe(text, sizeof text);
    } else if (library_from_env() == CPU_GEMM_PORTABLE) {
        snprintf(text, sizeof text, "portable blocked GEMM threads %d (" CHOICE_ENV "=portable)",
                 pool);
    } else {
        snprintf(text, sizeof text, "portable blocked GEMM threads %d (%s; %s)", pool,
                 library_unavailable(CPU_GEMM_ONEDNN), library_unavailable(CPU_GEMM_OPENBLAS));
    }
    return text;
}
