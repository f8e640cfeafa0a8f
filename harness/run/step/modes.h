/* The execution modes: how the host drives the device through one
 * optimizer step. The arithmetic is the same in every mode; what differs is
 * a column of one table (modes.c), which the step reads (step.c) and from
 * which the names, their parser, the usage text's --mode list and the CSV's
 * `# modes:` metadata are made (axis.h). No code checks a mode by name or
 * number.
 *
 * Adding a mode: its row in MODES. A mode is its row's index; the few rows
 * code or tests must name have a constant below. */
#ifndef ACCUBENCH_MODES_H
#define ACCUBENCH_MODES_H

#include <stddef.h>

#include "axis.h"
#include "backend.h"

typedef int exec_mode; /* a row of mode_axis */

/* The rows with a name in code: MODE_ASYNC is the default. */
enum { MODE_ASYNC = 0, MODE_SYNC, MODE_GRAPH, MODE_ALLOC, MODE_ALLOC_ASYNC };

typedef struct mode_info {
    axis_row head; /* name; description: the CSV's `# modes:` metadata */
    /* BK_ALLOC_HELD: the activations are created once per config; otherwise
     * created and freed per micro-batch, from this allocator. */
    bk_allocator activations;
    int sync_per_micro;       /* the host waits for the device after each micro-batch */
    /* Each step captured once per input buffer, then replayed: needs the
     * backend's graph ops (a backend without them refuses the mode). */
    int graph;
} mode_info;

extern const axis mode_axis;
#define MODE_COUNT (mode_axis.count)
#define mode_name(m) axis_name(&mode_axis, (m))

/* The row of mode m; m must be a valid mode. */
const mode_info *mode_info_of(exec_mode m);

/* Whether backend b can run mode m: 0, or -1 with the one-line reason
 * (the backend lacks an op the row's columns need). */
int mode_check_backend(exec_mode m, const backend *b, char *why, size_t why_len);

#endif
