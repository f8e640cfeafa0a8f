/* The shard modes' schedule and memory need (see shard_modes.h). */
#include "shard_modes.h"

#include <stdio.h>

#include "grad_ring.h"
#include "optimizer.h"
#include "shard_slice.h"
#include "sync_modes.h"

int shard_reduces_after(shard_mode sh, int sync, int k, int accum)
{
    return shard_info_of(sh)->gradient_slice || sync_reduces_after(sync, k, accum);
}

int shard_reduced_before(shard_mode sh, int sync, int k)
{
    return shard_info_of(sh)->gradient_slice ? k > 0 : sync_reduced_before(sync, k);
}

void shard_memory_need(memory_need *n, shard_mode sh, int ranks, const model_spec *s,
                       optimizer_kind opt)
{
    if (!shard_info_of(sh)->slices_state)
        return;
    const shard_info *si = shard_info_of(sh);
    shard_slice sl = shard_slice_of(model_param_count(s), ranks, 0);
    n->weights = sl.padded * sizeof(float);
    /* ZeRO-2: the slice's sum, and the buckets the backward writes into
     * (grad_ring.h, from the same plan as grad_ring_create allocates). */
    size_t ring = si->gradient_slice ? grad_ring_floats(s) : 0;
    n->gradients = (si->gradient_slice ? sl.len + ring : sl.padded) * sizeof(float);
    n->optimizer_state = optimizer_state_bytes(opt, sl.len * sizeof(float), &n->saturated);
    memory_need_total(n);
    if (ring >= MEMORY_NEED_MAX / sizeof(float)) { /* no plan (host memory): no figure */
        n->saturated = 1;
        n->gradients = n->total = MEMORY_NEED_MAX;
    }
}

void shard_describe_schedule(const int *which, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        const shard_info *si = shard_info_of(which[i]);
        const char *what = !si->slices_state ? "all-reduce as --sync says"
                           : si->gradient_slice
                               ? "reduce-scatter every micro-batch in buckets during the "
                                 "backward, all-gather once a step"
                               : "reduce-scatter as --sync says, all-gather once a step";
        used += (size_t)snprintf(out + used, len - used, "%s%s %s", i ? "; " : "",
                                 si->head.name, what);
    }
}
