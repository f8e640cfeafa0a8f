/* The sync modes, one row each (see sync_modes.h). */
#include "sync_modes.h"

#include <stdio.h>

/* Each row: name and description, all-reduce every how many micro-batches,
 * buckets during the backward before each all-reduce. */
static const sync_info SYNCS[] = {
    [SYNC_MICRO]   = {{"micro", "every micro-batch's gradient all-reduced after its backward"},
                      1, 0},
    [SYNC_WINDOW]  = {{"window", "the accumulated gradient all-reduced once, after the last "
                                 "micro-batch"},
                      SYNC_EVERY_WINDOW, 0},
    [SYNC_OVERLAP] = {{"overlap", "the last backward's gradient all-reduced in buckets as they "
                                  "are final, behind the rest of the backward"},
                      SYNC_EVERY_WINDOW, 1},
};

const axis sync_axis = AXIS_OF("sync", SYNCS);

const sync_info *sync_info_of(sync_mode s)
{
    return (const sync_info *)axis_row_at(&sync_axis, s);
}

int sync_reduces_after(sync_mode s, int k, int accum)
{
    int every = sync_info_of(s)->every;
    return k == accum - 1 || (every > 0 && (k + 1) % every == 0);
}

int sync_reduced_before(sync_mode s, int k)
{
    int every = sync_info_of(s)->every;
    return k > 0 && every > 0 && k % every == 0;
}

int sync_reduces_per_window(sync_mode s, int accum)
{
    int n = 0;
    for (int k = 0; k < accum; k++)
        n += sync_reduces_after(s, k, accum);
    return n;
}

void sync_describe_schedule(const int *which, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        const sync_info *si = sync_info_of(which[i]);
        char every[16];
        if (si->every == SYNC_EVERY_WINDOW)
            snprintf(every, sizeof every, "K");
        else
            snprintf(every, sizeof every, "%d", si->every);
        used += (size_t)snprintf(out + used, len - used, "%s%s every %s%s", i ? "; " : "",
                                 si->head.name, every,
                                 si->buckets_in_backward ? " in buckets" : "");
    }
}
