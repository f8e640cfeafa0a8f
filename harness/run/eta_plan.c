/* The sweep's configs in its own order, for the ETA (eta.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eta.h"
#include "model.h"
#include "options.h"

/* Calls add(e, ...) for every config of the sweep, or counts them. */
static int walk(eta *e, const run_options *o, int data_parallel)
{
    int n = 0, one[] = {1};
    const int *devices = data_parallel && o->n_devices ? o->devices : one;
    int n_dev = data_parallel && o->n_devices ? o->n_devices : 1;
    /* x shard x recompute: rows of one split alike for the estimate */
    int n_sync = (data_parallel ? o->n_syncs * o->n_shards : 1) *
                 (o->n_recomputes > 0 ? o->n_recomputes : 1);
    for (int m = 0; m < o->n_models; m++)
        for (int ei = 0; ei < o->n_effective; ei++) {
            int eff = o->effective[ei], micros[64];
            int n_micro = options_micro_list(o, eff, micros, 64);
            for (int di = 0; di < n_dev; di++) {
                int share = (eff + devices[di] - 1) / devices[di];
                for (int i = 0; i < n_micro; i++) {
                    if (data_parallel && micros[i] > share)
                        continue; /* the sweep passes over it, no row */
                    for (int k = 0; k < o->n_modes * o->n_reductions * n_sync; k++, n++) {
                        if (!e->items)
                            continue;
                        eta_item *it = &e->items[n];
                        it->flops = model_flops_per_step(&o->models[m], share);
                        it->micro = micros[i];
                        it->accum = (share + micros[i] - 1) / micros[i];
                        it->model = m;
                        it->mode = (int)o->modes[k / (o->n_reductions * n_sync)];
                        it->step_ms = it->pass_ms = it->wall_s = it->noise_s = NAN;
                    }
                }
            }
        }
    return n;
}

int eta_plan(eta *e, const run_options *o, int data_parallel)
{
    memset(e, 0, sizeof *e);
    e->c = (eta_costs){.budget_s = o->budget_s, .warmup = o->warmup, .steps = o->steps,
                       .min_samples = o->min_samples, .max_samples = o->max_samples,
                       .trace_steps = o->trace_steps, .max_step_s = o->max_step_s,
                       .noise_windows = o->noise_windows};
    int n = walk(e, o, data_parallel);
    e->items = calloc(n ? (size_t)n : 1, sizeof *e->items);
    if (!e->items)
        return -1;
    e->n = walk(e, o, data_parallel);
    return 0;
}

void eta_free(eta *e)
{
    free(e->items);
    memset(e, 0, sizeof *e);
}
