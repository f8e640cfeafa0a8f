/* oneDNN's sgemm (and its bf16 GEMM where the host has one), loaded on first use rather than linked (as OpenBLAS is),
 * held to one thread a call: the backend's pool gives each thread its own
 * block of C (cpu_gemm.c). Seen only by cpu_gemm.c and cpu_gemm_bf16.c. */
#ifndef ACCUBENCH_CPU_ONEDNN_H
#define ACCUBENCH_CPU_ONEDNN_H

#include <stddef.h>

/* Loads oneDNN once (thread-safe): NULL when it is ready, else why not. */
const char *cpu_onednn_load(void);

/* C = alpha op(A) op(B) + beta C, column-major, on the calling thread
 * alone. 0, or -1 where oneDNN refused the call (out of memory for its
 * packed panels) or k is 0 (oneDNN skips C = beta C): C is then as it
 * was, for the caller's other GEMM. */
int cpu_onednn_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                     const float *a, int lda, const float *b, int ldb, float beta, float *c,
                     int ldc);

/* Whether oneDNN's bf16 GEMM (bf16 A and B, fp32 C) computes on this
 * host: oneDNN 2.6 has kernels for it from AVX-512 on. */
int cpu_onednn_has_gemm_bf16(void);

/* cpu_onednn_sgemm with A and B in bf16 (raw bits); C stays fp32. 0, or -1
 * where it cannot (no such GEMM here, or oneDNN refused the call). */
int cpu_onednn_gemm_bf16(int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const unsigned short *a, int lda, const unsigned short *b, int ldb,
                         float beta, float *c, int ldc);

/* "oneDNN 2.6.3 core avx512_core_amx": its version and the instructions
 * its kernels use here. */
void cpu_onednn_describe(char *text, size_t len);

#endif
