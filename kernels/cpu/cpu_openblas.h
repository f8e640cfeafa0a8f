/* OpenBLAS, loaded on first use rather than linked, so that the backend
 * can choose its kernels before OpenBLAS picks them (it does once, as it
 * loads, from the CPU and OPENBLAS_CORETYPE). Seen only by cpu_gemm.c. */
#ifndef ACCUBENCH_CPU_OPENBLAS_H
#define ACCUBENCH_CPU_OPENBLAS_H

#include <cblas.h>

typedef struct cpu_openblas {
    /* NULL when OpenBLAS could not be loaded: `error` says why. */
    __typeof__(cblas_sgemm) *sgemm;
    char *(*corename)(void);
    char *(*config)(void);
    int (*num_threads)(void);
    void (*set_num_threads)(int);
    char error[256];
} cpu_openblas;

/* Loads OpenBLAS once (thread-safe) and returns its entry points. */
const cpu_openblas *cpu_openblas_get(void);

#endif
