/* The execution modes, one row each (see modes.h). */
#include "modes.h"

#include <stdio.h>

/* Each row: name and description, where the activations come from, host
 * sync after each micro-batch, graph replay. */
static const mode_info MODES[] = {
    [MODE_ASYNC]       = {{"async", "no host sync inside a step"},
                          BK_ALLOC_HELD, 0, 0},
    [MODE_SYNC]        = {{"sync", "host sync after every micro-batch"},
                          BK_ALLOC_HELD, 1, 0},
    [MODE_GRAPH]       = {{"graph", "one step captured as a graph and replayed"},
                          BK_ALLOC_HELD, 0, 1},
    [MODE_ALLOC]       = {{"alloc", "activations allocated and freed per micro-batch"},
                          BK_ALLOC_PLAIN, 0, 0},
    [MODE_ALLOC_ASYNC] = {{"alloc-async",
                           "activations per micro-batch from a stream-ordered allocator"},
                          BK_ALLOC_STREAM_ORDERED, 0, 0},
};

const axis mode_axis = AXIS_OF("mode", MODES);

const mode_info *mode_info_of(exec_mode m)
{
    return (const mode_info *)axis_row_at(&mode_axis, m);
}

int mode_check_backend(exec_mode m, const backend *b, char *why, size_t why_len)
{
    if (mode_info_of(m)->graph && !b->ops->graph_begin) {
        snprintf(why, why_len, "mode %s needs graph capture, which the %s backend lacks",
                 mode_name(m), b->name);
        return -1;
    }
    return 0;
}
