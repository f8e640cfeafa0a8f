#include "eta.h"

#include <math.h>
#include <stdlib.h>

#include "noise_pass.h"
#include "options.h"
#include "rounds.h"
#include "stats.h"

/* The timed loop's floor (measure.c's MIN_SAMPLES_HARD). */
#define ETA_MIN_TIMED 3

/* A pass's seconds: its own, or a step's share. */
static double pass_s(double step_ms, double pass_ms, int accum)
{
    return (isnan(pass_ms) ? step_ms / (accum > 0 ? accum : 1) : pass_ms) / 1e3;
}

/* The steps of one config's slice of a round (rounds.c's rule). */
static double slice_steps(const eta_costs *c, double step_s)
{
    if (c->steps > 0)
        return c->steps;
    double want = ceil(c->budget_s * ROUNDS_SLICE_SHARE / step_s);
    return want < 1 ? 1 : want > 1000 ? 1000 : want;
}

/* The seconds of a config that runs in full (not skipped), its gradient
 * check's host work `check_host_s` included; in *checks (may be NULL)
 * those of its checks before it is timed: the skip probe and the gradient
 * check. */
static double run_s_parts(const eta_costs *c, double step_ms, double pass_ms, int accum,
                          int samples, double rounds, double check_host_s, double *checks)
{
    double t = step_ms / 1e3, p = pass_s(step_ms, pass_ms, accum);
    /* timed alone the warm-up stops at half the budget; a comparison's
     * warm-up slice runs every step asked (rounds.c) */
    double warm = rounds > 0 ? c->warmup * t : fmin(c->warmup * t, c->budget_s / 2 + t);
    double timed, passes = 5 * p; /* the single passes after a config timed alone */
    if (rounds > 0) {
        double slice = slice_steps(c, t);
        timed = rounds * slice * t;
        /* and after each slice (rounds.c's slice_passes) */
        passes = rounds * rounds_passes_per_slice(slice, accum) * p;
    } else if (c->steps) {
        timed = c->steps * t;
    } else {
        double n = ceil(c->budget_s / t);
        if (samples > 0 && samples < n)
            n = samples; /* the noise target stopped it first */
        n = n < ETA_MIN_TIMED ? ETA_MIN_TIMED : n > c->max_samples ? c->max_samples : n;
        timed = (n + 1) * t; /* and the one in flight */
    }
    double trace = 0;
    if (c->trace_steps > 0) {
        double steps = fmin(c->trace_steps, fmax(1, floor(c->budget_s / t)));
        trace = steps * t;
    }
    /* the skip probe (3 passes), the gradient check (a window and the
     * full batch: about two steps, and the host's sums), the single passes
     * (above), the counting pass (2 steps, 1 over half the budget) */
    double count = (2 * t > c->budget_s ? 1 : 2) * t;
    double check = 3 * p + 2 * t + (check_host_s > 0 ? check_host_s : 0);
    if (checks)
        *checks = check;
    return check + warm + timed + passes + count + trace;
}

double eta_config_s(const eta_costs *c, double step_ms, double pass_ms, int accum, int samples,
                    double rounds)
{
    double p = pass_s(step_ms, pass_ms, accum);
    if (c->max_step_s > 0 && accum * p > c->max_step_s)
        return 3 * p; /* skipped after the probe passes */
    return run_s_parts(c, step_ms, pass_ms, accum, samples, rounds, 0, NULL);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int eta_samples(const eta *e, int i)
{
    if (e->items[i].samples > 0)
        return e->items[i].samples;
    int n = 0, *all = malloc((size_t)(e->n > 0 ? e->n : 1) * sizeof *all);
    if (!all)
        return 0;
    for (int j = 0; j < e->n; j++)
        if (e->items[j].samples > 0)
            all[n++] = e->items[j].samples;
    qsort(all, (size_t)n, sizeof *all, cmp_int);
    int median = n ? all[n / 2] : 0;
    free(all);
    return median;
}

/* Windows of config `it`'s noise pass (none with one pass a window). */
static int noise_windows(const eta *e, const eta_item *it)
{
    return it->accum > 1 ? e->c.noise_windows : 0;
}

/* Whether config `it`'s noise pass is told (its seconds, pass and windows). */
static int noise_told(const eta *e, const eta_item *it)
{
    return it->noise_s > 0 && it->pass_ms > 0 && it->noise_windows_run > 0 &&
           noise_windows(e, it);
}

/* The noise pass's host seconds per pass and per FLOP of an example,
 * learnt from the finished noise passes of the largest model that ran one
 * (by FLOPs an example): what they took beyond their passes. A small
 * model's host time is mostly the pass's fixed cost, not its parameters:
 * learnt from the tiny model, the rate put model M's noise pass at 99 s
 * where it took 41. */
static double noise_host_rate(const eta *e)
{
    double largest = 0;
    for (int j = 0; j < e->n; j++)
        if (noise_told(e, &e->items[j]))
            largest = fmax(largest, eta_example_flops(&e->items[j]));
    double host = 0, weight = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        int w = it->noise_windows_run;
        if (!noise_told(e, it) || eta_example_flops(it) < largest)
            continue;
        double passes = (double)w * it->accum;
        host += fmax(0, it->noise_s - passes * it->pass_ms / 1e3);
        weight += passes * eta_example_flops(it);
    }
    return weight > 0 ? host / weight : 0;
}

/* The windows a pass of window_s a window runs out of `asked`: where the
 * budget's share runs out first, those up to the one that reaches it, and
 * NOISE_WINDOWS_MIN at least (noise_pass.c's rule). */
static int noise_windows_run(const eta *e, int asked, double window_s)
{
    double share = e->c.budget_s * NOISE_BUDGET_SHARE;
    if (!(share > 0) || !(window_s > 0))
        return asked;
    double n = fmax(NOISE_WINDOWS_MIN, ceil(share / window_s));
    return n < asked ? (int)n : asked;
}

/* A second arm prepared in its first's comparison takes the first's
 * gradient check and noise scale (config_prepare): no host sums, no pass. */
static int takes_first_arm_checks(const eta_item *x)
{
    return x->arm > 1 && x->group;
}

/* The host's seconds in config x's gradient check at a noise pass's host
 * rate (noise_host_rate, learnt once): it downloads the gradient of the
 * window and of each piece of the full-batch reference (K + 1 of them,
 * shifted half a micro-batch from the window's: gradcheck.h; K where the
 * micro-batch is one example) and sums them over every parameter in
 * double, the noise pass's work per pass: on 2 cores model M's check at
 * K = 16 took 18 s where its two steps were 7. 0 before a noise pass has
 * run. */
static double check_host_s(const eta_item *x, double host_rate)
{
    int pieces = x->accum + (x->micro >= 2);
    return takes_first_arm_checks(x) ? 0 : (1 + pieces) * host_rate * eta_example_flops(x);
}

double eta_noise_s(const eta *e, int i, double pass_ms)
{
    const eta_item *x = &e->items[i];
    int w = noise_windows(e, x);
    if (!w || !(pass_ms > 0) || takes_first_arm_checks(x))
        return 0;
    double window_s = x->accum * (pass_ms / 1e3 + noise_host_rate(e) * eta_example_flops(x));
    return noise_windows_run(e, w, window_s) * window_s;
}

/* A config that ran in full (not skipped); its seconds less its noise
 * pass; their prediction from its own figures. */
static int ran_in_full(const eta_item *it)
{
    return it->step_ms > 0 && it->wall_s > 0;
}

static double actual_s(const eta_item *it)
{
    return it->wall_s - (it->noise_s > 0 ? it->noise_s : 0);
}

/* Config i's rounds: from `rounds` (all_group_rounds), or asked alone. */
static double rounds_of(const eta *e, const double *rounds, int i)
{
    return rounds ? rounds[i] : eta_group_rounds(e, i);
}

static double predicted_s(const eta *e, const double *rounds, double host_rate, int i)
{
    const eta_item *it = &e->items[i];
    return run_s_parts(&e->c, eta_known_step_ms(it), it->pass_ms, it->accum, it->samples,
                       rounds_of(e, rounds, i), check_host_s(it, host_rate), NULL);
}

/* The finished configs of config j's unit: a config timed alone is its
 * own; a comparison's members are one, for they share the time of their
 * rounds and passes equally (sweep_block.c), a share that is no member's
 * own: a slow member takes less than its prediction and a quick one many
 * times it. *actual and *predicted their sums, *members their count; 0
 * where j is no unit's first finished config (the unit was counted). */
static int unit_of(const eta *e, const double *rounds, double host_rate, int j,
                   double *actual, double *predicted, int *members)
{
    const eta_item *x = &e->items[j];
    *actual = *predicted = 0;
    *members = 0;
    if (!ran_in_full(x))
        return 0;
    for (int k = 0; x->group && k < j; k++)
        if (e->items[k].group == x->group && ran_in_full(&e->items[k]))
            return 0;
    for (int k = j; k < e->n; k++) {
        const eta_item *it = &e->items[k];
        if ((k == j || (x->group && it->group == x->group)) && ran_in_full(it)) {
            *actual += actual_s(it);
            *predicted += predicted_s(e, rounds, host_rate, k);
            ++*members;
        }
        if (!x->group)
            break;
    }
    return 1;
}

/* Finished configs' actual time, less their noise pass, against their
 * prediction from their own figures, unit by unit (unit_of), as a fixed
 * cost per config (*fixed) plus a scale on the prediction (the return):
 * what the model leaves out, learnt from the sweep itself. The fixed cost
 * (making the model, the gradient check's set-up, the probes beside every
 * config: 0.2-0.3 s a config on a 2-core VM) is the median of what the
 * units that took over FIXED_COST_RATIO times their prediction took over
 * it, a config: what the model leaves out is most of their time, not a
 * share of it. The scale is the rest of every finished unit's time over
 * its prediction, with a prior of 1 worth ETA_SCALE_PRIOR budgets of
 * predicted time. As one ratio, the tiny model's configs (1-4 ms
 * predicted, 0.2-0.3 s taken) made a scale of 70 for every config after
 * them: the cpu profile's 6 minutes came out at 2 to 5 hours from its
 * second config to its eighth. Config by config, a comparison's equal
 * shares made model S's quick members a fixed cost of 6 s a config and its
 * slow ones a scale of 0.45, and model M's last config read "57 s left"
 * with two minutes to go. A config that ran is costed as one that ran,
 * even where its single pass x K is over --max-step-s (the skip probe, a
 * pass timed earlier, let it through): costed as a skip, model M's 4x64
 * (a 187 ms pass, 64 a step) gave 82 s against 0.6 and doubled the
 * scale. */
#define FIXED_COST_RATIO 4
static double scale(const eta *e, const double *rounds, double host_rate, double *fixed)
{
    double *over = malloc((size_t)(e->n > 0 ? e->n : 1) * sizeof *over);
    double actual = 0, predicted = 0, a, p;
    size_t n = 0;
    int members;
    for (int j = 0; over && j < e->n; j++)
        if (unit_of(e, rounds, host_rate, j, &a, &p, &members) && a > FIXED_COST_RATIO * p)
            over[n++] = (a - p) / members;
    timing_stats st;
    *fixed = n && timing_stats_of(over, n, &st) == 0 ? fmax(0, st.median) : 0;
    free(over);
    double prior = ETA_SCALE_PRIOR * e->c.budget_s;
    for (int j = 0; j < e->n; j++)
        if (unit_of(e, rounds, host_rate, j, &a, &p, &members)) {
            actual += fmax(0, a - members * *fixed);
            predicted += p;
        }
    return predicted + prior > 0 && actual + prior > 0 ? (actual + prior) / (predicted + prior)
                                                       : 1;
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

/* The step config i is costed at, and *pass its pass (NAN: not
 * measured): the running one (`current`) at its own pass when that is
 * measured, K of them a step. NAN: nothing to go on. */
static double config_step(const eta *e, int i, int current, double current_pass_ms, double *pass)
{
    const eta_item *it = &e->items[i];
    double step = eta_step_ms(e, i);
    *pass = NAN;
    if (i == current && current_pass_ms > 0) {
        *pass = current_pass_ms;
        if (isnan(step) || !(it->step_ms > 0)) /* its own pass over a probe's */
            step = current_pass_ms * it->accum;
    }
    return step;
}

/* What the finished configs tell, learnt once for every config costed:
 * the scale, the seconds around a skip's probe passes, the spread, the
 * noise pass's host rate, and
 * each config's rounds (NULL: asked config by config). */
typedef struct learnt {
    double k, fixed, k_skip, spread, host_rate;
    double *rounds;
} learnt;

/* Every config's rounds, each comparison's worked out once: asked config
 * by config, an 8000-config sweep's estimate took 2.7 s, against 1.2 s so
 * (and 1.0 with rounds off). NULL when out of memory. */
static double group_rounds(const eta *e, int i, double stretch);
static double rounds_stretch(const eta *e);
static double *all_group_rounds(const eta *e)
{
    double *r = malloc((size_t)(e->n > 0 ? e->n : 1) * sizeof *r);
    double stretch = rounds_stretch(e);
    for (int i = 0; r && i < e->n; i++)
        r[i] = -1;
    for (int i = 0; r && i < e->n; i++) {
        if (r[i] >= 0)
            continue;
        double g = group_rounds(e, i, stretch);
        for (int j = i; j < e->n; j++)
            if (e->items[j].group == e->items[i].group)
                r[j] = g;
    }
    return r;
}

static void learn(const eta *e, learnt *l)
{
    *l = (learnt){.k_skip = skip_overhead(e), .spread = eta_spread(e),
                  .host_rate = noise_host_rate(e), .rounds = all_group_rounds(e)};
    l->k = scale(e, l->rounds, l->host_rate, &l->fixed);
}

/* The chance config i runs in full at a step of step_ms: the running one
 * whose probe pass is measured is judged by it, as the sweep judges it;
 * any other by the spread of this sweep's predictions (eta_run_chance). */
static double run_chance(const eta *e, const learnt *l, int i, int current,
                         double current_pass_ms, double step)
{
    if (e->items[i].checked)
        return e->items[i].checked > 0; /* its checks decided it */
    if (i == current && current_pass_ms > 0)
        return !skipped(&e->c, step);
    return eta_run_chance(&e->c, step, l->spread);
}

/* Configs of one split (model, micro-batch, K, FLOPs a step): the sweep
 * runs a split's modes, reductions and syncs one after another, and
 * noise_row.c keeps the last noise pass's figure for the next config of
 * the same split, which runs none of its own. Costed for every config, a
 * sweep of two modes counted each noise pass twice: model M's 8x32 sync
 * at its async's 76 s, where it took none. */
static int same_item_split(const eta_item *a, const eta_item *b)
{
    return a->model == b->model && a->micro == b->micro && a->accum == b->accum &&
           a->flops == b->flops;
}

/* 1 where none of the finished configs of config i's split just before
 * it ran in full (it runs a noise pass of its own), else 0. */
static double own_noise_after_finished(const eta *e, int i)
{
    for (int j = i - 1; j >= 0 && same_item_split(&e->items[j], &e->items[i]); j--)
        if (e->items[j].step_ms > 0)
            return 0;
    return 1;
}

/* The predicted seconds of config i, whole: its full cost where it runs,
 * its probe passes where it is skipped over --max-step-s, and where the
 * prediction is near enough the threshold for either, each by its
 * chance (*chance): a step predicted at the threshold costs seconds or
 * minutes on one probe pass, so at 9.8 s against --max-step-s 10 half of
 * each, not all of one. own_noise: the chance it runs a noise pass of its
 * own. NAN: nothing to go on. */
static double estimate_config_parts(const eta *e, const learnt *l, int i, int current,
                                    double current_pass_ms, double own_noise, double *chance,
                                    double *before)
{
    const eta_item *it = &e->items[i];
    double pass, step = config_step(e, i, current, current_pass_ms, &pass);
    *chance = 0;
    *before = NAN;
    if (isnan(step))
        return NAN;
    *chance = run_chance(e, l, i, current, current_pass_ms, step);
    double skip = 3 * pass_s(step, pass, it->accum) + l->k_skip; /* the probe passes */
    *before = skip;
    if (!(*chance > 0))
        return skip;
    double p = pass > 0 ? pass : it->pass_ms > 0 ? it->pass_ms : step / it->accum, checks;
    double noise = eta_noise_s(e, i, p) * own_noise;
    double full = l->k * run_s_parts(&e->c, step, pass, it->accum, eta_samples(e, i),
                                     rounds_of(e, l->rounds, i), check_host_s(it, l->host_rate),
                                     &checks) +
                  l->fixed + noise;
    /* set up, checked and its noise measured before a comparison's rounds */
    *before = *chance * (l->k * checks + l->fixed + noise) + (1 - *chance) * skip;
    return *chance * full + (1 - *chance) * skip;
}

static double estimate_config_total(const eta *e, const learnt *l, int i, int current,
                                    double current_pass_ms, double own_noise, double *chance)
{
    double before;
    return estimate_config_parts(e, l, i, current, current_pass_ms, own_noise, chance, &before);
}

/* The rounds group x's members' budgets hold (before ROUNDS_MIN and
 * ROUNDS_MAX), and in *members how many run in them; 0 with fewer than
 * two. */
static double budget_rounds(const eta *e, int group, int *members)
{
    double round_s = 0;
    *members = 0;
    for (int j = 0; j < e->n; j++) {
        double step = e->items[j].group == group ? eta_step_ms(e, j) : NAN;
        if (!(step > 0) || skipped(&e->c, step))
            continue; /* not costed yet, or out before the rounds */
        ++*members;
        round_s += slice_steps(&e->c, step / 1e3) * step / 1e3;
    }
    return *members < 2 ? 0 : *members * e->c.budget_s / round_s;
}

/* The rounds the finished comparisons ran over those their budgets held
 * (ROUNDS_MIN at least), their mean, 1 before any: rounds.c stops early
 * where every pair is decided, and goes on up to ROUNDS_BUDGET_STRETCH
 * times the budget where disturbed rounds leave too few clean ones (on a
 * loaded 2-core VM the tiny model's comparison ran 40 rounds where its
 * budgets held 21, S's 20 for 7). Kept within [1/3, 3]. */
static double rounds_stretch(const eta *e)
{
    double sum = 0;
    int n = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *x = &e->items[j];
        int first = x->group && x->rounds_run > 0, members;
        for (int k = 0; first && k < j; k++)
            first = !(e->items[k].group == x->group && e->items[k].rounds_run > 0);
        double held = first ? budget_rounds(e, x->group, &members) : 0;
        if (held > 0) {
            sum += fmin(3, fmax(1.0 / 3, x->rounds_run / fmax(ROUNDS_MIN, held)));
            n++;
        }
    }
    return n ? sum / n : 1;
}

/* eta_group_rounds at a stretch learnt once (rounds_stretch). */
static double group_rounds(const eta *e, int i, double stretch)
{
    const eta_item *x = &e->items[i];
    if (!e->c.rounds || !x->group)
        return 0;
    for (int j = 0; j < e->n; j++)
        if (e->items[j].group == x->group && e->items[j].rounds_run > 0)
            return e->items[j].rounds_run; /* it ran */
    int members;
    double held = budget_rounds(e, x->group, &members);
    if (members < 2)
        return 0;
    if (e->c.rounds > 0)
        return e->c.rounds;
    double r = ceil(held * stretch);
    return r < ROUNDS_MIN ? ROUNDS_MIN : r > ROUNDS_MAX ? ROUNDS_MAX : r;
}

double eta_group_rounds(const eta *e, int i)
{
    return group_rounds(e, i, rounds_stretch(e));
}

double eta_left_s(const eta *e, int current, double current_s, double current_pass_ms)
{
    learnt l;
    learn(e, &l);
    double left = 0, own = 1, chance = 0;
    for (int i = current; i < e->n && !isnan(left); i++) {
        /* its own noise pass: where none of its split before it ran */
        if (i == current)
            own = own_noise_after_finished(e, i);
        else
            own = same_item_split(&e->items[i - 1], &e->items[i]) ? own * (1 - chance) : 1;
        double s = estimate_config_total(e, &l, i, current, current_pass_ms, own, &chance);
        if (isnan(s))
            left = NAN; /* nothing to go on (fmax below would drop a NAN) */
        else
            left += i == current ? fmax(0, s - current_s) : s;
    }
    free(l.rounds);
    return left;
}

double eta_group_left_s(const eta *e, int lo, int hi, int checking, double checking_s,
                        double rounds_s)
{
    learnt l;
    learn(e, &l);
    double checks_left = 0, after = 0, own = 1, chance = 0, before;
    for (int i = lo; i <= hi && i < e->n && !isnan(after); i++) {
        own = i == lo || !same_item_split(&e->items[i - 1], &e->items[i])
                  ? own_noise_after_finished(e, i)
                  : own * (1 - chance);
        double s = estimate_config_parts(e, &l, i, -1, NAN, own, &chance, &before);
        after += s - before; /* NAN: nothing to go on */
        if (!isnan(rounds_s) || i < checking)
            continue; /* its checks are over */
        checks_left += i == checking ? fmax(0, before - checking_s) : before;
    }
    free(l.rounds);
    if (isnan(after))
        return NAN;
    return isnan(rounds_s) ? checks_left + after : fmax(0, after - rounds_s);
}

int eta_any_finished(const eta *e)
{
    for (int j = 0; j < e->n; j++)
        if (ran_in_full(&e->items[j]))
            return 1;
    return 0;
}

void eta_record_probe(eta *e, int i, double pass_ms)
{
    if (i < 0 || i >= e->n || !(pass_ms > 0) || e->items[i].step_ms > 0)
        return;
    e->items[i].pass_ms = pass_ms;
}

void eta_record(eta *e, int i, double step_ms, double pass_ms, double wall_s)
{
    if (i < 0 || i >= e->n)
        return;
    /* what the estimate predicted for it, from the others, before it ran */
    e->items[i].step_ms = e->items[i].pass_ms = NAN;
    e->items[i].predicted_ms = eta_step_ms(e, i);
    e->items[i].step_ms = step_ms > 0 ? step_ms : NAN;
    e->items[i].pass_ms = pass_ms;
    e->items[i].wall_s = wall_s;
}

void eta_record_checked(eta *e, int i, int timed)
{
    if (i >= 0 && i < e->n)
        e->items[i].checked = timed ? 1 : -1;
}

void eta_record_rounds(eta *e, int i, int rounds)
{
    if (i >= 0 && i < e->n)
        e->items[i].rounds_run = rounds > 0 ? rounds : 0;
}

void eta_record_parts(eta *e, int i, double noise_s, int windows, int samples)
{
    if (i < 0 || i >= e->n)
        return;
    e->items[i].noise_s = noise_s;
    e->items[i].noise_windows_run = windows > 0 ? windows : 0;
    e->items[i].samples = samples > 0 ? samples : 0;
}
