/* oneDNN's sgemm, loaded on first use rather than linked (as OpenBLAS is),
 * held to one thread a call: the backend's pool gives each thread its own
 * block of C (cpu_gemm.c). Seen only by cpu_gemm.c. */
#ifndef ACCUBENCH_CPU_ONEDNN_H
#define ACCUBENCH_CPU_ONEDNN_H

#include <stddef.h>

/* Loads oneDNN once (thread-safe): NULL when it is ready, else why not. */
const char *cpu_onednn_load(void);

/* C = alpha op(A) op(B) + beta C, column-major, on the calling thread
 * alone. 0, or -1 where oneDNN refused the call (out of memory for its
 * packed panels): C is then as it was. */
int cpu_onednn_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                     const float *a, int lda, const float *b, int ldb, float beta, float *c,
                     int ldc);

/* "oneDNN 2.6.3 core avx512_core_amx": its version and the instructions
 * its kernels use here. */
void cpu_onednn_describe(char *text, size_t len);

#endif
