/* The noise scale of one config (noise_scale.h), measured in the gradient
 * check's place, from the starting weights, never in the timed pass:
 * `windows` windows of fresh learnable data (dataset_learnable.h), each
 * small batch (micro-batch k, or this rank's part of it under data
 * parallel) run on its own, into a zeroed gradient, normalised by its own
 * valid items, its norm taken before it is added to the window's sum. */
#ifndef ACCUBENCH_NOISE_PASS_H
#define ACCUBENCH_NOISE_PASS_H

#include <signal.h>
#include <stdint.h>

#include "comm.h"
#include "dataset.h"
#include "model.h"
#include "noise_scale.h"
#include "split.h"

/* The default of --noise-windows (docs/noise-scale.md says how it was
 * chosen). */
#define NOISE_WINDOWS_DEFAULT 32
#define NOISE_WINDOWS_DEFAULT_TEXT "32" /* the same, for the option table */
/* The pass's share of the config's --budget-s, and the windows it runs
 * whatever the time (fewer leave the jackknife nothing to go on). */
#define NOISE_BUDGET_SHARE 0.2
#define NOISE_WINDOWS_MIN 4

typedef struct noise_pass_options {
    int windows;   /* the most windows */
    double time_s; /* stop after the window that reaches it (at least
                    * NOISE_WINDOWS_MIN); 0: no limit. Under data parallel
                    * any rank's stop is every rank's. */
    uint64_t seed; /* the data's; window w is drawn from seed and w */
    comm *comm;    /* the config's ranks; NULL: one process */
    /* A signal's flag, looked at after every small batch (a window it
     * cuts is not kept); NULL: nothing stops the pass. */
    const volatile sig_atomic_t *stop;
} noise_pass_options;

/* Window `index` of the pass, as every rank draws it whole (shard it
 * after): fresh learnable data for the split's `global` examples, from
 * the options' seed and the index. The one rule for it: the pass and the
 * dump of its windows (noise_dump.h) both draw through here. */
int noise_window_data(model *m, const split *sp, uint64_t seed, int index, dataset *d);

/* BK_* status. out->windows 0 and the estimate NAN when the split has one
 * small batch per window (nothing to compare the window with);
 * out->windows_run the windows run (fewer than asked where time_s stopped
 * them), out->windows_complete those of them run to their end. */
int noise_pass_run(model *m, const split *sp, const noise_pass_options *o, noise_result *out);

#endif
