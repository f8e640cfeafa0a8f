/* Whether a config's memory need fits the device's own memory, as run
 * judges it before it makes anything: a tenth of the memory is left for
 * what the need does not count (the program, its libraries, the allocator's
 * rounding), and where the device's memory is the host's (the CPU), the
 * gradient check's host copies are counted beside the need, since the
 * check runs with the step's memory held. The one rule for run
 * (sweep_row_fits) and plan --find-max-micro (probe.c), so that the plan
 * never promises a micro-batch the run then refuses. The user's --mem-cap
 * is the allocator's (dispatch.h) and not judged here. */
#ifndef ACCUBENCH_MEMORY_FIT_H
#define ACCUBENCH_MEMORY_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "model_need.h" /* MEMORY_FIT_USABLE_SHARE */

/* 1 where `need` bytes of a model of `params` parameters fit on b; else 0,
 * with the reason in why (the need, the host copies, the usable share). */
int memory_fit(const backend *b, uint64_t need, uint64_t params, char *why, size_t why_len);

#endif
