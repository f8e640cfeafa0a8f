/* The checks and numbers of a data-parallel config, across its ranks:
 * what every rank must agree on, that the weights stay the same on every
 * rank, and the communication columns of the row. */
#ifndef ACCUBENCH_DP_CHECK_H
#define ACCUBENCH_DP_CHECK_H

#include "measure.h"
#include "result_row.h"
#include "step.h"

/* The worst of every rank's status (BK_* codes; any rank's failure is
 * everyone's). On a failed exchange, stops every rank. */
int dp_agree_status(comm *c, int rc);
/* The largest of every rank's x (NaN counts as largest). */
double dp_agree_max(comm *c, double x);
/* 1 when every rank says yes: a choice that makes ranks take different
 * paths (one runs a config, or keeps a runner, and another not) would
 * leave them in different collectives. */
int dp_agree_all(comm *c, int yes);
double dp_agree_sum(comm *c, double x);
/* Rank 0's value of x, on every rank. */
int dp_agree_root_int(comm *c, int x);

/* One optimizer step from the current weights, then rank 0's weights
 * against every rank's: the largest absolute difference anywhere, on every
 * rank (0 when they hold the same weights). BK_* status. */
int dp_weights_check(step_runner *s, double *max_diff);

/* The row's data-parallel columns from the timed pass (rank 0's timing)
 * and the step medians of every rank. */
void dp_fill_row(comm *c, const step_timing *t, result_row *r);

/* A failure on one rank while the others wait in a collective: one line,
 * and every rank stops. Never returns. */
void dp_fail(comm *c, const char *what, const char *reason);

#endif
