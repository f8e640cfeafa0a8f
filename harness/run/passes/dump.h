/* The window dump (docs/dump.md): the starting parameters, one window's
 * inputs, labels and mask, the split and the gradient accumulated over it,
 * as .npy files in PyTorch's convention with a manifest.json, so that any
 * framework can check accubench's gradient. */
#ifndef ACCUBENCH_DUMP_H
#define ACCUBENCH_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "model.h"
#include "reduction.h"
#include "split.h"

/* Whether `dir` can take a dump: it does not exist (its parent does), or
 * it is an empty directory. 0, or -1 with a one-line reason naming it. */
int dump_check_target(const char *dir, char *why, size_t why_len);

/* One window: input buffer 0 of d under the split, from the model's
 * starting weights (m->initial), and its accumulated gradient. */
typedef struct dump_window {
    model *m;
    dataset *d;
    const split *sp;
    dtype dtype;
    reduction reduction;
    optimizer_kind optimizer;
    uint64_t seed;
    double loss_sum;  /* the sum of the window's valid items' losses */
    const float *grad; /* host copy of the accumulated gradient, n_params */
} dump_window;

/* Writes the dump into a temporary directory beside `dir` and renames it
 * to `dir` when every file is written: a reader finds the whole dump or
 * none. Returns 0, or -1 with a one-line reason (a device call's failure
 * included). */
int dump_write(const char *dir, const dump_window *w, char *why, size_t why_len);

#endif
