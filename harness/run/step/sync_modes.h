/* When the gradient all-reduce of a data-parallel step runs: one table
 * (sync_modes.c), whose columns the step reads (dp_step.c), like the
 * execution modes. No code checks a sync mode by name or number.
 *
 * Adding one: its row in SYNCS. */
#ifndef ACCUBENCH_SYNC_MODES_H
#define ACCUBENCH_SYNC_MODES_H

#include <stddef.h>

#include "axis.h"

typedef int sync_mode; /* a row of sync_axis */

/* The rows with a name in code: SYNC_WINDOW is the default. */
enum { SYNC_MICRO = 0, SYNC_WINDOW, SYNC_OVERLAP };

/* `every` of a row that all-reduces once, after the window's last
 * micro-batch (every K, whatever K is). */
#define SYNC_EVERY_WINDOW 0

typedef struct sync_info {
    axis_row head; /* name; description: the CSV's `# sync:` metadata */
    /* The gradient is all-reduced after every `every`-th micro-batch of the
     * window and after its last (SYNC_EVERY_WINDOW: after the last only).
     * Between two all-reduces each rank adds its own micro-batches to the
     * reduced sum of the earlier ones (every 1: what a data-parallel wrapper
     * does without no_sync: K all-reduces a step). */
    int every;
    /* The backward before each all-reduce sends the gradient in buckets,
     * each all-reduced as soon as the model reports it final, while the
     * rest of the backward runs; waited for after it. */
    int buckets_in_backward;
} sync_info;

extern const axis sync_axis;
#define SYNC_COUNT (sync_axis.count)
#define sync_name(s) axis_name(&sync_axis, (s))

const sync_info *sync_info_of(sync_mode s);

/* Whether micro-batch k of a window of `accum` all-reduces after its
 * backward. */
int sync_reduces_after(sync_mode s, int k, int accum);
/* Whether micro-batch k starts a new run of micro-batches after an
 * all-reduce (never k = 0). */
int sync_reduced_before(sync_mode s, int k);
/* All-reduces of a window of `accum` micro-batches (each in buckets where
 * the row says so). */
int sync_reduces_per_window(sync_mode s, int accum);

/* "micro every 1; window every K; overlap every K in buckets": each row's
 * schedule, for the CSV's `# sync_allreduce:` metadata, rows which[0..n). */
void sync_describe_schedule(const int *which, int n, char *out, size_t len);

#endif
