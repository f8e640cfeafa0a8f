/* The memory a config needs, to the byte, from its shape alone. */
#ifndef ACCUBENCH_MODEL_NEED_H
#define ACCUBENCH_MODEL_NEED_H

#include <stddef.h>
#include <stdint.h>

#include "model_kind.h"

/* Bytes a config needs on the device: master weights, gradients, optimizer
 * state, the compute copy (bf16), the activations of one micro-batch, the
 * step's loss sum, and the rotated input buffers of one effective batch.
 * To the byte: what model_create, the dataset and step_runner_init
 * allocate, so a cap of exactly the total runs the step. */
typedef struct memory_need {
    size_t weights, master_copy, gradients, optimizer_state, activations, inputs;
    /* The one float the step's passes add the window's loss into
     * (step_runner_init allocates it under the cap, beside the
     * activations); MEMORY_NEED_LOSS_SUM_BYTES. */
    size_t loss_sum;
    size_t total;
    /* Set when a part or the total would pass MEMORY_NEED_MAX (a hostile
     * shape: products past 2^64 otherwise wrap into a small number that
     * fits); those figures are then MEMORY_NEED_MAX, a floor. */
    int saturated;
} memory_need;

/* Where the need saturates: the CSV's mem_need_bytes is a signed 64-bit
 * integer. */
#define MEMORY_NEED_MAX ((size_t)INT64_MAX)

/* The share of a device's memory a need may take: the rest is left for
 * what the need does not count (the program, its libraries, the
 * allocator's rounding). memory_fit.h judges configs by it; the gradient
 * check sizes its reference's pieces by it. */
#define MEMORY_FIT_USABLE_SHARE 0.9

/* The step's loss sum on the device: one float. */
#define MEMORY_NEED_LOSS_SUM_BYTES sizeof(float)

/* The parts of a need, in the order the planner prints and the probe
 * allocates them; their sum is the total. */
#define MEMORY_NEED_PARTS 7
void memory_need_parts(const memory_need *n, size_t out[MEMORY_NEED_PARTS]);

/* Sets n->total to the sum of its parts (MEMORY_NEED_MAX with n->saturated
 * set where it would pass it): the one place the parts are added up. */
void memory_need_total(memory_need *n);

void model_memory_need(const model_spec *s, dtype dt, optimizer_kind opt, int micro_batch,
                       int effective_batch, int input_buffers, memory_need *out);

#endif
