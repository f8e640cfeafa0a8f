/* Every rank ends when one is stopped. A signal only sets its rank's flag;
 * a blocking MPI call would then wait for ever on peers that stopped
 * taking part (or on a rank that left its loop), so the engine never
 * blocks: every collective is started non-blocking and tested in a loop
 * that watches the flag. A rank other than 0 that is stopped asks rank 0
 * (a message on a channel of its own) and waits; rank 0, at its next wait,
 * keeps its results (on_stop) and ends the job with MPI_Abort, whose code
 * mpirun returns: 128 + the signal, as the shell reports.
 *
 * A rank that never answers (stopped by SIGSTOP or a debugger, or hung)
 * sends nothing and dies of nothing, so no flag is ever set: each wait
 * has a limit too (ACCUBENCH_RANK_WAIT_S, 10 minutes by default, as
 * PyTorch's NCCL process groups wait), after which the rank says so and
 * ends the job as a failure. */
#include "mpi_comm_internal.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define STOP_TAG 7
#define GIVE_UP_S 10.0

static volatile sig_atomic_t *watched;
static void (*stop_hook)(int sig);
static MPI_Comm channel = MPI_COMM_NULL; /* stop requests, to rank 0 */
static MPI_Request asked = MPI_REQUEST_NULL;
static int asked_code;
static double wait_limit_s = 600.0; /* 0: for ever */

int mpi_stop_open(void)
{
    if (channel != MPI_COMM_NULL)
        return MPI_SUCCESS;
    int err = MPI_Comm_dup(MPI_COMM_WORLD, &channel), rank = 0;
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(channel, &rank);
    if (err == MPI_SUCCESS && rank == 0)
        err = MPI_Irecv(&asked_code, 1, MPI_INT, MPI_ANY_SOURCE, STOP_TAG, channel, &asked);
    return err;
}

void mpi_stop_close(void)
{
    if (asked != MPI_REQUEST_NULL) {
        MPI_Cancel(&asked);
        MPI_Request_free(&asked);
    }
    if (channel != MPI_COMM_NULL)
        MPI_Comm_free(&channel);
}

void mpi_stop_watch(volatile sig_atomic_t *flag, void (*on_stop)(int sig))
{
    watched = flag;
    stop_hook = on_stop;
}

/* The exit status that ends the job now, or 0: 128 + the signal that
 * stopped this rank (its own, or one another rank asked rank 0 to stop
 * for), or the status of another rank that failed (it said why). */
static int stop_code(void)
{
    if (watched && *watched)
        return 128 + *watched;
    int got = 0;
    if (asked != MPI_REQUEST_NULL && MPI_Test(&asked, &got, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
        got) {
        if (watched)
            *watched = SIGTERM; /* rank 0's sweep stops as for its own signal */
        return asked_code;
    }
    return 0;
}

static void nap(long us)
{
    struct timespec t = {.tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000};
    nanosleep(&t, NULL);
}

void mpi_launch_wait_limit(double seconds)
{
    wait_limit_s = seconds;
}

double mpi_wait_limit(void)
{
    return wait_limit_s;
}

/* No answer within the limit: this rank says so, rank 0 keeps its rows
 * (the hook lets the CSV's lock go), and the job ends as a failure. */
static void give_up(double waited_s)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fprintf(stderr, "accubench: rank %d of %d: no answer from the other ranks in %.0f s (one is "
            "stopped or hung; ACCUBENCH_RANK_WAIT_S sets the wait, 0 for ever); stopping every "
            "rank\n", rank, size, waited_s);
    if (stop_hook)
        stop_hook(0);
    mpi_stop_end(1);
}

int mpi_wait_watched(MPI_Request *r)
{
    /* Busy at first, as MPI_Wait is (the all-reduce waits are timed),
     * then in naps once the wait is long, reading the clock. */
    double t0 = MPI_Wtime();
    for (long spins = 0;; spins++) {
        int done = 0, err = MPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || done)
            return err;
        int code = stop_code();
        if (code) {
            if (stop_hook)
                stop_hook(code > 128 ? code - 128 : 0);
            mpi_stop_end(code);
        }
        if (spins > 100000) {
            nap(200);
            double waited = MPI_Wtime() - t0;
            if (wait_limit_s > 0 && waited > wait_limit_s)
                give_up(waited);
        }
    }
}

void mpi_stop_end(int code)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fflush(stdout);
    fflush(stderr);
    if (rank != 0 && channel != MPI_COMM_NULL) {
        /* Rank 0 writes the results: it ends the job once it has them. */
        MPI_Request sent;
        int msg = code, done = 0;
        if (MPI_Isend(&msg, 1, MPI_INT, 0, STOP_TAG, channel, &sent) == MPI_SUCCESS)
            for (double t = 0; t < GIVE_UP_S; t += 0.01) {
                if (!done)
                    MPI_Test(&sent, &done, MPI_STATUS_IGNORE);
                nap(10000);
            }
    }
    MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code); /* MPI_Abort does not return */
}
