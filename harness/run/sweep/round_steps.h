/* The steps of interleaved rounds, laid out round after round: round k's
 * steps are v[at[k] .. at[k+1]). A row's figures beside its step time
 * (the host's enqueue time, the communication) and its spread are taken
 * over the steps of the rounds it keeps, pooled, each a median of the same
 * steps; its step time and interval by round (rounds.c). */
#ifndef ACCUBENCH_ROUND_STEPS_H
#define ACCUBENCH_ROUND_STEPS_H

#include <stddef.h>

/* The steps of the rounds k < rounds with kept[k] set, copied into pool
 * (room for at[rounds]); their count. None where v is NULL. */
size_t round_steps_pool(const double *v, const size_t *at, int rounds, const int *kept,
                        double *pool);

/* The median of those steps; NAN where there are none or where any is NAN
 * (a figure the engine does not tell). pool as above, its contents lost. */
double round_steps_median(const double *v, const size_t *at, int rounds, const int *kept,
                          double *pool);

#endif
