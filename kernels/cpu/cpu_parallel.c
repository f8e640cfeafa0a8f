#include "cpu_parallel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
/* Chunks per thread: a worker that wakes late (tens of microseconds in a
 * VM), or that loses its core to another process, leaves its share to the
 * others instead of holding the loop up. */
#define CHUNKS_PER_THREAD 4
/* How long the caller polls for a worker's last chunk before it yields. */
#define SPIN_ITERATIONS 200
/* How long a worker polls for the next loop before it sleeps. Every thread
 * of a step is the pool's (the GEMMs run on it too, with OpenBLAS
 * single-threaded in each block), so a polling worker takes no core from
 * anyone in the step, and the loops of a step are a few microseconds of
 * host work apart: polling catches them, where waking from a sleep costs
 * several microseconds a loop (tens in a busy VM). Between steps, or when
 * the program leaves the pool idle, the worker sleeps after this long. */
#define SPIN_NS 50000

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One loop at a time. The caller writes the loop, sets `done` to 0 and
 * `claim` to (generation << 32 | chunks), then bumps `generation` to wake
 * the workers. Every thread, the caller too, takes chunks by counting
 * `claim`'s low half down while its high half still names the loop; a
 * chunk taken is a chunk the caller waits for (`done`), so the loop's
 * fields cannot change under a thread that holds one. A worker that wakes
 * after the last chunk was taken finds none and does nothing. */
typedef struct pool {
    pthread_mutex_t call_lock; /* one caller at a time; others run inline */
    pthread_mutex_t lock;      /* guards the sleep */
    pthread_cond_t wake;
    atomic_uint generation;
    atomic_uint_fast64_t claim;
    atomic_int done;
    atomic_int sleepers;
    int workers;
    cpu_range_fn fn;
    void *ctx;
    size_t n, per;
} pool;

static pool the_pool = {
    .call_lock = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
/* Set on the pool's threads: a loop started from inside a loop runs inline. */
static _Thread_local int in_pool;

/* Takes and runs chunks of loop `gen` until none is left. */
static void run_chunks(pool *p, unsigned gen)
{
    uint_fast64_t c = atomic_load(&p->claim);
    for (;;) {
        if ((unsigned)(c >> 32) != gen || (c & 0xffffffffu) == 0)
            return;
        if (!atomic_compare_exchange_weak(&p->claim, &c, c - 1))
            continue; /* c holds the current value: look again */
        size_t chunk = (size_t)(c & 0xffffffffu) - 1;
        size_t begin = chunk * p->per, end = begin + p->per < p->n ? begin + p->per : p->n;
        p->fn(p->ctx, begin, end);
        atomic_fetch_add(&p->done, 1);
        c = atomic_load(&p->claim);
    }
}

static void *worker(void *arg)
{
    pool *p = arg;
    unsigned seen = 0; /* the pool starts before the first loop */
    in_pool = 1;
    for (;;) {
        unsigned g;
        uint64_t spin_start = 0;
        for (int spins = 0; (g = atomic_load(&p->generation)) == seen; spins++) {
            /* The clock every 64 polls: cheap next to the pauses. */
            if ((spins & 63) == 0) {
                uint64_t t = now_ns();
                if (!spin_start)
                    spin_start = t;
                else if (t - spin_start > SPIN_NS)
                    break;
            }
            cpu_relax();
        }
        if (g == seen) {
            pthread_mutex_lock(&p->lock);
            atomic_fetch_add(&p->sleepers, 1);
            while ((g = atomic_load(&p->generation)) == seen)
                pthread_cond_wait(&p->wake, &p->lock);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->lock);
        }
        seen = g;
        run_chunks(p, g);
    }
    return NULL;
}

int cpu_parallel_threads_check(char *why, size_t why_len)
{
    const char *env = getenv("ACCUBENCH_CPU_THREADS");
    if (!env)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(env, &end, 10);
    if (!*env || *end || errno || n < 1 || n > MAX_THREADS) {
        snprintf(why, why_len, "ACCUBENCH_CPU_THREADS='%s': needs a whole number of threads "
                 "from 1 to %d, the pool's size (unset it for every core)", env, MAX_THREADS);
        return -1;
    }
    return 0;
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
 * every loop to the caller. Detached: they live as long as the process.
 * They start with the asynchronous signals blocked (a thread inherits its
 * creator's mask), so that no handler runs on a worker's stack in the
 * middle of a library's kernel: under SIGINT, with oneDNN's sgemm in the
 * blocks, about one interrupted sweep in five on a loaded machine died of
 * a corrupted heap. The caller's thread takes them instead, on the
 * alternate stack the handlers ask for (stop_signal.c). A fault's signal
 * (SIGSEGV, a sanitizer's report) still reaches the thread that faults. */
static void start_pool(void)
{
    pool *p = &the_pool;
    int want = cpu_parallel_threads() - 1;
    pthread_attr_t attr;
    if (want < 1 || pthread_attr_init(&attr))
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    static const int ASYNC_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM,
                                        SIGUSR1, SIGUSR2, SIGCHLD, SIGWINCH};
    sigset_t async, old;
    sigemptyset(&async);
    for (size_t i = 0; i < sizeof ASYNC_SIGNALS / sizeof *ASYNC_SIGNALS; i++)
        sigaddset(&async, ASYNC_SIGNALS[i]);
    pthread_sigmask(SIG_BLOCK, &async, &old);
    for (int t = 0; t < want; t++) {
        pthread_t id;
        if (pthread_create(&id, &attr, worker, p))
            break;
        p->workers = t + 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
    size_t chunks = threads * CHUNKS_PER_THREAD;
    if (chunks > n / min_chunk)
        chunks = n / min_chunk;
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->per = (n + chunks - 1) / chunks;
    chunks = (n + p->per - 1) / p->per; /* none empty */
    unsigned gen = atomic_load(&p->generation) + 1;
    atomic_store(&p->done, 0);
    atomic_store(&p->claim, (uint_fast64_t)gen << 32 | chunks);
    atomic_store(&p->generation, gen);
    /* A worker either sees the new generation before it sleeps or is
     * counted in `sleepers` by then (both sequentially consistent). */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->lock);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
    }
    in_pool = 1;
    run_chunks(p, gen);
    in_pool = 0;
    /* Only chunks still running on a worker are left: a short wait, unless
     * that worker lost its core, when yielding gives it back. */
    for (int spins = 0; atomic_load(&p->done) < (int)chunks; spins++) {
        if (spins < SPIN_ITERATIONS)
            cpu_relax();
        else
            sched_yield();
    }
    pthread_mutex_unlock(&p->call_lock);
}
