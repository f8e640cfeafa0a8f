#include "split.h"

#include <stdio.h>

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
    return 0;
}
