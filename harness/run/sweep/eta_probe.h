/* One pass of each model before the sweep, for the time left (eta.h). */
#ifndef ACCUBENCH_ETA_PROBE_H
#define ACCUBENCH_ETA_PROBE_H

#include "eta.h"
#include "options.h"
#include "sweep_state.h"

/* Times one pass of each model after the first at its smallest and its
 * largest micro-batch and gives them to the estimate (eta_record_probe).
 * Nothing is written and nothing fails: a model or split that cannot be
 * made is left to the estimate's other figures. One process only. */
void eta_probe_models(sweep *s, const run_options *o, eta *plan);

#endif
