/* What the time-left tests share (test_eta.c, test_eta_step.c). */
#ifndef ACCUBENCH_TEST_ETA_ITEMS_H
#define ACCUBENCH_TEST_ETA_ITEMS_H

#include <math.h>

#include "eta.h"

/* Configs not run yet: no step, pass or wall time. */
static inline void not_run(eta_item *items, int n)
{
    for (int i = 0; i < n; i++)
        items[i].step_ms = items[i].pass_ms = items[i].wall_s = NAN;
}

#endif
