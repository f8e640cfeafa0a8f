/* Training a config for the loss curves (train_curves.h). */
#include "train_curves.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curve_noise.h"
#include "dataset_learnable.h"
#include "dispatch.h"
#include "dp_check.h"
#include "lr_grid.h"
#include "step.h"
#include "sweep_state.h"

/* The loss of the whole window in buffer `buf` at the current weights,
 * the mean over its valid items. */
static int window_loss(model *m, dataset *d, int buf, const split *sp, activations *acts,
                       float *dev_loss, double *out)
{
    float zero = 0, loss = 0;
    micro_batch_view all = dataset_full_batch(d, buf, sp->micro);
    int rc = bk_upload(m->b, dev_loss, &zero, sizeof zero);
    if (!rc)
        rc = model_forward(m, acts, &all, dev_loss);
    if (!rc)
        rc = bk_download(m->b, &loss, dev_loss, sizeof loss);
    /* the kernels add each item's unscaled loss: the mean over the window */
    *out = (double)loss / dataset_valid_count(d, buf, 0, d->effective_batch);
    return rc;
}

/* A curve has diverged once its loss is not finite or three times where it
 * started: the updates are blowing up, and stepping on would feed the
 * kernels infinities. */
static int diverged(const double *loss, int t)
{
    return !isfinite(loss[t]) || loss[t] > 3 * loss[0];
}

/* The stop flag, every rank's alike (a rank stepping alone would wait in
 * an all-reduce for the others). */
static int stop_now(const curve_run *o)
{
    int mine = o->stop && *o->stop;
    return o->comm ? dp_agree_max(o->comm, mine) > 0 : mine;
}

/* The seeds of a curve's data: the teacher or source, and the windows of
 * its first pass over the buffers. */
#define CURVE_SOURCE(o) ((o)->seed)
#define CURVE_WINDOWS(o) ((o)->seed ^ 0xc0ffee11ull)

/* Every pass over the buffers after the first draws new windows: a curve
 * longer than DATASET_MAX_BUFFERS steps would otherwise see the same few
 * windows again, and a small E (8 windows of 8 examples) learns them by
 * heart, its loss falling for that alone (steps to a target would then
 * favour the smallest E). Pass p draws from its own seed, the same for
 * every config, so that splits and orders still see the same examples. */
static int next_pass_data(step_runner *run, const split *sp, const curve_run *o, int t)
{
    if (t == 0 || run->next_buffer != 0)
        return BK_OK;
    uint64_t pass = (uint64_t)(t / run->d->count);
    int block = o->reverse ? sp->micro * sp->devices : 0;
    int rc = dataset_refill_learnable(run->d, CURVE_SOURCE(o),
                                      CURVE_WINDOWS(o) + pass * 0x2545f4914f6cdd1dull, block);
    /* new windows, new valid counts: the loss scales follow them */
    return rc ? rc : step_runner_resume(run);
}

static int train_steps(step_runner *run, const split *sp, const curve_run *o, double *loss)
{
    int steps = o->steps;
    model *m = run->m;
    activations acts = {0};
    float *dev_loss = NULL;
    int rc = bk_alloc(m->b, sizeof(float), (void **)&dev_loss);
    if (!rc)
        rc = activations_create(m, sp->global, BK_ALLOC_HELD, &acts);
    int t = 0;
    for (; t < steps && !rc; t++) {
        if (stop_now(o)) { /* the curve is not whole: not kept */
            *o->interrupted = 1;
            break;
        }
        rc = next_pass_data(run, sp, o, t);
        if (!rc && o->noise)
            o->noise[t] = o->noise_err[t] = NAN;
        if (!rc && o->noise && curve_noise_due(t, steps))
            rc = curve_noise_at(run, sp, o->noise_windows, o->seed, o->comm, &o->noise[t],
                                &o->noise_err[t]);
        if (!rc)
            rc = window_loss(m, run->d, run->next_buffer, sp, &acts, dev_loss, &loss[t]);
        if (!rc && diverged(loss, t)) {
            /* A diverged curve's readers know it by its empty last step
             * (final_loss): the step it diverged at keeps its loss, to show
             * how it left, and the steps after it are empty. At the last
             * step none follows, so that step is emptied itself: kept, the
             * curve read as trained on, and its final loss, past three
             * times its start, became the default target (every E met it
             * at step 0). */
            if (t == steps - 1)
                loss[t] = NAN;
            t++;
            break;
        }
        if (!rc)
            rc = step_run(run);
    }
    for (; t < steps; t++) {
        loss[t] = NAN; /* diverged: no steps on weights that have left the numbers */
        if (o->noise)
            o->noise[t] = o->noise_err[t] = NAN;
    }
    if (!rc)
        rc = m->b->ops->sync(m->b);
    if (acts.capacity)
        activations_destroy(m, &acts, BK_ALLOC_HELD);
    bk_free(m->b, dev_loss, sizeof(float));
    return rc;
}

int train_curve_run(model *m, const split *sp, const curve_run *o, double *loss)
{
    input_spec in;
    dataset d;
    step_runner run;
    model_input(&m->spec, &in);
    int block = o->reverse ? sp->micro * sp->devices : 0;
    int rc = model_reset(m);
    if (!rc)
        rc = dataset_create_learnable(m->b, &in, sp->global, DATASET_MAX_BUFFERS,
                                      CURVE_SOURCE(o), CURVE_WINDOWS(o), block, &d);
    if (rc)
        return rc;
    if (o->comm)
        dataset_set_shard(&d, o->comm->rank, o->comm->size);
    rc = step_runner_init_dp(&run, m, &d, sp, o->mode, o->red, o->comm, o->sync);
    if (!rc) {
        rc = train_steps(&run, sp, o, loss);
        step_runner_free(&run);
    }
    dataset_destroy(&d);
    int reset = model_reset(m);
    return rc ? rc : reset;
}

int train_curves_config(sweep *s, model *m, const config *c, const result_row *r,
                        int noise_windows)
{
    const split *sp = &c->sp;
    size_t n = (size_t)c->train_steps;
    double *loss = malloc(n * sizeof *loss);
    /* the noise along the forward curves, where the config measures one */
    double *noise = c->noise_windows > 0 ? malloc(2 * n * sizeof *noise) : NULL;
    if (!loss || (c->noise_windows > 0 && !noise)) {
        free(loss);
        free(noise);
        snprintf(m->b->error, sizeof m->b->error, "out of host memory for the loss curve");
        return BK_OOM;
    }
    double lrs[LR_GRID_MAX];
    lr_grid none = {0};
    int n_lr = lr_grid_at(s->lr_grid ? s->lr_grid : &none, s->lr_grid ? s->base_lr : m->opt.lr,
                          s->base_effective, sp->global, lrs);
    float lr_run = m->opt.lr; /* the timed pass's rate, given back after */
    /* The curves are a check, as the noise pass is: their data and
     * buffers are outside the cap, which holds the step alone (a planner's
     * answer under its cap runs with curves too) */
    size_t cap = m->b->mem_cap;
    m->b->mem_cap = 0;
    int rc = BK_OK, interrupted = 0;
    /* the correct reduction twice: the second in another order of its sums */
    int exact = reduction_info_of(c->reduction)->exact;
    /* As many windows at each point as the row's own pass ran (it stops
     * early when its share of the budget is spent: a slow or loaded
     * machine): one estimator along the curve, and step 0's figure the
     * row's. The windows run, not the row's noise_windows: those count the
     * usable ones alone (two small batches with valid items), and the
     * first that many of the windows run hold fewer usable where one was
     * not (micro-batch 1 with padding). */
    int windows = noise_windows > 0 ? noise_windows : c->noise_windows;
    for (int i = 0; i < n_lr && !rc && !interrupted; i++) {
        m->opt.lr = (float)lrs[i];
        for (int reverse = 0; reverse <= exact && !rc && !interrupted; reverse++) {
            /* the reverse order is the same weights to rounding: no second pass */
            double *nz = reverse ? NULL : noise;
            curve_run cr = {.steps = c->train_steps, .seed = c->seed, .reverse = reverse,
                            .mode = c->mode, .red = c->reduction, .comm = s->comm,
                            .sync = c->sync, .stop = s->stop, .interrupted = &interrupted,
                            .noise_windows = windows, .noise = nz,
                            .noise_err = nz ? nz + n : NULL};
            progress_phase(s->progress, reverse ? "loss curve, sums in reverse" : "loss curve");
            rc = train_curve_run(m, sp, &cr, loss);
            /* each curve into the file as it ends: a run that stops keeps it */
            if (!rc && !interrupted && s->curves &&
                curves_add(s->curves, r, reverse, m->opt.lr, loss, cr.noise, cr.noise_err,
                           m->b->error, sizeof m->b->error))
                rc = BK_ERROR;
        }
    }
    m->opt.lr = lr_run;
    m->b->mem_cap = cap;
    free(loss);
    free(noise);
    return rc;
}
