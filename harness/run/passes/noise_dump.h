/* The noise pass's windows, for the dump (docs/dump.md, DIR/noise/): the
 * windows the estimate used, drawn again as the pass drew them
 * (noise_window_data), and the gradient of the mean loss over all their
 * valid items at the starting weights, so that anyone can compute the
 * noise scale exactly from per-example gradients and hold the pass's
 * figure to it. */
#ifndef ACCUBENCH_NOISE_DUMP_H
#define ACCUBENCH_NOISE_DUMP_H

#include <stdint.h>

#include "dataset.h"
#include "model.h"
#include "split.h"

typedef struct noise_dump {
    dataset *windows; /* in the pass's order, one buffer each */
    int n_windows;
    float *grad;      /* host: d(loss_sum / valid)/d(params), n_params floats */
    double loss_sum;  /* over every valid item of the windows */
    int valid;        /* their valid items */
} noise_dump;

/* Draws windows 0 .. windows_complete - 1 (noise_result), keeps those that
 * entered the estimate (noise_window_usable) and accumulates their
 * gradient: every small batch through the model's forward and backward as
 * the pass runs it, from the model's current weights (the starting ones:
 * call it where the pass ran), with the loss scale 1 / (all their valid
 * items) instead of its own. Its memory is outside the cap, as the pass's
 * is. BK_* status (the reason in m->b->error); nothing to free on failure. */
int noise_dump_build(model *m, const split *sp, uint64_t seed, int windows_complete,
                     noise_dump *out);
void noise_dump_free(noise_dump *nd);

#endif
