/* The memory a config needs, to the byte, from its shape alone. */
#ifndef ACCUBENCH_MODEL_NEED_H
#define ACCUBENCH_MODEL_NEED_H

#include <stddef.h>
#include <stdint.h>

#include "model_kind.h"

/* Bytes a config needs on the device: master weights, gradients, optimizer
 * state, the compute copy (bf16), the activations of one micro-batch, and
 * the rotated input buffers of one effective batch. To the byte: what
 * model_create, activations_create and the dataset allocate. */
typedef struct memory_need {
    size_t weights, master_copy, gradients, optimizer_state, activations, inputs;
    size_t total;
    /* Set when a part or the total would pass MEMORY_NEED_MAX (a hostile
     * shape: products past 2^64 otherwise wrap into a small number that
     * fits); those figures are then MEMORY_NEED_MAX, a floor. */
    int saturated;
} memory_need;

/* Where the need saturates: the CSV's mem_need_bytes is a signed 64-bit
 * integer. */
#define MEMORY_NEED_MAX ((size_t)INT64_MAX)

void model_memory_need(const model_spec *s, dtype dt, optimizer_kind opt, int micro_batch,
                       int effective_batch, int input_buffers, memory_need *out);

#endif
