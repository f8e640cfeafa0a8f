#include "split.h"

#include <stdio.h>

#include "plural.h"

int split_make(int effective, int micro, int devices, split *s, char *why, int why_len)
{
    if (effective < 1 || micro < 1 || devices < 1) {
        snprintf(why, why_len, "batch sizes and device counts must be at least 1");
        return -1;
    }
    if (micro > effective) {
        snprintf(why, why_len, "micro-batch %d is larger than the effective batch %d",
                 micro, effective);
        return -1;
    }
    s->effective = effective;
    s->micro = micro;
    s->devices = devices;
    s->accum = (effective + micro - 1) / micro;
    s->last = effective - (s->accum - 1) * micro;
    s->global = effective * devices;
    return 0;
}

int split_make_sharded(int global, int micro, int devices, split *s, char *why, int why_len)
{
    if (global < 1 || micro < 1 || devices < 1) {
        snprintf(why, why_len, "batch sizes and device counts must be at least 1");
        return -1;
    }
    int per_device = (global + devices - 1) / devices;
    if (micro > per_device) {
        snprintf(why, why_len, "micro-batch %d is larger than the %d examples a device "
                 "takes of the effective batch %d over %d devices", micro, per_device, global,
                 devices);
        return -1;
    }
    long long step = (long long)micro * devices;
    int accum = (int)((global + step - 1) / step);
    int last_global = (int)(global - (accum - 1) * step);
    if (last_global < devices) {
        snprintf(why, why_len, "the last micro-batch of the effective batch %d holds %d "
                 "%s for %d devices (micro-batch %d): a device would have none",
                 global, last_global, plural(last_global, "example", "examples"), devices,
                 micro);
        return -1;
    }
    s->effective = per_device;
    s->global = global;
    s->micro = micro;
    s->devices = devices;
    s->accum = accum;
    s->last = (last_global + devices - 1) / devices;
    return 0;
}

int split_make_sharded_largest(int global, int max_micro, int devices, split *s, char *why,
                               int why_len)
{
    int per_device = devices > 0 ? (global + devices - 1) / devices : global;
    int micro = max_micro < per_device ? max_micro : per_device;
    if (split_make_sharded(global, micro, devices, s, why, why_len) == 0)
        return 0;
    char ignored[200];
    for (int m = micro - 1; m >= 1; m--)
        if (split_make_sharded(global, m, devices, s, ignored, sizeof ignored) == 0)
            return 0;
    return -1;
}

void split_shard(const split *s, int rank, int k, int *first, int *count)
{
    long long step = (long long)s->micro * s->devices, base = k * step;
    long long g = s->global - base < step ? s->global - base : step;
    long long lo = base + rank * g / s->devices, hi = base + (rank + 1) * g / s->devices;
    *first = (int)lo;
    *count = (int)(hi - lo);
}
