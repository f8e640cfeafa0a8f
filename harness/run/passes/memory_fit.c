#include "memory_fit.h"

#include <stdio.h>

#include "gradcheck.h"

/* The bytes of b->mem_total a config may take. */
static uint64_t usable_bytes(const backend *b)
{
    return (uint64_t)(MEMORY_FIT_USABLE_SHARE * (double)b->mem_total);
}

/* The gradient check's host copies for `params` parameters where they
 * share the device's memory (BK_CAP_SHARES_HOST_MEMORY), else 0. */
static uint64_t host_copies_bytes(const backend *b, uint64_t params)
{
    return b->caps & BK_CAP_SHARES_HOST_MEMORY ? params * GRAD_CHECK_HOST_BYTES_PER_PARAM : 0;
}

int memory_fit(const backend *b, uint64_t need, uint64_t params, char *why, size_t why_len)
{
    if (!b->mem_total)
        return 1;
    uint64_t host_copies = host_copies_bytes(b, params), usable = usable_bytes(b);
    if (need + host_copies <= usable)
        return 1;
    int pct = (int)(MEMORY_FIT_USABLE_SHARE * 100 + 0.5);
    if (host_copies)
        snprintf(why, why_len, "needs %llu bytes, and the gradient check's host copies %llu "
                 "more; %d%% of the device's %llu bytes is usable",
                 (unsigned long long)need, (unsigned long long)host_copies, pct,
                 (unsigned long long)b->mem_total);
    else
        snprintf(why, why_len, "needs %llu bytes; %d%% of the device's %llu bytes is usable",
                 (unsigned long long)need, pct, (unsigned long long)b->mem_total);
    return 0;
}
