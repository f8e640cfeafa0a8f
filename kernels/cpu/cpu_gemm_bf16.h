/* The CPU backend's GEMM over bf16 operands (cpu_gemm_bf16.c). Seen only
 * by kernels/cpu/. */
#ifndef ACCUBENCH_CPU_GEMM_BF16_H
#define ACCUBENCH_CPU_GEMM_BF16_H

#include "backend.h"

/* d's product (strided-batched where d->batch > 1) with A and B in bf16 and
 * C in d->c_storage: 0, or -1 where a thread could not get its panels. */
int cpu_gemm_bf16(const gemm_desc *d);

/* Which path runs the bf16 products here, for the run's metadata. */
const char *cpu_gemm_bf16_description(void);

#endif
