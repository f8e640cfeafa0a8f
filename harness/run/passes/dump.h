/* The window dump (docs/dump.md): the starting parameters, one window's
 * inputs, labels and mask, the split and the gradient accumulated over it,
 * as .npy files in PyTorch's convention with a manifest.json, so that any
 * framework can check accubench's gradient; and in its noise/ the same for
 * the noise pass's windows, so that anyone can check the noise scale. */
#ifndef ACCUBENCH_DUMP_H
#define ACCUBENCH_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "grad_dtype.h"
#include "model.h"
#include "reduction.h"
#include "split.h"

/* Whether `dir` can take a dump: it does not exist (its parent does), or
 * it is an empty directory. 0, or -1 with a one-line reason naming it. */
int dump_check_target(const char *dir, char *why, size_t why_len);

/* The noise pass's figure, in the manifest of its windows' dump: the
 * row's noise_windows, grad_noise_scale and grad_noise_scale_err. */
typedef struct dump_noise_fields {
    int windows;
    double scale, scale_err;
} dump_noise_fields;

/* What one dump holds: windows (input buffer 0 of each of `data`, their
 * examples concatenated in order, each under the split), from the model's
 * starting weights (m->initial), and the gradient accumulated over all of
 * them. The gradient check's dump is one window; the noise pass's is every
 * window its estimate used. */
typedef struct dump_window {
    model *m;
    const dataset *data;
    int n_data;
    const split *sp;
    dtype dtype;
    /* What the gradient was held in between micro-batches: a reader
     * reproduces bf16's roundings or cannot hold the gradient to fp32's. */
    grad_dtype grad_dtype;
    reduction reduction;
    optimizer_kind optimizer;
    uint64_t seed;
    double loss_sum;  /* the sum of the windows' valid items' losses */
    const float *grad; /* host copy of the accumulated gradient, n_params */
    const dump_noise_fields *noise; /* NULL: not the noise pass's windows */
} dump_window;

/* Writes the dump of `w` into a temporary directory beside `dir`, and
 * with it the dump of the noise pass's windows in its noise/ (NULL: none,
 * the manifest's no_noise_dump saying why: `no_noise`), and renames it to
 * `dir` when every file is written: a reader finds the whole dump or none.
 * Returns 0, or -1 with a one-line reason (a device call's failure
 * included). */
int dump_write(const char *dir, const dump_window *w, const dump_window *noise,
               const char *no_noise, char *why, size_t why_len);

#endif
