/* The MPI side of data parallelism, for the program's backend table
 * (bench/): starting and ending the ranks, and the all-reduce engine of
 * the CPU backend (comm.h) over MPI. Built only where MPI is
 * (ACCUBENCH_HAVE_MPI). */
#ifndef ACCUBENCH_MPI_COMM_H
#define ACCUBENCH_MPI_COMM_H

#include <stddef.h>

#include "comm.h"

/* Where this process stands among the ranks mpirun started. */
typedef struct mpi_launch {
    int rank, size;             /* in the job */
    int local_rank, local_size; /* on this node */
} mpi_launch;

/* MPI_Init (host threads of the backend never call MPI: funneled), and
 * where this rank stands. 0, or -1 with a one-line reason. */
int mpi_launch_init(int *argc, char ***argv, mpi_launch *out, char *why, size_t why_len);
/* How long a rank waits for the others in one collective before it calls
 * them lost and ends the job (seconds; 0: for ever; 600 unless set). */
void mpi_launch_wait_limit(double seconds);
/* The lowest rank whose `refused` is nonzero, on every rank; -1 when
 * none refused. Every rank calls it, before any other collective. */
int mpi_launch_first_refusal(int refused);
/* MPI_Finalize, once every communicator is destroyed. */
void mpi_launch_finalize(void);
/* Ends every rank with exit status `code` (a rank that cannot go on
 * while the others would wait for it in a collective). Never returns. */
void mpi_launch_abort(int code);

/* The all-reduce engine over every rank, on backend b's memory (host
 * memory: the CPU backend). BK_OK, or an error with a reason. */
int mpi_comm_world(backend *b, comm **out, char *why, size_t why_len);

#endif
