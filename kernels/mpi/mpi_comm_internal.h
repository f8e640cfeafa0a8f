/* The MPI engine's pieces another engine builds on (the NCCL engine does
 * its host exchanges and its bootstrap through them). Seen only by
 * kernels/mpi and kernels/nccl. */
#ifndef ACCUBENCH_MPI_COMM_INTERNAL_H
#define ACCUBENCH_MPI_COMM_INTERNAL_H

#include <mpi.h>
#include <signal.h>

#include "mpi_comm.h"

/* An MPI engine over a duplicate of mc (the caller keeps mc). */
int mpi_comm_over(backend *b, MPI_Comm mc, comm **out);
/* The MPI communicator under an MPI engine's comm. */
MPI_Comm mpi_comm_handle(comm *c);
/* The reason of a failed MPI call, into b->error; returns BK_ERROR. */
int mpi_fail(backend *b, const char *call, int err);

/* The stop machinery (mpi_stop.c; comm.h's watch and end). open: the
 * stop channel, collective over the world; close: before MPI_Finalize. */
int mpi_stop_open(void);
void mpi_stop_close(void);
void mpi_stop_watch(volatile sig_atomic_t *flag, void (*on_stop)(int sig));
/* MPI_Wait that ends the job when this rank is stopped, or when the
 * others have not answered within the wait limit. */
int mpi_wait_watched(MPI_Request *r);
/* The wait limit in seconds (mpi_launch_wait_limit; 0: for ever), for
 * the engines that wait on their own (NCCL's events). */
double mpi_wait_limit(void);
/* Ends every rank with `code` (comm.h's end). Never returns. */
void mpi_stop_end(int code);

#endif
