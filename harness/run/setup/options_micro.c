/* The micro-batches a sweep visits at each effective batch, and the ones
 * it leaves out (see options.h). */
#include "options.h"

#include <stdio.h>

int options_micro_list(const run_options *o, int e, int share, int *out, int max)
{
    int n = 0;
    if (o->micro_pow2) {
        int m = 1;
        for (; m <= share && n < max; m *= 2)
            out[n++] = m;
        /* and the share itself (E on one device), the split without
         * accumulation, where it is not a power of two: without it an E of
         * 48 had no K = 1 row to set the others against, 64 over 3 ranks
         * no 22x1, and plan --recommend never measured 48x1 */
        if (m / 2 != share && n < max)
            out[n++] = share;
    }
    int made = n; /* pow2's: a size named too is not a second arm */
    for (int i = 0; i < o->n_micro && n < max; i++) {
        if (o->micro[i] > e) /* no split of e: said once, by options_micro_left_out */
            continue;
        int dup = 0;
        for (int j = 0; j < made; j++)
            dup |= out[j] == o->micro[i];
        if (!dup)
            out[n++] = o->micro[i];
    }
    /* ascending, so a sweep reads small to large */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

int options_micro_left_out(const run_options *o, char *out, size_t len)
{
    size_t used = 0;
    int pairs = 0;
    out[0] = '\0';
    for (int i = 0; i < o->n_effective; i++)
        for (int j = 0; j < o->n_micro; j++) {
            int dup = 0; /* a size named twice (two arms) is said once */
            for (int k = 0; k < j; k++)
                dup |= o->micro[k] == o->micro[j];
            if (o->micro[j] <= o->effective[i] || dup)
                continue;
            if (used < len)
                used += (size_t)snprintf(out + used, len - used, "%s%d at effective batch %d",
                                         pairs ? ", " : "micro-batch ", o->micro[j],
                                         o->effective[i]);
            pairs++;
        }
    if (pairs && used < len)
        snprintf(out + used, len - used, " left out: larger than the batch, no split of it");
    return pairs;
}
