/* The host side of a one-rank NCCL engine that no launcher started: the
 * exchanges between ranks, where there is one rank, need no MPI. */
#ifndef ACCUBENCH_NCCL_SOLO_HOST_H
#define ACCUBENCH_NCCL_SOLO_HOST_H

#include "comm.h"

/* A host engine of one rank on b (its host calls only: the NCCL engine
 * makes the device collectives). BK_OK or BK_OOM with the reason. */
int nccl_solo_host_create(backend *b, comm **out);

#endif
