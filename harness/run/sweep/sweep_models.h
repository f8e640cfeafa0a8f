/* The models and data of the sweep's place, one per dtype of the run
 * (sweep_models.c). */
#ifndef ACCUBENCH_SWEEP_MODELS_H
#define ACCUBENCH_SWEEP_MODELS_H

#include "config.h"
#include "options.h"
#include "sweep_state.h"

/* The models of config c, one in each dtype of the run; a dtype's that
 * could not be made is absent, with its reason in p->model_rc and
 * p->model_why (its rows say it, sweep_row_start). */
void sweep_open_models(sweep *s, const run_options *o, sweep_place *p, const config *c);
/* Each model's data for c's effective batch, in its dtype (a failure is
 * each dtype's data_rc, said by its rows). */
void sweep_open_data(sweep *s, sweep_place *p, const config *c);
/* Every dtype's data let go, and what it held. */
void sweep_close_data(sweep *s, sweep_place *p);

#endif
