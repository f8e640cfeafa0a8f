/* The CPU backend for a kernel test, on four threads whatever the machine:
 * every op's split between threads is exercised on any host. NULL, and the
 * reason printed, where it cannot be made. */
#ifndef ACCUBENCH_TEST_CPU_BACKEND_H
#define ACCUBENCH_TEST_CPU_BACKEND_H

#include <stdio.h>
#include <stdlib.h>

#include "cpu_backend.h"

static inline backend *test_cpu_backend(void)
{
    setenv("ACCUBENCH_CPU_THREADS", "4", 1);
    backend *b = NULL;
    char why[200];
    if (cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) != BK_OK) {
        fprintf(stderr, "cpu backend: %s\n", why);
        return NULL;
    }
    return b;
}

#endif
