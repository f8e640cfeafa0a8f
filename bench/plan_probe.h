/* plan --find-max-micro: the largest micro-batch that fits, once per
 * dtype and recompute value, by probing the device (or from the exact need
 * against --mem-cap where the device is not here). */
#ifndef ACCUBENCH_PLAN_PROBE_H
#define ACCUBENCH_PLAN_PROBE_H

#include <stdint.h>

#include "options.h"

typedef struct probe_args {
    const run_options *shared; /* plan's keys shared with run: model, dtype, ... */
    int effective, max_micro, devices;
    int model_given;           /* --model was named */
    int recompute_given;       /* --recompute was named: each answer says its value */
    uint64_t reserve;          /* --reserve: kept from --mem-cap */
} probe_args;

/* Prints the answers; the exit status is the worst answer's (0 found, 1
 * none fits, 2 bad input or the backend failed). */
int plan_probe(const probe_args *a);

#endif
