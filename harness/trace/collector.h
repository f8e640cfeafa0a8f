/* A source of device activity records (the CUPTI collector on a GPU). The
 * harness sees only this interface; the CUDA side lives in kernels/. */
#ifndef ACCUBENCH_COLLECTOR_H
#define ACCUBENCH_COLLECTOR_H

#include <stddef.h>

#include "trace.h"

typedef struct collector collector;

typedef struct collector_ops {
    /* Starts recording device activity. */
    int (*start)(collector *c);
    /* Flushes everything recorded since start into `into` (on the
     * recorder's clock), stops recording. */
    int (*stop)(collector *c, trace_recorder *into);
    void (*destroy)(collector *c);
} collector_ops;

struct collector {
    const collector_ops *ops;
    void *impl;
    unsigned long long dropped; /* records the device could not deliver */
    char error[320];
};

#endif
