/* An allocation fault for the tests, preloaded into one process
 * (LD_PRELOAD=build/tests/libfail_alloc.so): a device too full in the
 * middle of a config, on one rank. The memory cap cannot make one: every
 * need is held to it before a config runs, on every rank alike, and the
 * checks run outside it.
 *
 * With FAIL_ALLOC_AT_LEAST=BYTES, aligned_alloc (the CPU backend's
 * allocator) fails with ENOMEM for a request of at least BYTES once
 * FAIL_ALLOC_SKIP (default 0) such requests have been granted. Any other
 * allocation, and every one without the variable, is the C library's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

void *aligned_alloc(size_t alignment, size_t size)
{
    static void *(*next)(size_t, size_t);
    static unsigned long granted; /* requests at or over the size, passed on */
    if (!next)
        next = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
    const char *at = getenv("FAIL_ALLOC_AT_LEAST"), *skip = getenv("FAIL_ALLOC_SKIP");
    if (at && size >= strtoull(at, NULL, 10)) {
        if (granted >= (skip ? strtoul(skip, NULL, 10) : 0)) {
            errno = ENOMEM;
            return NULL;
        }
        granted++;
    }
    return next ? next(alignment, size) : NULL;
}
