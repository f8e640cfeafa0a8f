/* OpenBLAS, loaded on first use rather than linked, so that the backend
 * can choose its kernels before OpenBLAS picks them (it does once, as it
 * loads, from the CPU and OPENBLAS_CORETYPE). Seen only by cpu_gemm.c.
 * Built without OpenBLAS's headers, it never loads. */
#ifndef ACCUBENCH_CPU_OPENBLAS_H
#define ACCUBENCH_CPU_OPENBLAS_H

#include <stddef.h>

/* Loads OpenBLAS once (thread-safe): NULL when it is ready, else why not. */
const char *cpu_openblas_load(void);

/* C = alpha op(A) op(B) + beta C, column-major, on OpenBLAS's threads
 * (cpu_openblas_set_threads). */
void cpu_openblas_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta,
                        float *c, int ldc);

/* OpenBLAS's own thread count, for every call that follows. */
int cpu_openblas_threads(void);
void cpu_openblas_set_threads(int threads);

/* "OpenBLAS 0.3.21 core SkylakeX threads 2". */
void cpu_openblas_describe(char *text, size_t len);

#endif
