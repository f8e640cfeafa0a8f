/* The sync modes, one row each (see sync_modes.h). */
#include "sync_modes.h"

#include <stdio.h>

#include "name_list.h"

/* Each row: name, all-reduce per micro-batch, buckets during the last
 * backward, then the description. */
static const sync_info SYNCS[SYNC_COUNT] = {
    [SYNC_MICRO]   = {"micro",   1, 0,
                      "every micro-batch's gradient all-reduced after its backward"},
    [SYNC_WINDOW]  = {"window",  0, 0,
                      "the accumulated gradient all-reduced once, after the last micro-batch"},
    [SYNC_OVERLAP] = {"overlap", 0, 1,
                      "the last backward's gradient all-reduced in buckets as they are final, "
                      "behind the rest of the backward"},
};

const sync_info *sync_info_of(sync_mode s)
{
    return &SYNCS[s];
}

const char *sync_name(sync_mode s)
{
    return s >= 0 && s < SYNC_COUNT ? SYNCS[s].name : "?";
}

static const char *name_at(int s) { return SYNCS[s].name; }

int sync_parse(const char *s, sync_mode *out)
{
    int i = name_find(SYNC_COUNT, name_at, s);
    if (i < 0)
        return -1;
    *out = (sync_mode)i;
    return 0;
}

const char *sync_names(void)
{
    static char list[128];
    return name_list(list, sizeof list, SYNC_COUNT, name_at, ", ");
}

void sync_describe(const sync_mode *modes, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s (%s)", i ? "; " : "",
                                 sync_name(modes[i]), SYNCS[modes[i]].description);
}
