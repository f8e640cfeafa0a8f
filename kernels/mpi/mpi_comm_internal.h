/* The MPI engine's pieces another engine builds on (the NCCL engine does
 * its host exchanges and its bootstrap through them). Seen only by
 * kernels/mpi and kernels/nccl. */
#ifndef ACCUBENCH_MPI_COMM_INTERNAL_H
#define ACCUBENCH_MPI_COMM_INTERNAL_H

#include <mpi.h>

#include "mpi_comm.h"

/* An MPI engine over a duplicate of mc (the caller keeps mc). */
int mpi_comm_over(backend *b, MPI_Comm mc, comm **out);
/* The MPI communicator under an MPI engine's comm. */
MPI_Comm mpi_comm_handle(comm *c);
/* The reason of a failed MPI call, into b->error; returns BK_ERROR. */
int mpi_fail(backend *b, const char *call, int err);

#endif
