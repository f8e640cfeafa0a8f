/* Interleaved rounds: the configs one comparison holds (a sweep's configs
 * of one model, effective batch and device count) timed together, so that
 * a disturbance falls on all of them alike. Each round runs every config
 * for a short slice of steps in a fresh random order; the rounds go on
 * until every config's paired ratio to its series' reference is decided
 * (paired.h) or the budget ends. A round in which other processes or the
 * hypervisor took the CPUs is dropped where enough clean rounds remain.
 *
 * The runners stay set up between rounds where all of them fit together
 * (no memory cap, and half the device holds the shared state and data once
 * and every runner's activations); else each slice sets its runner up
 * again, on the weights as they are, and warms it with one step.
 * docs/measuring.md says what each costs. */
#ifndef ACCUBENCH_ROUNDS_H
#define ACCUBENCH_ROUNDS_H

#include <math.h>

#include "config.h"
#include "dataset.h"
#include "model.h"
#include "paired.h"
#include "result_row.h"
#include "step.h"
#include "sweep_state.h"

/* Rounds before a comparison may be called decided (twice as many where
 * the rounds it keeps were disturbed: paired_first_look). */
#define ROUNDS_MIN PAIRED_FIRST_LOOK /* the interval holds over looks from it */
/* A slice is this share of a config's --budget-s (one step at least), so
 * that the budget holds about 1/ROUNDS_SLICE_SHARE rounds. */
#define ROUNDS_SLICE_SHARE 0.05
/* Single passes after each slice: this share of the slice's steps times
 * K (the passes' time about this share of the slice's), 1 to
 * ROUNDS_PASS_MAX. */
#define ROUNDS_PASS_SHARE 0.1
#define ROUNDS_PASS_MAX 16
/* The single passes after a slice of `slice_steps` steps of K passes each
 * (rounds.c times them; the time-left estimate counts them). */
static inline int rounds_passes_per_slice(double slice_steps, int accum)
{
    double want = ceil(ROUNDS_PASS_SHARE * slice_steps * accum);
    return want < 1 ? 1 : want > ROUNDS_PASS_MAX ? ROUNDS_PASS_MAX : (int)want;
}
/* Dropped rounds may stretch a comparison past its budget, to this many
 * times it, to gather ROUNDS_MIN clean ones. */
#define ROUNDS_BUDGET_STRETCH 3.0

/* One config of the comparison: its row (config columns filled) and
 * runner, set up by config_prepare on its model and data; `live` while it
 * is to be timed. */
typedef struct round_member {
    const config *c;
    model *m;   /* the model and data of its dtype */
    dataset *d;
    result_row *r;
    step_runner run;
    int live;
    size_t own_bytes; /* its runner's memory (config_prepare's runner_bytes) */
    progress_mark mark; /* its progress, set aside between its turns */
} round_member;

/* Whether their runners may stay set up side by side (see above). */
int rounds_resident(const sweep *s, const round_member *members, size_t n);

/* Times the live members in rounds and fills their timed columns and the
 * comparison's (comparison, rounds, rounds_dropped, round_ms, vs_ref..);
 * each member then runs its counting and trace passes and gets its status
 * (config_finish), its runner freed. `resident`: as rounds_resident said
 * when they were prepared (a member not resident was let go after it). */
void rounds_run(sweep *s, round_member *members, size_t n, int resident);

#endif
