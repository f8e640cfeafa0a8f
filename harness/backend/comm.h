/* The all-reduce interface: what data parallelism needs from a
 * communication engine, as a table of function pointers like the backend
 * table. The engines live beside the backends (kernels/mpi: MPI on the
 * host's memory, for the CPU backend; kernels/nccl: NCCL on the GPU,
 * bootstrapped over MPI) and the program's backend table names the engine
 * that goes with each backend. The harness never includes an MPI or NCCL
 * header: it sees only this.
 *
 * A communicator is a set of ranks (processes, one device each) started by
 * mpirun. Gradient all-reduces are in place on the backend's device memory
 * and ordered with the device work issued around them; the host values
 * (stopping decisions, checks, timings) go through the host calls. */
#ifndef ACCUBENCH_COMM_H
#define ACCUBENCH_COMM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "ranges.h"

typedef struct comm comm;

typedef enum comm_reduce { COMM_SUM = 0, COMM_MAX = 1, COMM_MIN = 2 } comm_reduce;

typedef struct comm_ops {
    void (*destroy)(comm *c);
    /* A communicator of ranks [0, size) of c. Collective over every rank of
     * c; a rank outside gets *out = NULL. */
    int (*split)(comm *c, int size, comm **out);

    /* Sums n fp32 floats of device memory across the ranks, in place, after
     * the device work issued before it. May return before it is done. */
    int (*allreduce_start)(comm *c, float *buf, size_t n);
    /* Sharded data parallel (ZeRO), in place over buf, size x len floats
     * cut in equal blocks, block r being rank r's (nccl-tests' in-place
     * convention). reduce_scatter: after the wait, block `rank` holds the
     * sum of every rank's block `rank`; the other blocks hold anything.
     * allgather: block `rank` is this rank's; after the wait every block is
     * its rank's. Like allreduce_start, after the device work issued
     * before, and may return before it is done. NULL: the engine has none
     * (sharded rows are then skipped). */
    int (*reduce_scatter_start)(comm *c, float *buf, size_t len);
    int (*allgather_start)(comm *c, float *buf, size_t len);
    /* ZeRO-2's bucket: buf holds floats [a, b) of a vector cut in slices
     * of len floats (rank r's [r len, r len + len)). After the wait, the
     * part of [a, b) inside this rank's slice holds the sum of every
     * rank's, at its place in buf; the rest of buf holds anything. Each
     * rank whose slice meets [a, b) receives its part (one reduce to each
     * owner). In place, after the device work issued before, and may
     * return before it is done; NULL: the engine has none. */
    int (*reduce_range_start)(comm *c, float *buf, size_t a, size_t b, size_t len);
    /* Lets the started all-reduces advance (an MPI engine has no progress
     * thread); NULL where they advance on their own. */
    int (*progress)(comm *c);
    /* Every started all-reduce is done, and device work issued after this
     * call runs after them. */
    int (*wait_all)(comm *c);
    /* Communication time since reset_times, in ms, of the all-reduces
     * finished so far (with `wait`: of all of them, waiting for the device):
     * `busy` sums each all-reduce from its start to its end; `exposed` is
     * the part the step waited for (the host blocked in the engine on the
     * CPU; the compute stream stalled on the GPU). */
    int (*times)(comm *c, double *busy_ms, double *exposed_ms, int wait);
    /* Optional (NULL: the engine cannot tell them apart). Of the same
     * all-reduces as the last times() call, since reset_times, in ms: how
     * long each waited, after this rank reached it, for the slowest rank
     * to reach it too; `busy` then counts only the transfer after that. */
    int (*arrival_wait)(comm *c, double *wait_ms);
    void (*reset_times)(comm *c);

    /* Small host values: in place over n doubles; from rank 0 to all; onto
     * rank 0 (out holds size x n, rank by rank; NULL elsewhere). */
    int (*host_allreduce)(comm *c, double *v, int n, comm_reduce op);
    int (*host_broadcast)(comm *c, void *buf, size_t bytes);
    int (*host_gather)(comm *c, const double *v, int n, double *out);
    int (*barrier)(comm *c);

    /* Prints "accubench: rank R of N: REASON; stopping every rank" on
     * stderr and ends every rank of the job. Never returns. */
    void (*abort)(comm *c, const char *reason);

    /* Signals. `flag` is this rank's, set to the signal by its handler;
     * every wait of the engine watches it, and rank 0's watches for a stop
     * asked by another rank too. When either is seen, on_stop(sig) runs
     * (rank 0 keeps its results there; NULL: nothing) and then end(c,
     * 128 + sig): no wait lasts for ever once a rank is stopped. A rank
     * that failed (abort) asks rank 0 the same way: on_stop(0), and the job
     * ends with status 1. */
    void (*watch)(comm *c, volatile sig_atomic_t *flag, void (*on_stop)(int sig));
    /* Ends every rank with exit status `code`, quietly. On rank 0 at once;
     * on another rank, rank 0 is asked first (its next wait ends the job
     * with its results kept), and the job ends after 10 s regardless.
     * Never returns. */
    void (*end)(comm *c, int code);
} comm_ops;

struct comm {
    const comm_ops *ops;
    void *impl;
    const char *name;  /* the engine: "mpi", "nccl" */
    char library[128]; /* its library and version, for the CSV's metadata */
    int rank, size;
    backend *b;        /* whose device memory the all-reduces run on; a
                        * failed call leaves its reason in b->error */
    /* Counted by comm_allreduce: all-reduces started, and their bytes. */
    uint64_t calls, bytes;
    /* Counted by comm_reduce_scatter and comm_allgather: calls and bytes,
     * a call's bytes the whole buffer (size x len floats) as nccl-tests
     * counts them. */
    uint64_t rs_calls, rs_bytes, ag_calls, ag_bytes;
};

/* The wrappers the harness calls: every gradient all-reduce is counted and
 * issued inside an "allreduce" range, and the wait inside an
 * "allreduce wait" range (NVTX: Nsight Systems shows each one). */
static inline int comm_allreduce(comm *c, float *buf, size_t n)
{
    range_push("allreduce");
    int rc = c->ops->allreduce_start(c, buf, n);
    range_pop();
    c->calls++;
    c->bytes += n * sizeof(float);
    return rc;
}

/* Sharded data parallel: each in a "reduce-scatter" or "all-gather" range,
 * counted. */
static inline int comm_reduce_scatter(comm *c, float *buf, size_t len)
{
    range_push("reduce-scatter");
    int rc = c->ops->reduce_scatter_start(c, buf, len);
    range_pop();
    c->rs_calls++;
    c->rs_bytes += len * (size_t)c->size * sizeof(float);
    return rc;
}

/* A bucket of ZeRO-2, counted as a reduce-scatter of its floats. */
static inline int comm_reduce_range(comm *c, float *buf, size_t a, size_t b, size_t len)
{
    range_push("reduce-scatter");
    int rc = c->ops->reduce_range_start(c, buf, a, b, len);
    range_pop();
    c->rs_calls++;
    c->rs_bytes += (b - a) * sizeof(float);
    return rc;
}

static inline int comm_allgather(comm *c, float *buf, size_t len)
{
    range_push("all-gather");
    int rc = c->ops->allgather_start(c, buf, len);
    range_pop();
    c->ag_calls++;
    c->ag_bytes += len * (size_t)c->size * sizeof(float);
    return rc;
}

static inline int comm_progress(comm *c)
{
    return c->ops->progress ? c->ops->progress(c) : BK_OK;
}

static inline int comm_wait_all(comm *c)
{
    range_push("allreduce wait");
    int rc = c->ops->wait_all(c);
    range_pop();
    return rc;
}

/* The wait of a sharded step's collective, in a range of its own name
 * ("reduce-scatter wait", "all-gather wait"). */
static inline int comm_wait_named(comm *c, const char *range)
{
    range_push(range);
    int rc = c->ops->wait_all(c);
    range_pop();
    return rc;
}

#endif
