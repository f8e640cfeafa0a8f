/* The execution modes, one row each (see modes.h). */
#include "modes.h"

#include <stdio.h>

#include "name_list.h"

/* Each row: name, where the activations come from, host sync after each
 * micro-batch, graph replay, then the description. */
static const mode_info MODES[MODE_COUNT] = {
    [MODE_ASYNC]       = {"async",       BK_ALLOC_HELD,           0, 0,
                          "no host sync inside a step"},
    [MODE_SYNC]        = {"sync",        BK_ALLOC_HELD,           1, 0,
                          "host sync after every micro-batch"},
    [MODE_GRAPH]       = {"graph",       BK_ALLOC_HELD,           0, 1,
                          "one step captured as a graph and replayed"},
    [MODE_ALLOC]       = {"alloc",       BK_ALLOC_PLAIN,          0, 0,
                          "activations allocated and freed per micro-batch"},
    [MODE_ALLOC_ASYNC] = {"alloc-async", BK_ALLOC_STREAM_ORDERED, 0, 0,
                          "activations per micro-batch from a stream-ordered allocator"},
};

const mode_info *mode_info_of(exec_mode m)
{
    return &MODES[m];
}

const char *mode_name(exec_mode m)
{
    return m >= 0 && m < MODE_COUNT ? MODES[m].name : "?";
}

static const char *name_at(int m) { return MODES[m].name; }

int mode_parse(const char *s, exec_mode *out)
{
    int i = name_find(MODE_COUNT, name_at, s);
    if (i < 0)
        return -1;
    *out = (exec_mode)i;
    return 0;
}

const char *mode_names(void)
{
    static char list[256];
    return name_list(list, sizeof list, MODE_COUNT, name_at, ", ");
}

void modes_describe(const exec_mode *modes, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s (%s)", i ? "; " : "",
                                 mode_name(modes[i]), MODES[modes[i]].description);
}
