/* The CUPTI activity collector's constructor, for the program's backend
 * table (bench/backend_registry.c). Defined only where the CUDA backend is
 * built (ACCUBENCH_HAVE_CUDA). */
#ifndef ACCUBENCH_CUPTI_COLLECTOR_H
#define ACCUBENCH_CUPTI_COLLECTOR_H

#include <stddef.h>

#include "collector.h"

/* BK_OK and a collector, or an error with a one-line reason (no GPU, CUPTI
 * unavailable, a second collector in the same process). */
int cupti_collector_create(collector **out, char *why, size_t why_len);

#endif
