/* The CPU backend's parallel for: every index exactly once, whatever the
 * range and the chunk floor, loop after loop (the pool's workers are reused
 * and may wake late); chunks never under the floor; a loop inside a loop
 * and two callers at once both complete. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_parallel.h"

typedef struct cover {
    atomic_int *hits;
    size_t min_chunk, n;
    atomic_int short_chunks;
    atomic_int calls;
} cover;

static void count_range(void *ctx, size_t begin, size_t end)
{
    cover *c = ctx;
    atomic_fetch_add(&c->calls, 1);
    /* Only the last chunk of the range may be shorter than the floor. */
    if (end - begin < c->min_chunk && end != c->n)
        atomic_fetch_add(&c->short_chunks, 1);
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add(&c->hits[i], 1);
}

/* Runs one loop over [0, n) and checks that every index was hit once. */
static int covers_once(size_t n, size_t min_chunk)
{
    cover c = {calloc(n + 1, sizeof(atomic_int)), min_chunk, n, 0, 0};
    cpu_parallel_for(n, min_chunk, count_range, &c);
    int ok = atomic_load(&c.short_chunks) == 0 && (n == 0 || atomic_load(&c.calls) >= 1);
    for (size_t i = 0; i < n; i++)
        ok &= atomic_load(&c.hits[i]) == 1;
    ok &= atomic_load(&c.hits[n]) == 0; /* nothing past the end */
    free(c.hits);
    return ok;
}

static void test_cover(void)
{
    size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 4099, 1 << 16, (1 << 18) + 5};
    size_t floors[] = {0, 1, 5, 1000, 1 << 17};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t j = 0; j < sizeof floors / sizeof *floors; j++)
            CHECK(covers_once(sizes[i], floors[j]));
    /* Loop after loop through the same pool: a worker that wakes after its
     * loop is done must not run a chunk of the next one twice. */
    int all = 1;
    for (int r = 0; r < 2000; r++)
        all &= covers_once(64 + (size_t)(r % 7), 1);
    CHECK(all);
}

static void inner_loop(void *ctx, size_t begin, size_t end)
{
    atomic_int *sum = ctx;
    for (size_t i = begin; i < end; i++) {
        cover c = {calloc(33, sizeof(atomic_int)), 1, 32, 0, 0};
        cpu_parallel_for(32, 1, count_range, &c); /* runs inline: no deadlock */
        int ok = 1;
        for (int k = 0; k < 32; k++)
            ok &= atomic_load(&c.hits[k]) == 1;
        atomic_fetch_add(sum, ok);
        free(c.hits);
    }
}

static void test_nested(void)
{
    atomic_int sum = 0;
    cpu_parallel_for(16, 1, inner_loop, &sum);
    CHECK(atomic_load(&sum) == 16);
}

static void *other_caller(void *arg)
{
    int *ok = arg;
    for (int r = 0; r < 500; r++)
        *ok &= covers_once(1000, 1);
    return NULL;
}

static void test_two_callers(void)
{
    int ok_a = 1, ok_b = 1;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_caller, &ok_b) == 0);
    other_caller(&ok_a);
    pthread_join(t, NULL);
    CHECK(ok_a && ok_b);
}

int main(void)
{
    /* More threads than this machine may have cores: workers preempted
     * mid-loop and waking late are the cases worth meeting. */
    setenv("ACCUBENCH_CPU_THREADS", "4", 0);
    CHECK(cpu_parallel_threads() >= 1);
    test_cover();
    test_nested();
    test_two_callers();
    return check_finish("test_parallel");
}
