#include "cpu_parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 64

typedef struct chunk {
    cpu_range_fn fn;
    void *ctx;
    size_t begin, end;
} chunk;

static void *run_chunk(void *arg)
{
    chunk *c = arg;
    c->fn(c->ctx, c->begin, c->end);
    return NULL;
}

int cpu_parallel_threads(void)
{
    static int threads;
    if (!threads) {
        const char *env = getenv("ACCUBENCH_CPU_THREADS");
        long n = env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
    }
    return threads;
}

void cpu_parallel_for(size_t n, size_t min_chunk, cpu_range_fn fn, void *ctx)
{
    size_t threads = (size_t)cpu_parallel_threads();
    if (min_chunk == 0)
        min_chunk = 1;
    if (threads > n / min_chunk)
        threads = n / min_chunk;
    if (threads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    chunk chunks[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    size_t per = (n + threads - 1) / threads;
    for (size_t t = 0; t < threads; t++) {
        size_t begin = t * per, end = begin + per < n ? begin + per : n;
        chunks[t] = (chunk){fn, ctx, begin, end};
        /* A thread that cannot start leaves its chunk to the caller. */
        if (t > 0)
            started[t] = pthread_create(&ids[t], NULL, run_chunk, &chunks[t]) == 0;
    }
    run_chunk(&chunks[0]);
    for (size_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else
            run_chunk(&chunks[t]);
    }
}
