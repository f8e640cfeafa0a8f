/* --train-steps: the loss of N optimizer steps from the starting weights,
 * per config, on learnable data (dataset_learnable.h), into a curves CSV
 * beside the main one (NAME.curves.csv): the config's key columns, the
 * order its sums were taken in, the step and the loss. The loss of step t
 * is the window's loss at the weights before update t, normalised by the
 * window's valid items whatever the config's reduction, from one forward
 * of the whole window: the same measurement for every config, so that the
 * curves differ only by what the updates did. A curve that diverges (its
 * loss not finite or three times where it started) stops there: its
 * remaining steps are NAN (empty in the CSV), and where it diverged at
 * its last step that step too, so that a diverged curve ends empty.
 * The file and its summary: curves_file.h.
 *
 * Every config of the correct reduction runs twice: with its micro-batches
 * as they are and with the examples of each reversed (the same sums, taken
 * in another order). The gap between those two is the rounding gap the
 * correct splits' curves are measured against; the file ends with one
 * `#` line per series (model, dtype, mode, E, devices, sync) saying the
 * largest gap between the correct splits, the rounding gap, and each
 * known-wrong reduction's gap from the correct curve of its own split. */
#ifndef ACCUBENCH_TRAIN_CURVES_H
#define ACCUBENCH_TRAIN_CURVES_H

#include <signal.h>
#include <stdint.h>

#include "comm.h"
#include "config.h"
#include "model.h"
#include "modes.h"
#include "reduction.h"
#include "result_row.h"
#include "split.h"
#include "sweep_state.h"
#include "sync_modes.h"

typedef struct curve_run {
    int steps;
    uint64_t seed;
    int reverse; /* the examples of each micro-batch in reverse order */
    exec_mode mode;
    reduction red;
    comm *comm;  /* NULL: one process */
    sync_mode sync;
    /* Looked at before every step (with ranks, any rank's is every rank's):
     * set, the curve ends there and *interrupted says so. NULL: none. */
    const volatile sig_atomic_t *stop;
    int *interrupted;
    /* The noise scale along the curve (curve_noise.h): windows of its
     * passes (0: none), and its figure and error per step, NAN where not
     * measured (both NULL: none). */
    int noise_windows;
    double *noise, *noise_err;
} curve_run;

/* N steps from the starting weights (model_reset before and after); loss
 * holds N values, or fewer where o->stop ended it; with o->noise, the
 * noise scale at the steps curve_noise_due names. BK_* status. */
int train_curve_run(model *m, const split *sp, const curve_run *o, double *loss);

/* The config's curves (both orders for the correct reduction) into
 * s->curves (none on a rank that does not write), trained outside the
 * memory cap: a check, not the step. noise_windows: the windows the
 * row's noise pass ran to their end (noise_row_pass's windows_complete),
 * which the noise along each forward curve runs too (0: --noise-windows).
 * BK_* status (BK_OOM: the device itself is too full for them). */
int train_curves_config(sweep *s, model *m, const config *c, const result_row *r,
                        int noise_windows);

#endif
