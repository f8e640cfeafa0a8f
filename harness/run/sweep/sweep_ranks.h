/* What the ranks of a run under mpirun settle before the first config:
 * each other's process ids, and that they sweep the same configs. */
#ifndef ACCUBENCH_SWEEP_RANKS_H
#define ACCUBENCH_SWEEP_RANKS_H

#include "comm.h"
#include "options.h"
#include "sweep_state.h"

/* Every rank's process id to every rank, so that each counts its
 * siblings' CPU time as the run's, not as other processes'
 * (cpu_sample.h). Every rank calls it; a failure leaves them uncounted. */
void sweep_ranks_share_pids(comm *world);

/* Whether every rank sweeps rank 0's configs (config_fingerprint). Ranks
 * started with other options (an MPMD launch, a wrapper) would pair one
 * config's collectives with another's: rank 0 says so in one line, before
 * any config. Every rank calls it; 1 when they agree. */
int sweep_ranks_agree(sweep *s, const run_options *o);

#endif
