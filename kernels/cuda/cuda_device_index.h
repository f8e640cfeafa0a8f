/* Which GPU a process takes: plain C, so that it is tested without a GPU.
 * A data-parallel rank takes the GPU of its index on its node
 * (ACCUBENCH_DEVICE_INDEX, set by the program); one process, GPU 0. */
#ifndef ACCUBENCH_CUDA_DEVICE_INDEX_H
#define ACCUBENCH_CUDA_DEVICE_INDEX_H

#include <stdio.h>
#include <stdlib.h>

/* The device for the index `env` names (NULL: none) among `count`: 0 and
 * the index, or -1 with one line in why when the index has no GPU of its
 * own. Two ranks on one GPU would fail deep inside NCCL's setup (NCCL
 * wants one rank per device), so it is refused here, at the start. */
static inline int cuda_device_for_index(const char *env, int count, int *device, char *why,
                                        size_t why_len)
{
    int i = env ? atoi(env) : 0;
    *device = 0;
    if (i < 0 || (count > 0 && i >= count)) {
        snprintf(why, why_len,
                 "this rank is number %d on its node, which has %d GPU%s: two ranks would "
                 "share a GPU; start at most %d rank%s a node",
                 i, count, count == 1 ? "" : "s", count, count == 1 ? "" : "s");
        return -1;
    }
    *device = i;
    return 0;
}

#endif
