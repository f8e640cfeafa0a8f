/* The configs of one model, effective batch and device count, run
 * together: each prepared (set up, gradient-checked), then timed in
 * interleaved rounds with the others of its shard value (rounds.h), then
 * counted, traced and written. The sweep collects them (config_block) while
 * --rounds is on. */
#ifndef ACCUBENCH_SWEEP_BLOCK_H
#define ACCUBENCH_SWEEP_BLOCK_H

#include <stddef.h>

#include "config.h"
#include "options.h"
#include "sweep_state.h"

typedef struct config_block {
    config *c;
    size_t n, cap;
} config_block;

/* Whether a run's configs are timed in rounds: --rounds N, or auto where
 * no fixed --steps is asked (a fixed count times each config alone). */
int rounds_on(const run_options *o);

/* Adds c; 0, or -1 (with the reason on stderr) when out of memory. */
int config_block_add(config_block *b, const config *c);
void config_block_free(config_block *b);

/* Runs and writes every config of the block, then empties it; 0, or -1
 * when the CSV could not be written (the sweep stops). */
int sweep_block_run(sweep *s, sweep_place *p, config_block *b);

#endif
