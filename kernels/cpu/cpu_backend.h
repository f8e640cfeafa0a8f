/* The CPU backend's constructor and its attention setting: what the
 * program's backend table (bench/backend_registry.c) and the tests need
 * from kernels/cpu/. */
#ifndef ACCUBENCH_CPU_BACKEND_H
#define ACCUBENCH_CPU_BACKEND_H

#include <stddef.h>

#include "attention_kind.h"
#include "backend.h"

/* The variable that picks the CPU's attention arrangement
 * (attention_kind.h), and the one it runs unset: the fused op
 * (cpu_attention.c), which keeps no scores. `unfused` runs the path a
 * backend without the op runs (CUDA's default), to compare the two on
 * one machine. A bf16 run is unfused whatever the variable says: the
 * fused op reads fp32 alone (cpu_attention_choice.c). */
#define CPU_ATTENTION_ENV "ACCUBENCH_CPU_ATTENTION"
#define CPU_ATTENTION_DEFAULT ATTENTION_FUSED

/* BK_OK and a ready backend (fp32 only), or an error with a one-line reason
 * in `why`. */
int cpu_backend_create(dtype dt, backend **out, char *why, size_t why_len);

/* The host's physical memory in bytes (0 when the system cannot say): the
 * CPU backend's device memory, and what gemm-bench's shapes must fit in. */
size_t cpu_host_memory_bytes(void);

#endif
