/* The CPU backend's constructor: the one name the program's backend table
 * (bench/backend_registry.c) and the tests need from kernels/cpu/. */
#ifndef ACCUBENCH_CPU_BACKEND_H
#define ACCUBENCH_CPU_BACKEND_H

#include <stddef.h>

#include "backend.h"

/* BK_OK and a ready backend (fp32 only), or an error with a one-line reason
 * in `why`. */
int cpu_backend_create(dtype dt, backend **out, char *why, size_t why_len);

/* The host's physical memory in bytes (0 when the system cannot say): the
 * CPU backend's device memory, and what gemm-bench's shapes must fit in. */
size_t cpu_host_memory_bytes(void);

#endif
