/* A config's step time from the configs measured so far (eta.h's
 * eta_step_ms): the same model and micro-batch, a line through the model's
 * micro-batches, another model scaled by the two models' ratio, or the
 * nearest micro-batch measured. */
#include "eta.h"

#include <math.h>

#include "result_row.h"

double eta_example_flops(const eta_item *it)
{
    return it->flops / ((double)it->micro * it->accum);
}

double eta_known_step_ms(const eta_item *it)
{
    return it->step_ms > 0 ? it->step_ms : it->pass_ms > 0 ? it->pass_ms * it->accum : NAN;
}

static int measured(const eta_item *it)
{
    return eta_known_step_ms(it) > 0;
}

/* Seconds per FLOP of a measured config. */
static double spf(const eta_item *it)
{
    return eta_known_step_ms(it) / it->flops;
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
static double model_ratio_at(const eta *e, int a, int b, int mode, int micro, double *dist)
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
    *dist = best_d; /* octaves */
    return isinf(best_d) ? 1 : pow(ratio, 1 / (1 + best_d / 4));
}

static double model_ratio(const eta *e, int a, int b, int mode, int micro)
{
    double dist;
    return model_ratio_at(e, a, b, mode, micro, &dist);
}

/* A micro-batch's time in model `model`, as a line through the measured
 * ones: a fixed cost per pass (launches, the thread pool's wake-ups)
 * plus a cost per example, fitted by least
 * squares, neither below 0. Step times per FLOP fall with the micro-batch
 * (the fixed cost spread thinner), so the nearest one measured overstates
 * a larger micro-batch's step and understates a smaller one's: on a
 * pow2 sweep of S from micro-batch 1 it took 4x64's rate for 8x32 up to
 * 256x1, and the time left came out 4 times too long. NAN: fewer than
 * two micro-batches measured. A config timed twice (an A/A check) is one
 * point, from its first arm: its second is the same config, and would
 * pull the line toward that micro-batch as two.
 * The optimizer's update, once a step whatever the split, comes in as a
 * share of each pass, update / K = update x micro / E: at one effective
 * batch that is linear in the micro-batch too, so the line gives every
 * split of the batch its one update back exactly, and a term of its own
 * (K x pass + update) would predict the same. Only across effective
 * batches would it be misplaced; model M's update, measured at 0.14-0.35 s
 * on 2 cores, 2-18% of its step, is within the noise of the steps
 * there (docs/time-left.md). */
static double pass_line_ms(const eta *e, int model, int mode, int micro)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    int first = -1, distinct = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        if (!measured(it) || it->model != model || it->mode != mode || RESULT_SECOND_ARM(it))
            continue;
        double x = it->micro, y = eta_known_step_ms(it) / it->accum;
        n++, sx += x, sy += y, sxx += x * x, sxy += x * y;
        if (first < 0)
            first = it->micro;
        distinct |= it->micro != first;
    }
    double det = n * sxx - sx * sx;
    if (!distinct || !(det > 0))
        return NAN;
    double b = fmax(0, (n * sxy - sx * sy) / det);
    double a = fmax(0, (sy - b * sx) / n);
    return a + b * micro;
}

/* How far, in octaves, micro-batch `micro` lies beyond those model
 * `model` was measured at in mode `mode` (0 within them). */
static double line_reach(const eta *e, int model, int mode, int micro)
{
    int lo = 0, hi = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        if (!measured(it) || it->model != model || it->mode != mode)
            continue;
        lo = lo && lo < it->micro ? lo : it->micro;
        hi = hi > it->micro ? hi : it->micro;
    }
    return micro < lo ? log2((double)lo / micro) : micro > hi ? log2((double)micro / hi) : 0;
}

/* Config x's step from another model measured at its micro-batch, scaled
 * by the models' ratio, and in *dist how far from x's micro-batch that
 * ratio was measured (octaves; infinite where the two share none). NAN:
 * no other model measured there. */
static double other_model_ms(const eta *e, const eta_item *x, double *dist)
{
    *dist = INFINITY;
    for (int k = 0; k < e->n; k++) {
        const eta_item *it = &e->items[k];
        if (measured(it) && it->micro == x->micro && it->model != x->model)
            return spf(it) * model_ratio_at(e, x->model, it->model, x->mode, x->micro, dist) *
                   x->flops;
    }
    return NAN;
}

double eta_step_ms(const eta *e, int i)
{
    const eta_item *x = &e->items[i];
    if (measured(x))
        return eta_known_step_ms(x);
    int j = find(e, x->model, x->micro, x->mode);
    if (j >= 0)
        return spf(&e->items[j]) * x->flops;
    /* its model's line; beyond the micro-batches the line was fitted on,
     * another model measured at this one where their ratio was measured
     * no further off: a line through micro-batches where a pass's fixed
     * cost dominates has its cost per example lost in the noise (model
     * M's passes 155-208 ms from 1 to 16 examples), and carried 16 times
     * past them it gave M's 256x1 165 ms a step for 1199 */
    double line = pass_line_ms(e, x->model, x->mode, x->micro), dist;
    double other = other_model_ms(e, x, &dist);
    if (line > 0 && !(other > 0 && dist <= line_reach(e, x->model, x->mode, x->micro)))
        return line * x->accum;
    if (other > 0)
        return other;
    /* another model's line at this micro-batch, by the two models' FLOPs
     * an example and their ratio */
    for (int k = 0; k < e->n; k++) {
        const eta_item *it = &e->items[k];
        double line = measured(it) && it->model != x->model
                          ? pass_line_ms(e, it->model, x->mode, x->micro)
                          : NAN;
        if (line > 0)
            return line * x->accum * eta_example_flops(x) / eta_example_flops(it) *
                   model_ratio(e, x->model, it->model, x->mode, x->micro);
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
