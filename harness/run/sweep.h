/* `accubench run`: the sweep over models, effective batches, splits, modes
 * and reductions, one CSV row per config. */
#ifndef ACCUBENCH_SWEEP_H
#define ACCUBENCH_SWEEP_H

#include "options.h"

typedef struct run_context {
    const char *argv0;
    const char *git_rev;
    const char *command_line;
} run_context;

/* Exit codes: 0 every config ran (oom/skipped rows included), 1 a config
 * failed or its gradient check did, 2 bad input or no backend, 130 when
 * interrupted (the rows measured so far stay on disk). */
int sweep_run(const run_options *o, const run_context *ctx);

#endif
