/* Until a config of a model has run, the time left has only the other
 * models to go on, scaled by FLOPs, and a model whose weights leave the
 * caches is far from that: on two CPU cores model M's pass at micro-batch 1
 * took 178 ms where S's took 3.4 ms and their FLOPs said 88 (S's 21 MB of
 * weights stay in cache; M's 550 MB are read from memory three times a
 * pass). Its small micro-batches were then predicted near --max-step-s
 * instead of far over it, and the estimate at the boundary between the
 * models was twice the truth. So before the sweep, each model after the
 * first is made once and timed for one pass at the smallest and the
 * largest micro-batch it will run: about 3 s on the CPU for M (making it
 * is most of that; its 256-example pass is 1.4 s, timed twice: the first
 * is cold). The first model's first
 * config runs at once and tells its own figures. Not measured on a GPU. */
#include "eta_probe.h"

#include <math.h>
#include <stdlib.h>

#include "config.h"
#include "dataset.h"
#include "measure.h"
#include "model.h"
#include "step.h"

/* The first pass is cold (its activations touched for the first time) and
 * is not the figure: model M's 64-example pass took 1891 ms cold and 773
 * warm, and the line through it put M's 8x8 step at 2.8 s for 1.6. The
 * pass after it is taken; three more and their median where it is shorter
 * than this. */
#define ETA_PROBE_SHORT_MS 100.0

/* One pass of config c on model m, in ms; NAN where it cannot be made. */
static double probe_pass(sweep *s, model *m, const config *c)
{
    if (c->unsplittable[0] || !sweep_config_fits(s, c))
        return NAN;
    input_spec in;
    model_input(&m->spec, &in);
    dataset d;
    if (dataset_create(s->b, &in, c->sp.global, c->buffers, c->seed, &d))
        return NAN;
    step_runner run;
    double ms = NAN;
    if (step_runner_init(&run, m, &d, &c->sp, c->mode, c->reduction) == 0) {
        if (measure_single_pass(&run, 1, &ms) ||
            measure_single_pass(&run, ms < ETA_PROBE_SHORT_MS ? 3 : 1, &ms))
            ms = NAN;
        step_runner_free(&run);
    }
    dataset_destroy(&d);
    return ms;
}

/* Model `index`'s configs at its smallest and largest micro-batch (the
 * first of each in the sweep's order), and their places in the plan. */
static int ends_of(const run_options *o, int index, config ends[2], int at[2])
{
    config_iter it;
    config c;
    int n = 0, found = 0;
    config_iter_start(&it, o, 0);
    while (config_next(&it, &c)) {
        if (c.model_index == index) {
            if (!found || c.sp.micro < ends[0].sp.micro)
                ends[0] = c, at[0] = n;
            if (!found || c.sp.micro > ends[1].sp.micro)
                ends[1] = c, at[1] = n;
            found = 1;
        }
        n++;
    }
    return found;
}

void eta_probe_models(sweep *s, const run_options *o, eta *plan)
{
    /* the later models are the ones guessed from the first */
    for (int i = 1; i < o->n_models && !*s->stop; i++) {
        config ends[2];
        int at[2];
        if (!ends_of(o, i, ends, at) || !sweep_config_fits(s, &ends[0]))
            continue;
        model m;
        if (model_create(s->b, ends[0].model, &o->optimizer, ends[0].seed, &m))
            continue;
        for (int e = 0; e < 2 && !*s->stop; e++) {
            if (e == 1 && at[1] == at[0])
                break;
            double ms = probe_pass(s, &m, &ends[e]);
            if (ms > 0 && at[e] < plan->n)
                eta_record_probe(plan, at[e], ms);
        }
        model_destroy(&m);
    }
    s->b->error[0] = '\0'; /* what could not be made is not this run's error */
}
