/* The CPU backend for a kernel test (fp32 unless a dtype is named), on four threads whatever the machine:
 * every op's split between threads is exercised on any host. NULL, and the
 * reason printed, where it cannot be made. */
#ifndef ACCUBENCH_TEST_CPU_BACKEND_H
#define ACCUBENCH_TEST_CPU_BACKEND_H

#include <stdio.h>
#include <stdlib.h>

#include "cpu_backend.h"

static inline backend *test_cpu_backend_of(dtype dt)
{
    setenv("ACCUBENCH_CPU_THREADS", "4", 1);
    backend *b = NULL;
    char why[200];
    if (cpu_backend_create(dt, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "cpu backend: %s\n", why);
        return NULL;
    }
    return b;
}

static inline backend *test_cpu_backend(void)
{
    return test_cpu_backend_of(DTYPE_FP32);
}

#endif
