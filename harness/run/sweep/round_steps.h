/* The steps of interleaved rounds, laid out round after round: round k's
 * steps are v[at[k] .. at[k+1]). A row's figures are taken by round over
 * the rounds it keeps: each round's median, then the median of those, for
 * the step time and for every figure beside it (the host's enqueue time,
 * the communication), so that a figure no step exceeds (the exposed
 * communication, never longer than its step) stays under the step time:
 * rounds are the independent draws (the steps of one share the machine's
 * state of that moment). Its spread is over every kept step, pooled. */
#ifndef ACCUBENCH_ROUND_STEPS_H
#define ACCUBENCH_ROUND_STEPS_H

#include <stddef.h>

/* The steps of the rounds k < rounds with kept[k] set, copied into pool
 * (room for at[rounds]); their count. None where v is NULL. */
size_t round_steps_pool(const double *v, const size_t *at, int rounds, const int *kept,
                        double *pool);

/* The median of each kept round that holds steps, into medians (room for
 * `rounds`), in round order; their count (0 where v is NULL). A round with
 * a NAN step (a figure the engine does not tell) has a NAN median. */
size_t round_steps_medians(const double *v, const size_t *at, int rounds, const int *kept,
                           double *medians);

/* The median of those medians; NAN where there are none or where any is
 * NAN. medians as above, its contents lost. */
double round_steps_median(const double *v, const size_t *at, int rounds, const int *kept,
                          double *medians);

/* "24.1 23.9 ...": a figure of each kept round (its median step, or its
 * median single pass), in round order, 5 digits, into out. */
void round_text(const double *per_round, int rounds, const int *kept, char *out, size_t len);

/* v as round_text writes it and round_ms_parse reads it back. The rounds
 * judge and stop on their round figures as written, so that the row's
 * vs_ref, the run's summary and the report (both from round_ms) draw one
 * verdict: at the round the rounds stop, an interval's edge lies just
 * past the threshold, and judged on full precision while the summary read
 * 5 digits, one stopped "slower" at 1.0200001 that the summary called not
 * yet separated at 1.0199954. */
double round_as_written(double v);

#endif
