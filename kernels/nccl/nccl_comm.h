/* The NCCL all-reduce engine of the CUDA backend, for the program's
 * backend table. Built where CUDA and NCCL are (ACCUBENCH_HAVE_NCCL); its
 * world under mpirun where MPI is too (ACCUBENCH_HAVE_MPI). */
#ifndef ACCUBENCH_NCCL_COMM_H
#define ACCUBENCH_NCCL_COMM_H

#include <stddef.h>

#include "comm.h"

/* The engine over every rank on backend b (a CUDA backend): bootstrapped
 * over MPI as nccl-tests does (rank 0 makes the unique id, MPI broadcasts
 * it, every rank joins with ncclCommInitRank). One rank is still a real
 * communicator. BK_OK, or an error with a reason. */
int nccl_comm_world(backend *b, comm **out, char *why, size_t why_len);
/* The engine of this process alone, one rank, where no launcher started
 * it: its host exchanges need no MPI (nccl_solo_host.h). */
int nccl_comm_solo(backend *b, comm **out, char *why, size_t why_len);

#endif
