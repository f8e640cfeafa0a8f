/* The CPU backend's GEMM: OpenBLAS where it was found at build time, a
 * portable blocked GEMM otherwise (the GPU machine may have no OpenBLAS). */
#ifndef ACCUBENCH_CPU_GEMM_H
#define ACCUBENCH_CPU_GEMM_H

/* C = alpha * op(A) op(B) + beta * C, column-major, fp32. */
void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc);

/* The portable GEMM itself, always built (the tests compare the two). */
void cpu_sgemm_portable(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb,
                        float beta, float *c, int ldc);

/* "OpenBLAS 0.3.21 core Zen" or "portable blocked GEMM", and the core alone. */
const char *cpu_blas_description(void);
/* Where ACCUBENCH_CPU_THREADS is set (a rank's share of the cores), the
 * BLAS library uses that many threads too; otherwise it keeps its own. */
void cpu_blas_threads_from_env(void);
const char *cpu_blas_core(void);

#endif
