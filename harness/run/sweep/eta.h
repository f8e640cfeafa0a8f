/* The time a sweep has left, from cost: each config's duration predicted
 * from its step time (measured, or estimated from its FLOPs against the
 * configs already measured) and what its budget lets it run: the skip
 * probe, the gradient check, the warm-up, the timed steps the budget
 * allows, the single passes and the trace pass; scaled, and a fixed cost
 * a config added, by how long the finished configs actually took against
 * the same prediction of them (eta.c's scale).
 * The gradient noise pass is costed apart: windows of K passes, each
 * pass with a download of the gradient and host sums over every
 * parameter, so a window grows with K and the model's size; it runs
 * --noise-windows of them, or where a fifth of the budget runs out first
 * those up to the one that reaches it, four at least (noise_pass.h);
 * once a split: the next config of the same split reuses its figure.
 * A config whose predicted step is near --max-step-s is costed by the
 * chance it runs (eta_run_chance). */
#ifndef ACCUBENCH_ETA_H
#define ACCUBENCH_ETA_H

#include <stddef.h>

/* One config of the sweep, in the order it runs. */
typedef struct eta_item {
    double flops;          /* per optimizer step */
    int micro, accum, model, mode;
    int arm;               /* 2: a config's second arm, an A/A check (RESULT_SECOND_ARM) */
    /* measured once it ran (NAN before): */
    double step_ms, pass_ms, wall_s;
    double noise_s;        /* of wall_s, the noise pass's (NAN: not told) */
    int noise_windows_run; /* the windows it ran (0: none or not told) */
    int samples;           /* timed steps (0: not told) */
    double predicted_ms;   /* its step as predicted before it ran (NAN or 0: none) */
    int group;             /* its comparison, timed in interleaved rounds with the
                              others of the same group (1, 2, ...); 0: timed alone */
    int rounds_run;        /* the rounds its comparison ran (0: not told) */
    int checked;           /* its checks are done: 1 it goes on to be timed,
                              -1 it does not (skipped, failed); 0: not yet */
} eta_item;

/* What the options let each config run. */
typedef struct eta_costs {
    double budget_s;
    int warmup, steps, min_samples, max_samples, trace_steps;
    int noise_windows;     /* 0: no noise pass */
    double max_step_s; /* a longer step is skipped after its probe passes */
    int rounds;        /* --rounds N (N > 0), or auto (< 0); the items' groups say who */
} eta_costs;

typedef struct eta {
    eta_item *items;
    int n;
    eta_costs c;
} eta;

/* The predicted seconds of one config whose step takes step_ms and one
 * pass pass_ms, before scaling, timing `samples` steps (0: as many as
 * the budget allows; never more, nor under the loop's floor of 3), or,
 * where `rounds` > 0, timed in that many interleaved rounds of a slice
 * each (rounds.h: a twentieth of the budget, one step at least); without
 * the gradient check's host work over every parameter (check_host_s in
 * eta.c). */
double eta_config_s(const eta_costs *c, double step_ms, double pass_ms, int accum, int samples,
                    double rounds);

/* The rounds config i's comparison is expected to run (0: it is timed
 * alone): the rounds it ran once told (eta_record_rounds); --rounds N; or
 * under auto as many as the members' budgets hold times the stretch the
 * finished comparisons showed (rounds_stretch in eta.c), ROUNDS_MIN at least
 * and ROUNDS_MAX at most. A slow model's comparison runs ROUNDS_MIN rounds
 * of one step each however short its budget: model M's on 2 cores, 5
 * steps of 1-5 s a config, where a config timed alone stops at 3. */
double eta_group_rounds(const eta *e, int i);

/* The timed steps config i is expected to run: its own count once it ran;
 * else the median count of the finished configs (the noise target stops
 * most loops long before the budget does: 5 steps of a quiet config
 * against a 2 s budget's 20); 0 (the budget's) before any. */
int eta_samples(const eta *e, int i);

/* The step time of config i: measured when it ran, else estimated from its
 * FLOPs against the measured configs most like it (the same model and
 * micro-batch; a line through the same model and mode's micro-batches, a
 * pass's fixed cost plus its cost per example; the same micro-batch of
 * another model, scaled by the two models' ratio where both were measured
 * at another; another model's line, by FLOPs; the nearest micro-batch of
 * the same model). NAN when nothing is measured yet. */
double eta_step_ms(const eta *e, int i);

/* The FLOPs of one example of config `it`: a model's size, by which the
 * step of another model and the noise pass's host cost (a download and
 * sums over every parameter) are scaled. */
double eta_example_flops(const eta_item *it);

/* What a finished config tells of its step: its timed step, or, for one
 * skipped after its probe passes (over --max-step-s), K of those passes;
 * NAN for none. */
double eta_known_step_ms(const eta_item *it);

/* How far this sweep's predictions have been off: the root mean square
 * of ln(known step / step predicted before it ran) over the finished
 * configs, ETA_SPREAD_FLOOR at least (a step wanders 10-30% between two
 * runs of one config here, however many configs agreed so far). */
#define ETA_SPREAD_FLOOR 0.10

/* The learnt scale's prior: 1, worth this many --budget-s of predicted
 * time, so that a few configs predicted at milliseconds cannot set it. */
#define ETA_SCALE_PRIOR 2.0
double eta_spread(const eta *e);

/* The chance a config predicted at step_ms runs in full rather than
 * being skipped over --max-step-s: its true step taken as log-normal
 * about the prediction, of sigma `spread` (eta_spread), cut at
 * ETA_SPREAD_TAIL sigmas (so a prediction further than that from the
 * threshold is 0 or 1 exactly, as before). 1 without a threshold. */
#define ETA_SPREAD_TAIL 3.0
double eta_run_chance(const eta_costs *c, double step_ms, double spread);

/* Seconds left: config `current` (counted from 0) has run for
 * current_s, its single pass measured at current_pass_ms (NAN: not yet);
 * every later config in full. NAN when there is nothing to go on. */
double eta_left_s(const eta *e, int current, double current_s, double current_pass_ms);

/* Seconds left of a comparison, configs lo..hi (from 0), whose members are
 * checked one by one, then timed together in rounds, then counted and
 * traced: while member `checking` has run its checks for checking_s
 * (rounds_s NAN), its checks left and those of the members after it,
 * and every member's rounds and passes after them; once the rounds have
 * run for rounds_s, what is left of those. Each part is costed on its
 * own, so a noise pass that took longer than costed does not eat into
 * the rounds' time (costed whole, model M's comparison read "54 s left"
 * with 2 minutes to go). NAN: nothing to go on. */
double eta_group_left_s(const eta *e, int lo, int hi, int checking, double checking_s,
                        double rounds_s);

/* Whether a config has run in full and finished. Until one has, nothing
 * of this machine's pace is learnt (the scale, the fixed cost, the rounds'
 * stretch, the host's work over every parameter) and the time left is a
 * guess from the step times alone: on a loaded 2-core VM the cpu profile's
 * first configs read 42-15% short (244 s said, 419 s taken at config 1;
 * the brief's quieter runs 3 min 30 s for about 5 minutes), so the
 * progress line gives it as a range up to ETA_GUESS_SPAN times it. */
#define ETA_GUESS_SPAN 2.0
int eta_any_finished(const eta *e);

/* Config i finished in wall_s with these figures (NAN: not measured: a
 * failed config; a config skipped over --max-step-s gives its probe pass
 * alone, which costs it as K passes a step). */
void eta_record(eta *e, int i, double step_ms, double pass_ms, double wall_s);

/* A single pass of config i timed before the sweep (eta_probe.h): its step
 * is known from the start as K of those passes, as a skipped config's is,
 * until the config itself runs; it is no finished config (no wall time, no
 * prediction to check). */
void eta_record_probe(eta *e, int i, double pass_ms);

/* Config i's checks are done: it goes on to be timed (timed 1) or not. A
 * comparison's member waits for the others' checks and the rounds, and
 * is no longer costed by the chance it runs: costed so, model M's 2x32,
 * skipped already, still counted 28 s of rounds and passes. */
void eta_record_checked(eta *e, int i, int timed);

/* Config i's comparison ran `rounds` interleaved rounds (kept and dropped). */
void eta_record_rounds(eta *e, int i, int rounds);

/* Config i's noise pass took noise_s seconds (of the wall_s eta_record
 * gives it) over `windows` windows, and its timed loop ran `samples`
 * steps. */
void eta_record_parts(eta *e, int i, double noise_s, int windows, int samples);

/* The predicted seconds of config i's noise pass at a pass of pass_ms:
 * the windows it will run x K x (the pass + the host's cost per pass for
 * each parameter, learnt from the noise passes finished, per FLOP of one
 * example). */
double eta_noise_s(const eta *e, int i, double pass_ms);

/* The plan of a sweep: every config it will visit, in its order (the
 * loops of sweep.c: model, effective batch, devices, micro-batch, mode,
 * reduction, sync), into e->items (free with eta_free). Returns 0, or -1
 * when out of memory (no estimate then). */
struct run_options;
int eta_plan(eta *e, const struct run_options *o, int data_parallel);
void eta_free(eta *e);

#endif
