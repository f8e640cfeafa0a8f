#include "cpu_parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 64

/* How long a worker waits for the next loop, spinning, before it sleeps.
 * The loops of one step follow each other within microseconds, or come
 * after a GEMM whose BLAS threads need the cores: a short spin catches the
 * first without stealing much from the second. */
#define SPIN_ITERATIONS 1000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One loop at a time: the caller publishes it and bumps `generation`;
 * worker t runs chunk t (if there is one) and counts itself out of
 * `pending`; the caller runs chunk 0 and waits until every worker has, so
 * that none still reads the loop when the next is published. */
typedef struct pool {
    pthread_mutex_t call_lock; /* one caller at a time; others run inline */
    pthread_mutex_t lock;      /* guards the sleep */
    pthread_cond_t wake;
    atomic_uint generation;
    atomic_int sleepers;
    atomic_int pending;
    int workers; /* started: chunks 1..workers */
    cpu_range_fn fn;
    void *ctx;
    size_t n, per;
    int chunks;
} pool;

static pool the_pool = {
    .call_lock = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
/* Set on the pool's threads: a loop started from inside a loop runs inline. */
static _Thread_local int in_pool;

static void run_chunk(const pool *p, int t)
{
    size_t begin = (size_t)t * p->per;
    if (begin >= p->n)
        return;
    size_t end = begin + p->per < p->n ? begin + p->per : p->n;
    p->fn(p->ctx, begin, end);
}

static void *worker(void *arg)
{
    pool *p = &the_pool;
    int t = (int)(size_t)arg;
    unsigned seen = 0; /* the pool starts before the first loop */
    in_pool = 1;
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = atomic_load(&p->generation)) == seen && spins++ < SPIN_ITERATIONS)
            cpu_relax();
        if (g == seen) {
            pthread_mutex_lock(&p->lock);
            atomic_fetch_add(&p->sleepers, 1);
            while ((g = atomic_load(&p->generation)) == seen)
                pthread_cond_wait(&p->wake, &p->lock);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->lock);
        }
        seen = g;
        if (t < p->chunks)
            run_chunk(p, t);
        atomic_fetch_sub(&p->pending, 1);
    }
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

/* Workers that cannot start leave the pool smaller; none at all leaves
 * every loop to the caller. Detached: they live as long as the process. */
static void start_pool(void)
{
    pool *p = &the_pool;
    int want = cpu_parallel_threads() - 1;
    pthread_attr_t attr;
    if (want < 1 || pthread_attr_init(&attr))
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int t = 1; t <= want; t++) {
        pthread_t id;
        if (pthread_create(&id, &attr, worker, (void *)(size_t)t))
            break;
        p->workers = t;
    }
    pthread_attr_destroy(&attr);
}

void cpu_parallel_for(size_t n, size_t min_chunk, cpu_range_fn fn, void *ctx)
{
    pool *p = &the_pool;
    size_t threads = (size_t)cpu_parallel_threads();
    if (min_chunk == 0)
        min_chunk = 1;
    if (threads > n / min_chunk)
        threads = n / min_chunk;
    if (threads > 1 && !in_pool) {
        pthread_once(&pool_once, start_pool);
        if ((size_t)p->workers + 1 < threads)
            threads = (size_t)p->workers + 1;
    }
    if (threads <= 1 || in_pool || pthread_mutex_trylock(&p->call_lock)) {
        fn(ctx, 0, n);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->per = (n + threads - 1) / threads;
    p->chunks = (int)threads;
    atomic_store(&p->pending, p->workers);
    atomic_fetch_add(&p->generation, 1);
    /* A worker either sees the new generation before it sleeps or is
     * counted in `sleepers` by then (both sequentially consistent). */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }
    in_pool = 1;
    run_chunk(p, 0);
    in_pool = 0;
    /* The other chunks are as long as this one: a short wait, unless a
     * worker lost its core, when yielding gives it back. */
    for (int spins = 0; atomic_load(&p->pending) > 0; spins++) {
        if (spins < SPIN_ITERATIONS)
            cpu_relax();
        else
            sched_yield();
    }
    pthread_mutex_unlock(&p->call_lock);
}
