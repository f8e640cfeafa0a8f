/* The CPU backend's GEMM: through oneDNN's or OpenBLAS's sgemm where one
 * loads, a portable blocked GEMM otherwise (the GPU machine may have
 * neither). */
#ifndef ACCUBENCH_CPU_GEMM_H
#define ACCUBENCH_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_parallel.h"

/* The libraries cpu_sgemm can run its products through. */
typedef enum cpu_gemm_library {
    CPU_GEMM_PORTABLE,
    CPU_GEMM_OPENBLAS,
    CPU_GEMM_ONEDNN,
} cpu_gemm_library;

/* C = alpha * op(A) op(B) + beta * C, column-major, fp32. */
void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc);

/* The portable GEMM itself, always built (the tests compare the two). */
void cpu_sgemm_portable(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb,
                        float beta, float *c, int ldc);

/* `batch` products C_i = alpha op(A_i) op(B_i) + beta C_i, where X_i starts
 * at x + i * stride_x (in elements); batch 0 or 1: the one product of
 * cpu_sgemm. Through the library cpu_sgemm uses. */
void cpu_sgemm_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, int64_t stride_a, const float *b, int ldb,
                       int64_t stride_b, float beta, float *c, int ldc, int64_t stride_c,
                       int batch);

/* The same through the portable GEMM, always built. */
void cpu_sgemm_portable_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                                const float *a, int lda, int64_t stride_a, const float *b,
                                int ldb, int64_t stride_b, float beta, float *c, int ldc,
                                int64_t stride_c, int batch);

/* For an op that makes small products of its own inside one parallel loop
 * (the fused attention): cpu_gemm_parallel_for runs fn as
 * cpu_parallel_for does, with the library held to one thread meanwhile,
 * and each product fn makes through cpu_sgemm_in_loop runs whole on the
 * thread that calls it. */
void cpu_gemm_parallel_for(size_t n, size_t min_chunk, cpu_range_fn fn, void *ctx);
void cpu_sgemm_in_loop(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta,
                       float *c, int ldc);

/* ACCUBENCH_CPU_GEMM (onednn, openblas or portable) names the library;
 * unset, the fastest that loads: oneDNN, then OpenBLAS. 0, or -1 with a
 * one-line reason where it names none, or one that cannot be loaded. */
int cpu_gemm_choice_check(char *why, size_t why_len);

/* Makes `lib` the library from now on (the tests and gemm-bench run
 * each); 0, and nothing changes, where it cannot be loaded. */
int cpu_gemm_use(cpu_gemm_library lib);

/* "oneDNN 2.6.3 core avx512_core", "OpenBLAS 0.3.21 core Zen threads 2"
 * or "portable blocked GEMM (why)": the library in use. */
const char *cpu_blas_description(void);
/* Where ACCUBENCH_CPU_THREADS is set (a rank's share of the cores), the
 * BLAS library uses that many threads too; otherwise it keeps its own. */
void cpu_blas_threads_from_env(void);

#endif
