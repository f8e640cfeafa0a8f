/* The execution modes: how the host drives the device through one
 * optimizer step. The arithmetic is the same in every mode; what differs is
 * a column of one table (modes.c), which the step reads (step.c) and from
 * which the names, their parser, the usage text's --mode list and the CSV's
 * `# modes:` metadata are made. No code checks a mode by name or number.
 *
 * Adding a mode: a value in exec_mode (before MODE_COUNT) and its row in
 * MODES. Another axis of the sweep (say, when the gradient all-reduce runs)
 * is one more such pair of files: an enum, a table of rows with a name, a
 * description and the columns its code reads, and these few functions. */
#ifndef ACCUBENCH_MODES_H
#define ACCUBENCH_MODES_H

#include <stddef.h>

#include "backend.h"

typedef enum exec_mode {
    MODE_ASYNC = 0,
    MODE_SYNC,
    MODE_GRAPH,
    MODE_ALLOC,
    MODE_ALLOC_ASYNC,
    MODE_COUNT
} exec_mode;

typedef struct mode_info {
    const char *name;         /* as the CLI, the profiles and the CSV spell it */
    /* BK_ALLOC_HELD: the activations are created once per config; otherwise
     * created and freed per micro-batch, from this allocator. */
    bk_allocator activations;
    int sync_per_micro;       /* the host waits for the device after each micro-batch */
    int graph;                /* each step captured once per input buffer, then replayed */
    const char *description;  /* one line: the CSV's `# modes:` metadata */
} mode_info;

/* The row of mode m; m must be a valid mode. */
const mode_info *mode_info_of(exec_mode m);
/* Its name, or "?" when m is out of range. */
const char *mode_name(exec_mode m);
/* Returns 0 and sets *out, or -1 when the name is unknown. */
int mode_parse(const char *s, exec_mode *out);
/* "async, sync, ...": every name, for messages. */
const char *mode_names(void);
/* "async (no host sync inside a step); sync (...)": the modes of a run, for
 * the CSV's `# modes:` line. */
void modes_describe(const exec_mode *modes, int n, char *out, size_t len);

#endif
