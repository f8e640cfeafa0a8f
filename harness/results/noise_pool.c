/* The noise scale of several correlated rows (noise_pool.h). */
#include "noise_pool.h"

#include <math.h>

int noise_pool_takes(double b, double err)
{
    return b > 0 && err > 0 && isfinite(b) && isfinite(err);
}

void noise_pool_add(noise_pool *p, double b, double err, long windows)
{
    if (!noise_pool_takes(b, err))
        return;
    /* the pooled error is a weighted mean of the rows' own, no tighter
     * than theirs: its interval takes the fewest windows' t (unknown
     * anywhere, unknown) */
    long known = windows > 0 ? windows : 0;
    if (!p->n)
        p->windows = known;
    else if (!known || !p->windows)
        p->windows = 0;
    else if (known < p->windows)
        p->windows = known;
    double w = 1 / (err * err);
    p->w += w;
    p->wb += w * b;
    p->werr += w * err;
    p->n++;
}

void noise_pool_result(const noise_pool *p, double *b, double *err)
{
    *b = p->n ? p->wb / p->w : NAN;
    /* sum_i (w_i / w) err_i: the weighted mean's error under full
     * correlation, the bound for any (noise_pool.h) */
    *err = p->n ? p->werr / p->w : NAN;
}
