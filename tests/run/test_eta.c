/* The costed time left (eta.h): a config's seconds from its step time and
 * budget, and configs not yet run costed from those measured. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "eta.h"
#include "eta_items.h"
#include "options.h"

static const eta_costs COSTS = {.budget_s = 2, .warmup = 2, .min_samples = 5,
                                .max_samples = 1000, .trace_steps = 0, .max_step_s = 10};

/* The scale learnt from finished configs that took `actual` seconds
 * against `predicted` (none of them 4 times its prediction, which would
 * tell a fixed cost):
 * their ratio, with the prior of 1 worth ETA_SCALE_PRIOR budgets. */
static double learnt_scale(const eta_costs *c, double actual, double predicted)
{
    double prior = ETA_SCALE_PRIOR * c->budget_s;
    return (actual + prior) / (predicted + prior);
}

static void test_config_s(void)
{
    /* a 100 ms step of K = 4 (25 ms passes): 3 + 5 passes, 2 steps of
     * gradient check, 2 of warm-up, 20 + 1 timed in the 2 s budget, 2
     * counted */
    double s = eta_config_s(&COSTS, 100, 25, 4, 0, 0);
    CHECK_NEAR(s, 8 * 0.025 + 2 * 0.1 + 2 * 0.1 + 21 * 0.1 + 0.2, 1e-9);
    /* a 1 s step: the budget allows 2, the floor is 3 timed; 2 counted */
    CHECK_NEAR(eta_config_s(&COSTS, 1000, 250, 4, 0, 0), 8 * 0.25 + 2 + 2 + 4 + 2, 1e-9);
    /* a 1.5 s step: the warm-up cut at half the budget and the step in
     * flight; one counted (two would pass the budget) */
    CHECK_NEAR(eta_config_s(&COSTS, 1500, 375, 4, 0, 0), 8 * 0.375 + 3 + 2.5 + 4 * 1.5 + 1.5, 1e-9);
    /* a step over --max-step-s is skipped after its probe passes */
    CHECK_NEAR(eta_config_s(&COSTS, 64000, 1000, 64, 0, 0), 3.0, 1e-9);
    eta_costs fixed = COSTS;
    fixed.steps = 10;
    CHECK_NEAR(eta_config_s(&fixed, 100, 25, 4, 0, 0), 8 * 0.025 + 0.2 + 0.2 + 1.0 + 0.2, 1e-9);
    /* the noise target stopped the loop after 5 steps: 5 + 1 timed, not 21 */
    CHECK_NEAR(eta_config_s(&COSTS, 100, 25, 4, 5, 0), 8 * 0.025 + 0.2 + 0.2 + 6 * 0.1 + 0.2, 1e-9);
    /* never more than the budget allows, nor under the floor */
    CHECK_NEAR(eta_config_s(&COSTS, 100, 25, 4, 500, 0), s, 1e-9);
    CHECK_NEAR(eta_config_s(&COSTS, 100, 25, 4, 1, 0), 8 * 0.025 + 0.2 + 0.2 + 4 * 0.1 + 0.2, 1e-9);
}

/* A synthetic sweep whose configs cost what the model says, with a noise
 * pass of windows of K passes, each pass with host work per FLOP of an
 * example, and a machine 1.3x slower than the plain arithmetic: once two
 * configs ran, the time left of the other two is their true time at the
 * scale learnt (1.3 toward the prior of 1, eta.c's scale). The
 * noise pass keeps to a fifth of the budget (4 windows at least, up to
 * the 32 asked), once a split: costed as 32 windows whatever the budget,
 * as before, the two K = 8 configs came out 3.3 times too long; folded
 * into one scale of the budget's time, as before that, 14% short; with a
 * noise pass of its own for the second mode of the split, 10-50% long. */
#define HOST_PER_FLOP 2e-12 /* host seconds per pass per FLOP of an example */

/* The windows the pass runs, and its seconds: the rule of noise_pass.c. */
static int true_windows(const eta_costs *c, double window_s)
{
    int n = (int)ceil(c->budget_s * 0.2 / window_s);
    n = n < 4 ? 4 : n;
    return n < c->noise_windows ? n : c->noise_windows;
}

static double true_noise(const eta_costs *c, const eta_item *it, int *windows)
{
    double pass = it->step_ms / it->accum, example = it->flops / (it->micro * it->accum);
    double window_s = it->accum * (pass / 1e3 + HOST_PER_FLOP * example);
    *windows = true_windows(c, window_s);
    return *windows * window_s;
}

/* The gradient check's host work: the window's download and the K + 1
 * pieces' of the full-batch reference (shifted half a micro-batch; K at
 * micro-batch 1), each summed over every parameter (the noise pass's host
 * work per pass). */
static double true_check_host(const eta_item *it)
{
    int pieces = it->accum + (it->micro >= 2);
    return (1 + pieces) * HOST_PER_FLOP * it->flops / (it->micro * it->accum);
}

/* A config's time less its noise pass, before the 1.3 the model leaves out. */
static double true_run(const eta_costs *c, const eta_item *it, int samples)
{
    return eta_config_s(c, it->step_ms, it->step_ms / it->accum, it->accum, samples, 0) +
           true_check_host(it);
}

/* own_noise 0: the config of the same split just before it ran the noise
 * pass, whose figure it reuses (noise_row.c) */
static double true_wall(const eta_costs *c, const eta_item *it, int samples, int own_noise)
{
    int windows;
    return 1.3 * true_run(c, it, samples) + (own_noise ? true_noise(c, it, &windows) : 0);
}

static void run_sweep(double budget_s, int want_windows)
{
    eta_costs c = COSTS;
    c.noise_windows = 32;
    c.budget_s = budget_s;
    /* one model (64 examples a step, 1 GFLOP each, a pass's time in
     * proportion to its examples: every split's step 200 ms): 32x2 and
     * 16x4 ran; 8x8 in two modes are left */
    eta_item truth[] = {
        {.flops = 64e9, .micro = 32, .accum = 2, .mode = 0, .step_ms = 200},
        {.flops = 64e9, .micro = 16, .accum = 4, .mode = 0, .step_ms = 200},
        {.flops = 64e9, .micro = 8, .accum = 8, .mode = 0, .step_ms = 200},
        {.flops = 64e9, .micro = 8, .accum = 8, .mode = 1, .step_ms = 200},
    };
    const int samples = 5; /* every loop met the noise target at 5 */
    eta_item items[4];
    for (int i = 0; i < 4; i++) {
        items[i] = truth[i];
        items[i].step_ms = items[i].pass_ms = items[i].wall_s = items[i].noise_s = NAN;
        items[i].samples = items[i].noise_windows_run = 0;
    }
    eta e = {.items = items, .n = 4, .c = c};
    for (int i = 0; i < 2; i++) {
        const eta_item *t = &truth[i];
        int windows;
        double noise = true_noise(&c, t, &windows);
        eta_record(&e, i, t->step_ms, t->step_ms / t->accum, true_wall(&c, t, samples, 1));
        eta_record_parts(&e, i, noise, windows, samples);
    }
    CHECK(eta_samples(&e, 2) == samples);
    /* 8x8 sync reuses 8x8 async's noise pass */
    double ran = 0, left = true_wall(&c, &truth[2], samples, 1) - true_wall(&c, &truth[2], samples, 0);
    for (int i = 0; i < 2; i++)
        ran += true_run(&c, &truth[i], samples);
    for (int i = 2; i < 4; i++)
        left += learnt_scale(&c, 1.3 * ran, ran) * true_run(&c, &truth[i], samples);
    CHECK_NEAR(eta_left_s(&e, 2, 0, NAN), left, 1e-9 * left);
    /* the noise pass alone: windows x 8 x (25 ms + 2 ms of host work) */
    int windows;
    CHECK_NEAR(eta_noise_s(&e, 2, 25), true_noise(&c, &truth[2], &windows), 1e-9);
    CHECK(windows == want_windows);
    CHECK_NEAR(eta_noise_s(&e, 2, 25), want_windows * 8 * (0.025 + 0.002), 1e-9);
    /* a second arm in its first's comparison takes the first's checks:
     * no noise pass of its own; timed alone it runs its own */
    e.items[2].arm = 2;
    e.items[2].group = 1;
    CHECK(eta_noise_s(&e, 2, 25) == 0);
    e.items[2].group = 0;
    CHECK(eta_noise_s(&e, 2, 25) > 0);
    /* one pass a window: no noise pass */
    e.items[0].accum = 1;
    CHECK(eta_noise_s(&e, 0, 75) == 0);
}

static void test_noise_pass_and_samples(void)
{
    run_sweep(2, 4);    /* the share (0.4 s) is under 4 windows of 0.216 s */
    run_sweep(20, 19);  /* 4 s: the window that reaches it is the 19th */
    run_sweep(100, 32); /* 20 s: all 32 asked */
}

static void test_estimates(void)
{
    /* models 0 (1 GFLOP) and 1 (4 GFLOP) at micro-batches 8 and 16 */
    eta_item items[] = {
        {.flops = 1e9, .micro = 8, .accum = 8, .model = 0},
        {.flops = 1e9, .micro = 16, .accum = 4, .model = 0},
        {.flops = 4e9, .micro = 8, .accum = 8, .model = 1},
        {.flops = 4e9, .micro = 16, .accum = 4, .model = 1},
    };
    not_run(items, 4);
    eta e = {.items = items, .n = 4, .c = COSTS};
    CHECK(isnan(eta_step_ms(&e, 0)) && isnan(eta_left_s(&e, 0, 0, NAN)));
    eta_record(&e, 0, 200, 25, 1.0);
    eta_record(&e, 1, 100, 25, 1.0);
    CHECK(eta_step_ms(&e, 0) == 200); /* measured */
    /* model 1 not measured: model 0's rate at its micro-batch, by FLOPs */
    CHECK_NEAR(eta_step_ms(&e, 2), 800, 1e-9);
    CHECK_NEAR(eta_step_ms(&e, 3), 400, 1e-9);
    /* model 1 at 8 measured at half model 0's time per FLOP: at 16, one
     * octave away, the ratio shrinks toward 1 by the power 1 / 1.25 */
    eta_record(&e, 2, 400, 50, 2.0);
    double at16 = 400 * pow(0.5, 0.8);
    CHECK_NEAR(eta_step_ms(&e, 3), at16, 1e-9);
    /* the time left is the prediction scaled by the finished configs'
     * actual over predicted time, toward the prior of 1 */
    double k = learnt_scale(&COSTS, 1.0 + 1.0 + 2.0,
                            eta_config_s(&COSTS, 200, 25, 8, 0, 0) +
                                eta_config_s(&COSTS, 100, 25, 4, 0, 0) +
                                eta_config_s(&COSTS, 400, 50, 8, 0, 0));
    CHECK_NEAR(eta_left_s(&e, 3, 0, NAN), k * eta_config_s(&COSTS, at16, NAN, 4, 0, 0), 1e-9);
    /* the running config's own pass: K passes a step; what it ran is off */
    CHECK_NEAR(eta_left_s(&e, 3, 0.5, 60),
               fmax(0, k * eta_config_s(&COSTS, 240, 60, 4, 0, 0) - 0.5), 1e-9);
    CHECK(eta_left_s(&e, 3, 1e6, 60) == 0);
    /* a config skipped after its probe passes tells its step as K passes */
    eta_record(&e, 3, NAN, 5000, 20.0);
    CHECK_NEAR(eta_step_ms(&e, 3), 20000, 1e-9);
}

/* A config that ran although its single pass x K is over --max-step-s
 * (the skip probe, timed earlier, let it through) tells the scale as a
 * config that ran: costed as a skip (3 passes, 0.5 s against its 24 s),
 * it made the scale 50 times what it was. */
static void test_ran_over_threshold(void)
{
    eta_item items[] = {
        {.flops = 64e9, .micro = 1, .accum = 64},
        {.flops = 16e9, .micro = 1, .accum = 64, .model = 1},
    };
    not_run(items, 2);
    eta e = {.items = items, .n = 2, .c = COSTS};
    eta_costs no_limit = COSTS;
    no_limit.max_step_s = 0;
    /* a 9.6 s step whose single pass, 160 ms, x 64 is 10.24 s */
    double ran = eta_config_s(&no_limit, 9600, 160, 64, 0, 0);
    eta_record(&e, 0, 9600, 160, 1.2 * ran);
    /* model 1, a quarter of the FLOPs: 2.4 s a step, far under the
     * threshold, at the scale of 1.2 (toward the prior of 1) */
    double left = learnt_scale(&COSTS, 1.2 * ran, ran) * eta_config_s(&COSTS, 2400, NAN, 64, 0, 0);
    CHECK_NEAR(eta_left_s(&e, 1, 0, NAN), left, 1e-9 * left);
}

/* The chance a step predicted at `predicted` ms is under a threshold of
 * `threshold` ms, the distribution eta.h states: the true step
 * log-normal about the prediction of sigma `spread`, cut at 3 sigmas. */
static double chance_under(double predicted, double threshold, double spread)
{
    double z = log(threshold / predicted) / spread, tail = 0.5 * erfc(3 / sqrt(2.0));
    return z >= 3 ? 1 : z <= -3 ? 0 : (0.5 * erfc(-z / sqrt(2.0)) - tail) / (1 - 2 * tail);
}

/* The seconds of config `i` alone: what is left from it, less what is
 * left after it. */
static double cost_of(const eta *e, int i)
{
    return eta_left_s(e, i, 0, NAN) - (i + 1 < e->n ? eta_left_s(e, i + 1, 0, NAN) : 0);
}

/* A config predicted at a step near --max-step-s costs its full time by
 * the chance it runs and its probe passes by the chance it is skipped:
 * at 9.9 s against 10, about half of each, not all of one (a skip of a
 * second or a run of a minute, decided by one probe pass). Far from the
 * threshold, as before: 4.95 s in full, 19.8 s its probe passes. */
static void test_near_threshold(void)
{
    eta_item items[] = {
        {.flops = 64e9, .micro = 4, .accum = 16},
        {.flops = 64e9, .micro = 4, .accum = 16, .mode = 1},   /* at 9.9 s */
        {.flops = 32e9, .micro = 4, .accum = 16, .model = 1},  /* at 4.95 s */
        {.flops = 128e9, .micro = 4, .accum = 16, .model = 2}, /* at 19.8 s */
    };
    not_run(items, 4);
    eta e = {.items = items, .n = 4, .c = COSTS};
    /* ran as the model says: a scale of 1 */
    eta_record(&e, 0, 9900, NAN, eta_config_s(&COSTS, 9900, NAN, 16, 0, 0));
    double full = eta_config_s(&COSTS, 9900, NAN, 16, 0, 0), skip = 3 * 9.9 / 16;
    /* nothing predicted yet has run: the spread's floor, 10% */
    CHECK(eta_spread(&e) == ETA_SPREAD_FLOOR && ETA_SPREAD_FLOOR == 0.10);
    double p = chance_under(9900, 10000, 0.10);
    CHECK(p > 0.45 && p < 0.6);
    double at = cost_of(&e, 1);
    CHECK_NEAR(at, p * full + (1 - p) * skip, 1e-9 * full);
    CHECK(at > skip + 0.3 * (full - skip) && at < skip + 0.7 * (full - skip));
    /* over 3 sigmas from it: unchanged */
    CHECK_NEAR(cost_of(&e, 2), eta_config_s(&COSTS, 4950, NAN, 16, 0, 0), 1e-12);
    CHECK_NEAR(cost_of(&e, 3), 3 * 19.8 / 16, 1e-12);
    /* the running config's own probe pass decides, as it decides the skip */
    double after = eta_left_s(&e, 2, 0, NAN);
    CHECK_NEAR(eta_left_s(&e, 1, 0, 9900.0 / 16) - after, full, 1e-9 * full);
    CHECK_NEAR(eta_left_s(&e, 1, 0, 10100.0 / 16) - after, 3 * 10.1 / 16, 1e-9);
}

/* The spread is learnt from the finished configs: two came out e^0.2 over
 * and e^0.2 under what was predicted for them, a sigma of 0.2, and a
 * config predicted at 12 s, 18% over --max-step-s 10, is costed as run by
 * its chance at that sigma (about 0.18), not as skipped outright. */
static void test_spread_learnt(void)
{
    eta_item items[] = {
        {.flops = 64e9, .micro = 8, .accum = 8},
        {.flops = 64e9, .micro = 8, .accum = 8, .mode = 1},
        {.flops = 64e9, .micro = 8, .accum = 8, .mode = 2},
        {.flops = 768e9, .micro = 8, .accum = 8, .model = 1}, /* 12x the FLOPs */
    };
    not_run(items, 4);
    eta e = {.items = items, .n = 4, .c = COSTS};
    double steps[] = {1000, 1000 * exp(0.2), 1000 * exp(-0.2)};
    for (int i = 0; i < 3; i++) /* each predicted at the first's 1000 ms */
        eta_record(&e, i, steps[i], NAN, eta_config_s(&COSTS, steps[i], NAN, 8, 0, 0));
    CHECK_NEAR(eta_step_ms(&e, 3), 12000, 1e-9);
    CHECK_NEAR(eta_spread(&e), 0.2, 1e-12);
    double p = chance_under(12000, 10000, 0.2);
    CHECK(p > 0.15 && p < 0.25);
    eta_costs no_limit = COSTS; /* its cost where it runs */
    no_limit.max_step_s = 0;
    double full = eta_config_s(&no_limit, 12000, NAN, 8, 0, 0), skip = 3 * 1.5;
    CHECK_NEAR(eta_left_s(&e, 3, 0, NAN), p * full + (1 - p) * skip, 1e-9 * full);
}

/* A split's noise pass runs once: the config of the same split just
 * after one that ran reuses its figure (noise_row.c) and costs none; after
 * one skipped over --max-step-s, its own (4 windows of 8 passes of 1 s). */
static void test_noise_once_a_split(void)
{
    eta_costs c = COSTS;
    c.noise_windows = 4;
    double run = eta_config_s(&c, 8000, 1000, 8, 0, 0), noise = 4 * 8 * 1.0;
    for (int ran = 0; ran < 2; ran++) {
        eta_item items[] = {
            {.flops = 64e9, .micro = 8, .accum = 8},
            {.flops = 64e9, .micro = 8, .accum = 8, .mode = 1},
        };
        for (int i = 0; i < 2; i++)
            items[i].step_ms = items[i].pass_ms = items[i].wall_s = items[i].noise_s = NAN;
        eta e = {.items = items, .n = 2, .c = c};
        if (ran) { /* as the model says: a scale of 1 */
            eta_record(&e, 0, 8000, 1000, run + noise);
            eta_record_parts(&e, 0, noise, 4, 0);
        } else { /* its probe pass, 2 s x 8, over the threshold */
            eta_record(&e, 0, NAN, 2000, 6.0);
        }
        /* the second, its own probe pass 1 s: it runs */
        CHECK_NEAR(eta_left_s(&e, 1, 0, 1000), run + (ran ? 0 : noise), 1e-9 * run);
    }
}

/* A pass timed before the sweep (eta_record_probe) stands for its
 * config's step from the start: model 1, 26x model 0's FLOPs, by FLOPs at
 * a 2.6 s step, took 178 ms a pass (45.6 s a step, K = 256: over
 * --max-step-s, a skip). It is no finished config: the scale and the
 * spread do not see it, and the config's own pass, once measured, wins. */
static void test_probe(void)
{
    eta_item items[] = {
        {.flops = 1e9, .micro = 1, .accum = 256},
        {.flops = 26e9, .micro = 1, .accum = 256, .model = 1},
        {.flops = 26e9, .micro = 256, .accum = 1, .model = 1},
    };
    not_run(items, 3);
    eta e = {.items = items, .n = 3, .c = COSTS};
    double ran = eta_config_s(&COSTS, 100, NAN, 256, 0, 0);
    eta_record(&e, 0, 100, NAN, 2 * ran);
    double k = learnt_scale(&COSTS, 2 * ran, ran); /* 2 toward the prior */
    CHECK_NEAR(eta_step_ms(&e, 1), 2600, 1e-9); /* by FLOPs */
    eta_record_probe(&e, 1, 178);
    CHECK_NEAR(eta_step_ms(&e, 1), 178 * 256, 1e-9);
    /* skipped after its probe passes: no scale on those, no skip seen yet */
    CHECK_NEAR(cost_of(&e, 1), 3 * 0.178, 1e-12);
    /* not a finished config: the scale is still config 0's */
    eta_record_probe(&e, 2, 1400);
    CHECK_NEAR(cost_of(&e, 2), k * eta_config_s(&COSTS, 1400, 1400, 1, 0, 0), 1e-9);
    CHECK(eta_spread(&e) == ETA_SPREAD_FLOOR);
    /* the running config's own pass over the probe's */
    CHECK_NEAR(eta_left_s(&e, 1, 0, 30.0), k * eta_config_s(&COSTS, 30 * 256, 30, 256, 0, 0) +
                                             cost_of(&e, 2), 1e-6);
    /* a finished config keeps its own figures */
    eta_record(&e, 2, 1500, 1500, 9);
    eta_record_probe(&e, 2, 1);
    CHECK_NEAR(eta_step_ms(&e, 2), 1500, 1e-12);
}

/* Configs predicted at milliseconds (the tiny model's) that took 0.3 s
 * each over their prediction tell a fixed cost per config, not a scale:
 * as one ratio of their times (over 30 here) the scale made every later
 * config cost that many times its prediction. */
static void test_fixed_cost(void)
{
    eta_item items[] = {
        {.flops = 1e6, .micro = 1, .accum = 4},  {.flops = 1e6, .micro = 2, .accum = 2},
        {.flops = 1e6, .micro = 4, .accum = 1},  {.flops = 1e12, .micro = 4, .accum = 1, .model = 1},
    };
    not_run(items, 4);
    eta e = {.items = items, .n = 4, .c = COSTS};
    double predicted = 0;
    for (int i = 0; i < 3; i++) {
        double own = eta_config_s(&COSTS, 0.5, 0.5 / items[i].accum, items[i].accum, 5, 0);
        eta_record(&e, i, 0.5, 0.5 / items[i].accum, own + 0.3);
        eta_record_parts(&e, i, NAN, 0, 5);
        predicted += own;
    }
    CHECK((predicted + 3 * 0.3) / predicted > 30); /* what one ratio would be */
    eta_record_probe(&e, 3, 1000); /* model 1's pass: a second */
    double want = eta_config_s(&COSTS, 1000, 1000, 1, 5, 0) + 0.3;
    CHECK_NEAR(eta_left_s(&e, 3, 0, NAN), want, 1e-9);
}

/* A comparison timed in interleaved rounds: as many rounds as its
 * members' budgets hold, ROUNDS_MIN at least; each member's timed part
 * that many slices. */
static void test_rounds(void)
{
    eta_costs c = COSTS;
    c.rounds = -1; /* auto */
    eta_item items[3] = {{.flops = 1, .micro = 4, .accum = 1, .group = 1},
                         {.flops = 1, .micro = 2, .accum = 2, .group = 1},
                         {.flops = 1, .micro = 1, .accum = 4, .group = 2}};
    not_run(items, 3);
    eta e = {.items = items, .n = 3, .c = c};
    /* slow steps (1.5 s against a 2 s budget): one step a slice, and the
     * budgets' 4 s hold 2 rounds: ROUNDS_MIN it is */
    items[0].step_ms = 1500, items[1].step_ms = 1500;
    CHECK_NEAR(eta_group_rounds(&e, 0), 5, 1e-12);
    CHECK_NEAR(eta_group_rounds(&e, 2), 0, 1e-12); /* alone in its group */
    /* timed alone it would stop at 3 steps and the one in flight, and its
     * warm-up at half the budget and a step (2.5 s); the rounds' warm-up
     * slice runs both steps asked */
    double alone = eta_config_s(&c, 1500, 1500, 1, 0, 0);
    double in_rounds = eta_config_s(&c, 1500, 1500, 1, 0, 5);
    CHECK_NEAR(in_rounds - alone, (5 - 4) * 1.5 + (2 * 1.5 - 2.5), 1e-9);
    /* fast steps (10 ms): slices of a twentieth of the budget, 10 steps,
     * so the budgets hold 20 rounds, each member about its budget; a pass
     * after each slice (a tenth of its 10 steps at K 1) where one config
     * timed alone times 5 */
    items[0].step_ms = 10, items[1].step_ms = 10;
    CHECK_NEAR(eta_group_rounds(&e, 1), 20, 1e-12);
    CHECK_NEAR(eta_config_s(&c, 10, 10, 1, 0, 20) - eta_config_s(&c, 10, 10, 1, 0, 0),
               20 * 10 * 0.01 - (200 + 1) * 0.01 + (20 - 5) * 0.01, 1e-9);
    /* at K 4 a pass is a quarter step: ceil(0.1 x 10 x 4) = 4 a slice */
    CHECK_NEAR(eta_config_s(&c, 10, 2.5, 4, 0, 20) - eta_config_s(&c, 10, 2.5, 4, 0, 0),
               20 * 10 * 0.01 - (200 + 1) * 0.01 + (20 * 4 - 5) * 0.0025, 1e-9);
    /* --rounds 7: seven, and none where rounds are off */
    e.c.rounds = 7;
    CHECK_NEAR(eta_group_rounds(&e, 0), 7, 1e-12);
    e.c.rounds = 0;
    CHECK_NEAR(eta_group_rounds(&e, 0), 0, 1e-12);
}

/* A comparison's time left by its phases: an overrun in one member's
 * checks leaves the rounds' cost whole. */
static void test_group_left(void)
{
    eta_costs c = COSTS;
    c.rounds = -1;
    eta_item items[3] = {{.flops = 1, .micro = 4, .accum = 1, .group = 1},
                         {.flops = 1, .micro = 2, .accum = 2, .group = 1},
                         {.flops = 1, .micro = 1, .accum = 4, .group = 1}};
    not_run(items, 3);
    for (int i = 0; i < 3; i++) /* passes timed before the sweep: 1 s steps */
        items[i].pass_ms = 1000.0 / items[i].accum;
    eta e = {.items = items, .n = 3, .c = c};
    /* each member: 3 passes and 2 steps of checks; then the warm-up (1 s
     * of the 2-step warm-up under half the budget and a step), 5 rounds of
     * one step, 5 passes, two counted steps (2 s is not over the budget) */
    double checks = 0, after = 0;
    for (int i = 0; i < 3; i++) {
        double p = 1.0 / items[i].accum;
        checks += 3 * p + 2;
        after += 2 + 5 + 5 * p + 2;
    }
    CHECK_NEAR(eta_group_left_s(&e, 0, 2, 0, 0, NAN), checks + after, 1e-9);
    CHECK_NEAR(eta_group_left_s(&e, 0, 2, 0, 0, NAN), eta_left_s(&e, 0, 0, NAN), 1e-9);
    /* member 1 checking for an hour: its checks done, the rest whole */
    double first = 3 * 1.0 + 2;
    CHECK_NEAR(eta_group_left_s(&e, 0, 2, 1, 3600, NAN), checks - first - (3 * 0.5 + 2) + after,
               1e-9);
    /* the rounds begun 4 s ago, and past their cost: nothing left */
    CHECK_NEAR(eta_group_left_s(&e, 0, 2, -1, 0, 4), after - 4, 1e-9);
    CHECK_NEAR(eta_group_left_s(&e, 0, 2, -1, 0, 1e6), 0, 1e-9);
}

/* A sweep recorded on the 2-core VM under load (the cpu profile: effective
 * batch 64 as every power-of-two split of the tiny model, S and M, each
 * model one comparison timed in interleaved rounds, --max-step-s 5; 423 s
 * in all), replayed through the estimate as progress.c feeds it: each
 * config announced, set aside after its checks with its pass and noise
 * pass, and its comparison's members finished together. Per config: when
 * it was announced, its pass (ms), noise pass (s) and windows, its step
 * (ms; NAN: skipped over --max-step-s), its wall time (s: its checks and
 * its share of the rounds and passes after them), timed steps and the
 * rounds its comparison ran. */
static const struct recorded {
    double announced_s, pass_ms, noise_s;
    int windows;
    double step_ms, wall_s;
    int samples, rounds;
} RECORDED[] = {
    {4.36, 0.008626, 0.05, 32, 0.531041, 5.56, 7920, 40},
    {4.53, 0.013064, 0.04, 32, 0.427867, 5.55, 9880, 40},
    {4.6, 0.018014, 0.04, 32, 0.287224, 5.55, 8640, 40},
    {4.69, 0.029725, 0.03, 32, 0.236193, 5.54, 19000, 40},
    {4.77, 0.051907, 0.02, 32, 0.200896, 5.53, 14840, 40},
    {4.89, 0.093435, 0.02, 32, 0.186721, 5.53, 26040, 40},
    {4.95, 0.181069, 0, 0, 0.180999, 5.51, 25240, 40},
    {43.19, 12.6075, 5.77, 4, 725.092, 17.32, 20, 20},
    {52.74, 8.56671, 3.7, 4, 413.083, 13.18, 20, 20},
    {58.23, 8.04932, 1.73, 4, 220.738, 10.23, 20, 20},
    {60.66, 11.2891, 1.35, 4, 154.178, 9.59, 20, 20},
    {62.53, 18.403, 0.83, 4, 115.148, 9.21, 40, 20},
    {63.96, 29.6835, 0.73, 4, 102.295, 8.97, 20, 20},
    {65.18, 55.1765, 0.01, 0, 96.9004, 8.22, 40, 20},
    {122.15, NAN, NAN, 0, NAN, 0.88, 0, 0},
    {123.07, NAN, NAN, 0, NAN, 0.96, 0, 0},
    {124.01, 139.211, 41.3, 4, 4388.91, 88.38, 5, 5},
    {184.19, 345.705, 23.99, 4, 2441.8, 65.84, 5, 5},
    {221.82, 622.38, 13.02, 4, 2267.61, 50.92, 5, 5},
    {244.55, 1224.26, 9.16, 4, 1363.31, 49.32, 5, 5},
    {265.62, 2271.38, 0.39, 0, 1962.6, 44.11, 5, 5},
};
#define RECORDED_END_S 422.96

/* Before anything finished the time left is a guess, given as a range
 * that holds the truth; once the first comparison has finished it is
 * within 20% of it at every config. The estimate before the comparisons
 * were learnt as units, with their rounds' stretch and the gradient
 * check's host work, read 27-58% short over model M's configs (67 s left
 * at the last, 157 s taken). */
static void test_recorded_sweep(void)
{
    run_options o;
    char why[200];
    options_defaults(&o);
    const char *set[][2] = {{"model", "tiny,S,M"}, {"effective", "64"}, {"micro", "pow2"},
                            {"max-step-s", "5"}};
    for (size_t k = 0; k < sizeof set / sizeof set[0]; k++)
        CHECK(options_set(&o, set[k][0], set[k][1], why, sizeof why) == 0);
    eta e;
    CHECK(eta_plan(&e, &o, 0) == 0);
    int n = (int)(sizeof RECORDED / sizeof RECORDED[0]);
    CHECK(e.n == n);
    if (e.n != n)
        return;
    /* the passes timed before the sweep: S's and M's smallest and largest
     * micro-batches */
    eta_record_probe(&e, 7, 6.575);
    eta_record_probe(&e, 13, 60.0);
    eta_record_probe(&e, 14, 158.8);
    eta_record_probe(&e, 20, 1664.5);
    for (int lo = 0; lo < n; lo += 7) { /* one comparison a model */
        int hi = lo + 6;
        for (int i = lo; i <= hi; i++) {
            const struct recorded *r = &RECORDED[i];
            double left = eta_group_left_s(&e, lo, hi, i, 0, NAN) +
                          (hi + 1 < n ? eta_left_s(&e, hi + 1, 0, NAN) : 0);
            double truth = RECORDED_END_S - r->announced_s;
            int right = eta_any_finished(&e) ? fabs(left - truth) <= 0.2 * truth
                                             : left <= truth && truth <= ETA_GUESS_SPAN * left;
            CHECK(right);
            if (!right)
                fprintf(stderr, "  config %d: %.0f s left said, %.0f s taken\n", i + 1, left,
                        truth);
            if (r->pass_ms > 0)
                eta_record_probe(&e, i, r->pass_ms);
            if (r->noise_s > 0)
                eta_record_parts(&e, i, r->noise_s, r->windows, 0);
            eta_record_checked(&e, i, r->step_ms > 0);
        }
        for (int i = lo; i <= hi; i++) {
            const struct recorded *r = &RECORDED[i];
            eta_record(&e, i, r->step_ms, r->pass_ms, r->wall_s);
            eta_record_parts(&e, i, r->noise_s, r->windows, r->samples);
            eta_record_rounds(&e, i, r->rounds);
        }
    }
    eta_free(&e);
}

int main(void)
{
    test_rounds();
    test_group_left();
    test_fixed_cost();
    test_probe();
    test_config_s();
    test_estimates();
    test_noise_pass_and_samples();
    test_ran_over_threshold();
    test_near_threshold();
    test_spread_learnt();
    test_noise_once_a_split();
    test_recorded_sweep();
    return check_finish("test_eta");
}
