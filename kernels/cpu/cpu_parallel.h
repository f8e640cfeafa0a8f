/* A parallel for over [0, n) for the CPU backend's streaming loops: the
 * range is cut into a few contiguous chunks per core, taken by whichever
 * thread is free (the caller's thread too), so a thread that starts late
 * or loses its core to another process does not hold the loop up. The
 * other threads are a pool started on first use (the GEMMs run on it too):
 * between loops they poll for a short while, then sleep. Small ranges run
 * inline. A loop started inside a loop, or while another thread's loop
 * holds the pool, runs inline too. fn must not depend on how [0, n) is
 * cut. */
#ifndef ACCUBENCH_CPU_PARALLEL_H
#define ACCUBENCH_CPU_PARALLEL_H

#include <stddef.h>

typedef void (*cpu_range_fn)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n); chunks are never smaller than min_chunk. */
void cpu_parallel_for(size_t n, size_t min_chunk, cpu_range_fn fn, void *ctx);

/* How many threads a parallel loop may use (ACCUBENCH_CPU_THREADS, else
 * the online cores). */
int cpu_parallel_threads(void);

/* Whether ACCUBENCH_CPU_THREADS, when set, is a count from 1 to the
 * pool's size (a larger one would be cut to it unsaid). 0, or -1 with a
 * one-line reason. */
int cpu_parallel_threads_check(char *why, size_t why_len);

#endif
