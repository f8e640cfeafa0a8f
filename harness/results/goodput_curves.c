/* The loss chart's table: each effective batch's kept curve (the best
 * learning rate of its grid, as the time-to-target table keeps it),
 * against the examples seen, so that the curves of several E share one
 * axis: a larger E takes fewer steps to the target but more examples,
 * and the chart shows where each crosses it. Each row ends with its
 * series' other key columns, so that a chart of several series can say
 * which is which (two modes of one model read alike by name alone). */
#include <math.h>
#include <stdlib.h>

#include "goodput_table.h"

void goodput_write_curves(FILE *f, const goodput_series *s, size_t n)
{
    fprintf(f, "series,model,effective_batch,lr,step,examples,loss,loss_smoothed,target_loss,"
               "steps_to_target,backend,dtype,mode,devices,sync,recompute,shard\n");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s[i].n; j++) {
            const goodput_point *p = &s[i].p[j];
            const read_curve *c = p->curve;
            double *smooth = c ? malloc((size_t)c->steps * sizeof *smooth) : NULL;
            if (!smooth)
                continue; /* no curve kept, or no memory for its smoothing */
            /* the smoothing steps to target reads (goodput_build), so that
             * the drawn line crosses the target where the table says */
            smooth_curve(c->loss, c->steps, goodput_smooth_half(p->e), smooth);
            for (int t = 0; t < c->steps; t++) {
                fprintf(f, "%zu,%s,%lld,", i + 1, s[i].key->model, p->e);
                goodput_put_num(f, p->lr, ",");
                /* step t's loss is taken before its update: t steps of E
                 * examples came before it */
                fprintf(f, "%d,%lld,", t, (long long)t * p->e);
                goodput_put_num(f, c->loss[t], ",");
                goodput_put_num(f, smooth[t], ",");
                goodput_put_num(f, s[i].target, ",");
                goodput_put_num(f, p->steps, ",");
                const read_curve *k = s[i].key;
                fprintf(f, "%s,%s,%s,%lld,%s,%s,%s\n", k->backend, k->dtype, k->mode,
                        k->devices, k->sync, k->recompute, k->shard);
            }
            free(smooth);
        }
}
