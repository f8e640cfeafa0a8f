/* The sweep's configs in its own order, for the ETA (eta.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "eta.h"
#include "model_kind.h"
#include "options.h"
#include "sweep_block.h"

/* Fills an item for every config of the sweep, or counts them: the
 * sweep's own iterator, so that item i is the sweep's config i. */
static int walk(eta *e, const run_options *o, int data_parallel)
{
    int n = 0, block = 0;
    config_iter iter;
    config c;
    config_iter_start(&iter, o, data_parallel);
    for (; config_next(&iter, &c); n++) {
        /* sweep.c's blocks: a model, effective batch or device count opens
         * one; its configs of one shard value are one comparison */
        block += c.opens < CONFIG_ROW;
        if (!e->items)
            continue;
        eta_item *it = &e->items[n];
        it->group = rounds_on(o) ? block * (SHARD_COUNT + 1) + (int)c.shard + 1 : 0;
        it->flops = model_flops_per_step(c.model, c.sp.effective);
        it->micro = c.sp.micro;
        it->arm = c.arm;
        it->accum = c.sp.accum;
        it->model = c.model_index;
        it->mode = (int)c.mode;
        it->step_ms = it->pass_ms = it->wall_s = it->noise_s = NAN;
    }
    return n;
}

int eta_plan(eta *e, const run_options *o, int data_parallel)
{
    memset(e, 0, sizeof *e);
    e->c = (eta_costs){.budget_s = o->budget_s, .warmup = o->warmup, .steps = o->steps,
                       .min_samples = o->min_samples, .max_samples = o->max_samples,
                       .trace_steps = o->trace_steps, .max_step_s = o->max_step_s,
                       .noise_windows = o->noise_windows, .rounds = o->rounds};
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
