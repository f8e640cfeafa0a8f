/* A parallel for over [0, n) for the CPU backend's streaming loops: the
 * range is cut into one contiguous chunk per core, each run on its own
 * thread (the caller's thread takes the first). The other threads are a
 * pool started on first use: they spin a few microseconds after a loop (the
 * next one usually follows at once), then sleep, so that they do not take
 * the cores from the BLAS threads of the GEMM in between. Small ranges run
 * inline: waking a sleeping thread costs tens of microseconds. A loop
 * started inside a loop, or while another thread's loop holds the pool,
 * runs inline too. */
#ifndef ACCUBENCH_CPU_PARALLEL_H
#define ACCUBENCH_CPU_PARALLEL_H

#include <stddef.h>

typedef void (*cpu_range_fn)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n); chunks are never smaller than min_chunk. */
void cpu_parallel_for(size_t n, size_t min_chunk, cpu_range_fn fn, void *ctx);

/* How many threads a parallel loop may use (ACCUBENCH_CPU_THREADS, else
 * the online cores). */
int cpu_parallel_threads(void);

#endif
