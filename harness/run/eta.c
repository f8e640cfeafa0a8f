#include "eta.h"

#include <math.h>

/* The timed loop's floor (measure.c's MIN_SAMPLES_HARD). */
#define ETA_MIN_TIMED 3

double eta_config_s(const eta_costs *c, double step_ms, double pass_ms, int accum)
{
    double t = step_ms / 1e3, p = (isnan(pass_ms) ? step_ms / (accum > 0 ? accum : 1) : pass_ms) / 1e3;
    double warm = fmin(c->warmup * t, c->budget_s / 2 + t);
    double timed;
    if (c->steps) {
        timed = c->steps * t;
    } else {
        double n = ceil(c->budget_s / t);
        n = n < ETA_MIN_TIMED ? ETA_MIN_TIMED : n > c->max_samples ? c->max_samples : n;
        timed = (n + 1) * t; /* and the one in flight */
    }
    double trace = 0;
    if (c->max_step_s > 0 && accum * p > c->max_step_s)
        return 3 * p; /* skipped after the probe passes */
    if (c->trace_steps > 0) {
        double steps = fmin(c->trace_steps, fmax(1, floor(c->budget_s / t)));
        trace = steps * t;
    }
    /* the skip probe (3 passes), the gradient check (a window and the
     * full batch: about two steps), the single passes (5) */
    return 3 * p + 2 * t + warm + timed + 5 * p + trace;
}

/* What a finished config tells of its step: its timed step, or, for one
 * skipped after its probe passes (over --max-step-s), K of those passes. */
static double known_step(const eta_item *it)
{
    return it->step_ms > 0 ? it->step_ms : it->pass_ms > 0 ? it->pass_ms * it->accum : NAN;
}

static int measured(const eta_item *it)
{
    return known_step(it) > 0;
}

/* Seconds per FLOP of a measured config. */
static double spf(const eta_item *it)
{
    return known_step(it) / it->flops;
}

/* The measured config of model `model`, micro-batch `micro` (mode `mode`
 * first, any mode else), or -1. */
static int find(const eta *e, int model, int micro, int mode)
{
    int any = -1;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        if (!measured(it) || it->model != model || it->micro != micro)
            continue;
        if (it->mode == mode)
            return j;
        any = any < 0 ? j : any;
    }
    return any;
}

/* How much slower per FLOP model a runs than model b at micro-batch
 * `micro`, from the nearest micro-batch both were measured at; 1 when
 * there is none. A ratio measured far from `micro` says less about it (a
 * wide model's fixed cost per pass dominates at micro-batch 1 and fades at
 * 256), so it is shrunk toward 1, the FLOPs' own ratio, by the distance:
 * a power 1 / (1 + |log2 distance| / 4). */
static double model_ratio(const eta *e, int a, int b, int mode, int micro)
{
    double best_d = INFINITY, ratio = 1;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        if (!measured(it) || it->model != a)
            continue;
        int k = find(e, b, it->micro, mode);
        double d = fabs(log2((double)it->micro / micro));
        if (k >= 0 && d < best_d) {
            best_d = d;
            ratio = spf(it) / spf(&e->items[k]);
        }
    }
    return isinf(best_d) ? 1 : pow(ratio, 1 / (1 + best_d / 4));
}

double eta_step_ms(const eta *e, int i)
{
    const eta_item *x = &e->items[i];
    if (measured(x))
        return known_step(x);
    int j = find(e, x->model, x->micro, x->mode);
    if (j >= 0)
        return spf(&e->items[j]) * x->flops;
    /* the same micro-batch in another model, scaled by the models' ratio */
    for (int k = 0; k < e->n; k++) {
        const eta_item *it = &e->items[k];
        if (measured(it) && it->micro == x->micro && it->model != x->model)
            return spf(it) * model_ratio(e, x->model, it->model, x->mode, x->micro) * x->flops;
    }
    /* the nearest micro-batch measured, this model's first */
    int best = -1;
    double best_d = INFINITY;
    for (int k = 0; k < e->n; k++) {
        const eta_item *it = &e->items[k];
        if (!measured(it))
            continue;
        double d = fabs(log((double)it->micro / x->micro)) + (it->model != x->model ? 100 : 0);
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    return best >= 0 ? spf(&e->items[best]) * x->flops : NAN;
}

/* Finished configs' actual time over their prediction from their own
 * figures: what the model leaves out (the probes, the allocation, the
 * trace's own cost), learnt from the sweep itself. */
static double scale(const eta *e)
{
    double actual = 0, predicted = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        if (it->step_ms > 0 && it->wall_s > 0) { /* configs that ran in full */
            actual += it->wall_s;
            predicted += eta_config_s(&e->c, known_step(it), it->pass_ms, it->accum);
        }
    }
    return predicted > 0 ? actual / predicted : 1;
}

/* A config skipped over --max-step-s: its probe passes, and what the
 * skipped configs so far spent around them (setting the config up). */
static int skipped(const eta_costs *c, double step_ms)
{
    return c->max_step_s > 0 && step_ms / 1e3 > c->max_step_s;
}

static double skip_overhead(const eta *e)
{
    double sum = 0;
    int n = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        if (!(it->step_ms > 0) && it->pass_ms > 0 && it->wall_s > 0) {
            sum += fmax(0, it->wall_s - 3 * it->pass_ms / 1e3);
            n++;
        }
    }
    return n ? sum / n : 0;
}

double eta_left_s(const eta *e, int current, double current_s, double current_pass_ms)
{
    double k = scale(e), k_skip = skip_overhead(e), left = 0;
    for (int i = current; i < e->n; i++) {
        const eta_item *it = &e->items[i];
        double step = eta_step_ms(e, i), pass = NAN;
        if (i == current && current_pass_ms > 0) {
            /* its own pass, measured: K of them a step */
            pass = current_pass_ms;
            if (isnan(step) || !measured(it))
                step = current_pass_ms * it->accum;
        }
        if (isnan(step))
            return NAN;
        double s = skipped(&e->c, step) ? eta_config_s(&e->c, step, pass, it->accum) + k_skip
                                         : k * eta_config_s(&e->c, step, pass, it->accum);
        left += i == current ? fmax(0, s - current_s) : s;
    }
    return left;
}

void eta_record(eta *e, int i, double step_ms, double pass_ms, double wall_s)
{
    if (i < 0 || i >= e->n)
        return;
    e->items[i].step_ms = step_ms > 0 ? step_ms : NAN;
    e->items[i].pass_ms = pass_ms;
    e->items[i].wall_s = wall_s;
}
