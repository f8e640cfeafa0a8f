#include "memory_fit.h"

#include <stdio.h>

#include "gradcheck.h"

uint64_t memory_fit_usable(const backend *b)
{
    return (uint64_t)(MEMORY_FIT_USABLE_SHARE * (double)b->mem_total);
}

uint64_t memory_fit_host_copies(const backend *b, uint64_t params)
{
    return b->caps & BK_CAP_SHARES_HOST_MEMORY ? params * GRAD_CHECK_HOST_BYTES_PER_PARAM : 0;
}

int memory_fit(const backend *b, uint64_t need, uint64_t params, char *why, size_t why_len)
{
    if (!b->mem_total)
        return 1;
    uint64_t host_copies = memory_fit_host_copies(b, params), usable = memory_fit_usable(b);
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
