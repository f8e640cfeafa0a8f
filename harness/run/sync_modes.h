/* When the gradient all-reduce of a data-parallel step runs: one table
 * (sync_modes.c), whose columns the step reads (dp_step.c), like the
 * execution modes. No code checks a sync mode by name or number.
 *
 * Adding one: a value before SYNC_COUNT and its row. */
#ifndef ACCUBENCH_SYNC_MODES_H
#define ACCUBENCH_SYNC_MODES_H

#include <stddef.h>

typedef enum sync_mode {
    SYNC_MICRO = 0,
    SYNC_WINDOW,
    SYNC_OVERLAP,
    SYNC_COUNT
} sync_mode;

typedef struct sync_info {
    const char *name;        /* as the CLI, the profiles and the CSV spell it */
    /* Each micro-batch's own gradient is all-reduced after its backward and
     * then added to the accumulated one: K all-reduces a step (what a data
     * parallel wrapper does without no_sync). Otherwise the accumulated
     * gradient is all-reduced once, after the last micro-batch. */
    int per_micro;
    /* The last backward's gradient goes in buckets, each all-reduced as soon
     * as the model reports it final, while the rest of the backward runs;
     * waited for after it. */
    int buckets_in_backward;
    const char *description; /* one line: the CSV's `# sync:` metadata */
} sync_info;

const sync_info *sync_info_of(sync_mode s);
/* Its name, or "?" when out of range. */
const char *sync_name(sync_mode s);
/* 0 and *out, or -1 when the name is unknown. */
int sync_parse(const char *s, sync_mode *out);
/* "micro, window, overlap" for messages. */
const char *sync_names(void);
/* "micro (...); window (...)": the sync modes of a run, for the metadata. */
void sync_describe(const sync_mode *modes, int n, char *out, size_t len);

#endif
