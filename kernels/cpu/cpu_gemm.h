/* The CPU backend's GEMM: OpenBLAS where it was found at build time, a
 * portable blocked GEMM otherwise (the GPU machine may have no OpenBLAS). */
#ifndef ACCUBENCH_CPU_GEMM_H
#define ACCUBENCH_CPU_GEMM_H

#include <stdint.h>

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
 * cpu_sgemm. Through OpenBLAS where it is, else the portable GEMM. */
void cpu_sgemm_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                       const float *a, int lda, int64_t stride_a, const float *b, int ldb,
                       int64_t stride_b, float beta, float *c, int ldc, int64_t stride_c,
                       int batch);

/* The same through the portable GEMM, always built. */
void cpu_sgemm_portable_batched(int trans_a, int trans_b, int m, int n, int k, float alpha,
                                const float *a, int lda, int64_t stride_a, const float *b,
                                int ldb, int64_t stride_b, float beta, float *c, int ldc,
                                int64_t stride_c, int batch);

/* "OpenBLAS 0.3.21 core Zen" or "portable blocked GEMM", and the core alone. */
const char *cpu_blas_description(void);
const char *cpu_blas_core(void);

#endif
