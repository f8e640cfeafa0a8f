/* The NCCL all-reduce engine. Gradients are device memory of the CUDA
 * backend; each all-reduce runs on a side stream after the compute stream
 * reaches it (an event), so that work issued after it on the compute
 * stream (the rest of an overlapped backward) runs beside it; wait_all
 * makes the compute stream wait for the side stream. The host never waits.
 *
 * Times come from events: busy, around each all-reduce on the side stream;
 * exposed, around the compute stream's wait for it (how long the compute
 * stream stalled). They are read back in times(), or when the event pairs
 * run out.
 *
 * An all-reduce's kernel starts when this rank reaches it and ends when
 * every rank's data has gone round, so its time includes waiting for the
 * slowest rank to arrive: busbw would read a late peer as a slow link.
 * Each all-reduce is therefore preceded by a one-float all-reduce, an
 * arrival barrier: events before it (this rank arrived), between the two
 * (every rank arrived: the barrier cannot finish before the last rank
 * starts it) and after the transfer. The wait (first to second) is
 * arrival_wait; busy is the transfer alone (second to third). The barrier
 * costs one small-message latency per bucket (microseconds on NVLink),
 * counted in the wait (docs/cuda-backend.md). Host exchanges and the
 * bootstrap go through the MPI engine over the same ranks under mpirun, and
 * through a one-rank host engine (nccl_solo_host.h) in a process no
 * launcher started: one rank is still a real NCCL communicator, and it
 * needs no MPI. */
#include "nccl_comm.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "nccl_solo_host.h"
#include "trace.h"
#ifdef ACCUBENCH_HAVE_MPI
#include "mpi_comm_internal.h"
#endif

#define NCCL_MAX_PAIRS 512

typedef struct nccl_impl {
    comm *host; /* the host engine over the same ranks: MPI's, or one rank's */
    ncclComm_t nc;
    cudaStream_t compute, side;
    cudaEvent_t ready, done;
    /* busy: arrived, every rank arrived, transferred (see the top). */
    cudaEvent_t busy[NCCL_MAX_PAIRS][3], stall[NCCL_MAX_PAIRS][2];
    int n_busy, n_stall, pending, events_made;
    double busy_ms, exposed_ms, wait_ms;
    float *arrival; /* device float: the arrival barrier's operand */
    /* How long a wait may last before the other ranks count as lost (a
     * stopped or hung rank never fails, so NCCL reports nothing): MPI's
     * limit under mpirun; 0 (for ever) alone, where no peer can stop. */
    double wait_limit_s;
    /* The engine this one was split from (NULL: the world): its poll is
     * the backend's again once this one is destroyed. */
    comm *parent;
} nccl_impl;

static nccl_impl *impl_of(comm *c) { return c->impl; }

/* Every failure here marks the backend lost (backend.lost: the sweep stops
 * after this row). A CUDA call of this engine fails on a stream, event or
 * allocation of the device the compute stream shares, and an NCCL call's
 * failure leaves a communicator no later collective can use: either way
 * every config left would be one more error row, and under mpirun the
 * other ranks would wait in a collective this rank never joins. */
static int cuda_fail(backend *b, const char *call, cudaError_t e)
{
    snprintf(b->error, sizeof b->error, "%s failed: %s", call, cudaGetErrorString(e));
    b->lost = 1;
    return BK_ERROR;
}

static int nccl_fail(backend *b, const char *call, ncclResult_t r)
{
    snprintf(b->error, sizeof b->error, "%s failed: %s", call, ncclGetErrorString(r));
    b->lost = 1;
    return BK_ERROR;
}

#define CU_TRY(b, call)                                                      \
    do {                                                                     \
        cudaError_t cu_e_ = (call);                                          \
        if (cu_e_ != cudaSuccess)                                            \
            return cuda_fail((b), #call, cu_e_);                             \
    } while (0)

#define NC_TRY(b, call)                                                      \
    do {                                                                     \
        ncclResult_t nc_r_ = (call);                                         \
        if (nc_r_ != ncclSuccess)                                            \
            return nccl_fail((b), #call, nc_r_);                             \
    } while (0)

/* NCCL reports a failed peer or network only asynchronously: a rank whose
 * peer died would wait on its event until mpirun reaps it; a stopped or
 * hung peer fails nothing, so a wait past the limit counts as one. Polled
 * from every wait of the backend (cuda_backend_set_wait_poll) and of this
 * engine; either aborts the communicator and ends the wait. */
static int nccl_poll(void *ctx, double waited_s)
{
    comm *c = ctx;
    nccl_impl *p = impl_of(c);
    ncclResult_t r = ncclSuccess;
    if (!p->nc)
        return 0;
    if (ncclCommGetAsyncError(p->nc, &r) != ncclSuccess)
        return 0;
    if (r != ncclSuccess && r != ncclInProgress)
        snprintf(c->b->error, sizeof c->b->error,
                 "NCCL: %s (a peer rank died, or the network between them failed): this rank "
                 "stops", ncclGetErrorString(r));
    else if (p->wait_limit_s > 0 && waited_s > p->wait_limit_s)
        snprintf(c->b->error, sizeof c->b->error,
                 "no answer from the other ranks in %.0f s (one is stopped or hung; "
                 "ACCUBENCH_RANK_WAIT_S sets the wait, 0 for ever)", waited_s);
    else
        return 0;
    ncclCommAbort(p->nc);
    p->nc = NULL;
    c->b->lost = 1; /* no collective can run on an aborted communicator */
    return 1;
}

/* cudaEventQuery, with "not ready" taken out of CUDA's last-error slot:
 * it is no failure, and the next launch check would read it as its own. */
static cudaError_t query_event(cudaEvent_t ev)
{
    cudaError_t e = cudaEventQuery(ev);
    if (e == cudaErrorNotReady)
        (void)cudaGetLastError();
    return e;
}

/* Waits for ev, polling NCCL's asynchronous error and the wait limit (see
 * nccl_poll). */
static cudaError_t wait_event(comm *c, cudaEvent_t ev)
{
    uint64_t t0 = trace_now_ns();
    for (long spins = 0;; spins++) {
        cudaError_t e = query_event(ev);
        if (e != cudaErrorNotReady)
            return e;
        if (spins >= 100 && nccl_poll(c, (double)(trace_now_ns() - t0) * 1e-9))
            return cudaErrorLaunchFailure; /* the reason is in b->error */
        usleep(spins >= 100 ? 100 : 10);
    }
}

static void nccl_destroy(comm *c)
{
    nccl_impl *p = impl_of(c);
    /* A split's engine hands the waits back to the one it came from, which
     * goes on running collectives (the sweep splits one for every device
     * count): cleared, they would no longer see a dead or stopped peer. */
    if (p->events_made)
        cuda_backend_set_wait_poll(c->b, p->parent ? nccl_poll : NULL, p->parent);
    if (p->nc)
        ncclCommDestroy(p->nc);
    if (p->events_made) {
        cudaEventDestroy(p->ready);
        cudaEventDestroy(p->done);
        for (int i = 0; i < NCCL_MAX_PAIRS; i++) {
            for (int j = 0; j < 3; j++)
                cudaEventDestroy(p->busy[i][j]);
            for (int j = 0; j < 2; j++)
                cudaEventDestroy(p->stall[i][j]);
        }
    }
    if (p->arrival)
        cudaFree(p->arrival);
    if (p->side)
        cudaStreamDestroy(p->side);
    if (p->host)
        p->host->ops->destroy(p->host);
    free(p);
    free(c);
}

/* Adds the finished records of one list (in the order recorded) to the
 * totals and keeps the rest; with `wait`, waits for them all. A record is
 * `width` events: the interval between events k and k + 1 adds to
 * total[k]. The list is passed as its first event. */
static int collect_records(comm *c, cudaEvent_t *ev, int width, int *count, double *total,
                           int wait)
{
    backend *b = c->b;
    int i = 0;
    for (; i < *count; i++) {
        cudaEvent_t *r = ev + (size_t)i * width;
        cudaError_t e = wait ? wait_event(c, r[width - 1]) : query_event(r[width - 1]);
        if (e == cudaErrorNotReady)
            break;
        if (e != cudaSuccess && !impl_of(c)->nc)
            return BK_ERROR; /* NCCL failed: nccl_poll said why */
        if (e != cudaSuccess)
            return cuda_fail(b, wait ? "cudaEventSynchronize" : "cudaEventQuery", e);
        for (int k = 0; k + 1 < width; k++) {
            float ms;
            CU_TRY(b, cudaEventElapsedTime(&ms, r[k], r[k + 1]));
            total[k] += ms;
        }
    }
    /* The unfinished ones move to the front (events are handles: swapped). */
    for (int j = i; j < *count; j++)
        for (int k = 0; k < width; k++) {
            cudaEvent_t t = ev[(size_t)(j - i) * width + k];
            ev[(size_t)(j - i) * width + k] = ev[(size_t)j * width + k];
            ev[(size_t)j * width + k] = t;
        }
    *count -= i;
    return BK_OK;
}

static int collect(comm *c, int wait)
{
    nccl_impl *p = impl_of(c);
    double busy[2] = {p->wait_ms, p->busy_ms};
    int rc = collect_records(c, &p->busy[0][0], 3, &p->n_busy, busy, wait);
    p->wait_ms = busy[0];
    p->busy_ms = busy[1];
    return rc ? rc : collect_records(c, &p->stall[0][0], 2, &p->n_stall, &p->exposed_ms, wait);
}

/* The side stream waits for the compute stream to reach this point, and
 * the collective's arrival and start are recorded: the record it ends in *ev. */
static int side_begin(comm *c, cudaEvent_t **ev)
{
    nccl_impl *p = impl_of(c);
    int rc;
    if (p->n_busy == NCCL_MAX_PAIRS && (rc = collect(c, 1)))
        return rc;
    *ev = p->busy[p->n_busy++];
    CU_TRY(c->b, cudaEventRecord(p->ready, p->compute));
    CU_TRY(c->b, cudaStreamWaitEvent(p->side, p->ready, 0));
    CU_TRY(c->b, cudaEventRecord((*ev)[0], p->side));
    /* The arrival barrier: done once every rank has reached this bucket. */
    NC_TRY(c->b, ncclAllReduce(p->arrival, p->arrival, 1, ncclFloat, ncclSum, p->nc, p->side));
    CU_TRY(c->b, cudaEventRecord((*ev)[1], p->side));
    return BK_OK;
}

/* The collective's end: the record's last event. */
static int side_end(comm *c, cudaEvent_t *ev)
{
    nccl_impl *p = impl_of(c);
    CU_TRY(c->b, cudaEventRecord(ev[2], p->side));
    p->pending = 1;
    return BK_OK;
}

static int nccl_allreduce_start(comm *c, float *buf, size_t n)
{
    cudaEvent_t *ev;
    int rc = side_begin(c, &ev);
    if (rc)
        return rc;
    NC_TRY(c->b, ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, impl_of(c)->nc,
                               impl_of(c)->side));
    return side_end(c, ev);
}

/* In place as NCCL defines it: the receive buffer is the send buffer's
 * block `rank` (comm.h's convention). */
static int nccl_reduce_scatter_start(comm *c, float *buf, size_t len)
{
    cudaEvent_t *ev;
    int rc = side_begin(c, &ev);
    if (rc)
        return rc;
    NC_TRY(c->b, ncclReduceScatter(buf, buf + (size_t)c->rank * len, len, ncclFloat, ncclSum,
                                   impl_of(c)->nc, impl_of(c)->side));
    return side_end(c, ev);
}

/* ZeRO-2's bucket: one ncclReduce to each rank whose slice meets [a, b),
 * in one group (the owner's in place), as the MPI engine does. */
static int nccl_reduce_range_start(comm *c, float *buf, size_t a, size_t b, size_t len)
{
    nccl_impl *p = impl_of(c);
    cudaEvent_t *ev;
    int rc = side_begin(c, &ev);
    if (rc)
        return rc;
    ncclResult_t r = ncclGroupStart();
    for (int owner = 0; owner < c->size && r == ncclSuccess; owner++) {
        size_t lo = (size_t)owner * len > a ? (size_t)owner * len : a;
        size_t hi = (size_t)owner * len + len < b ? (size_t)owner * len + len : b;
        if (lo < hi)
            r = ncclReduce(buf + (lo - a), buf + (lo - a), hi - lo, ncclFloat, ncclSum, owner,
                           p->nc, p->side);
    }
    ncclResult_t end = ncclGroupEnd(); /* closed whatever happened inside */
    if (r != ncclSuccess)
        return nccl_fail(c->b, "ncclReduce", r);
    NC_TRY(c->b, end);
    return side_end(c, ev);
}

/* In place: the send buffer is the receive buffer's block `rank`. */
static int nccl_allgather_start(comm *c, float *buf, size_t len)
{
    cudaEvent_t *ev;
    int rc = side_begin(c, &ev);
    if (rc)
        return rc;
    NC_TRY(c->b, ncclAllGather(buf + (size_t)c->rank * len, buf, len, ncclFloat,
                               impl_of(c)->nc, impl_of(c)->side));
    return side_end(c, ev);
}

static int nccl_wait_all(comm *c)
{
    nccl_impl *p = impl_of(c);
    int rc;
    if (!p->pending)
        return BK_OK;
    if (p->n_stall == NCCL_MAX_PAIRS && (rc = collect(c, 1)))
        return rc;
    cudaEvent_t *ev = p->stall[p->n_stall++];
    CU_TRY(c->b, cudaEventRecord(ev[0], p->compute));
    CU_TRY(c->b, cudaEventRecord(p->done, p->side));
    CU_TRY(c->b, cudaStreamWaitEvent(p->compute, p->done, 0));
    CU_TRY(c->b, cudaEventRecord(ev[1], p->compute));
    p->pending = 0;
    return BK_OK;
}

static int nccl_times(comm *c, double *busy_ms, double *exposed_ms, int wait)
{
    int rc = collect(c, wait);
    nccl_impl *p = impl_of(c);
    *busy_ms = p->busy_ms;
    /* part of the communication by definition, as the MPI engine holds it:
     * the events around the compute stream's wait can pass the
     * collectives' own by their resolution */
    *exposed_ms = p->exposed_ms < p->busy_ms ? p->exposed_ms : p->busy_ms;
    return rc;
}

static int nccl_arrival_wait(comm *c, double *wait_ms)
{
    *wait_ms = impl_of(c)->wait_ms;
    return BK_OK;
}

static void nccl_reset_times(comm *c)
{
    nccl_impl *p = impl_of(c);
    (void)collect(c, 1);
    p->busy_ms = p->exposed_ms = p->wait_ms = 0;
}

static int nccl_host_allreduce(comm *c, double *v, int n, comm_reduce op)
{
    comm *h = impl_of(c)->host;
    return h->ops->host_allreduce(h, v, n, op);
}

static int nccl_host_broadcast(comm *c, void *buf, size_t bytes)
{
    comm *h = impl_of(c)->host;
    return h->ops->host_broadcast(h, buf, bytes);
}

static int nccl_host_gather(comm *c, const double *v, int n, double *out)
{
    comm *h = impl_of(c)->host;
    return h->ops->host_gather(h, v, n, out);
}

static int nccl_barrier(comm *c)
{
    comm *h = impl_of(c)->host;
    return h->ops->barrier(h);
}

static void nccl_abort(comm *c, const char *reason)
{
    comm *h = impl_of(c)->host;
    h->ops->abort(h, reason);
}

/* Signals and the job's end: the host engine's (MPI's: mpi_stop.c). One
 * rank alone has neither: nothing else waits for it, and its end is the
 * process's own, so these return. */
static void nccl_watch(comm *c, volatile sig_atomic_t *flag, void (*on_stop)(int sig))
{
    comm *h = impl_of(c)->host;
    if (h->ops->watch)
        h->ops->watch(h, flag, on_stop);
}

static void nccl_end(comm *c, int code)
{
    comm *h = impl_of(c)->host;
    if (h->ops->end)
        h->ops->end(h, code);
}

static int nccl_split(comm *c, int size, comm **out);

static const comm_ops nccl_ops = {
    .destroy = nccl_destroy,
    .split = nccl_split,
    .allreduce_start = nccl_allreduce_start,
    .reduce_scatter_start = nccl_reduce_scatter_start,
    .allgather_start = nccl_allgather_start,
    .reduce_range_start = nccl_reduce_range_start,
    .progress = NULL,
    .wait_all = nccl_wait_all,
    .times = nccl_times,
    .arrival_wait = nccl_arrival_wait,
    .reset_times = nccl_reset_times,
    .host_allreduce = nccl_host_allreduce,
    .host_broadcast = nccl_host_broadcast,
    .host_gather = nccl_host_gather,
    .barrier = nccl_barrier,
    .abort = nccl_abort,
    .watch = nccl_watch,
    .end = nccl_end,
};

/* The streams and events of an engine whose host side is set. */
static int make_device_side(comm *c)
{
    nccl_impl *p = impl_of(c);
    p->compute = (cudaStream_t)cuda_backend_stream(c->b);
    CU_TRY(c->b, cudaStreamCreateWithFlags(&p->side, cudaStreamNonBlocking));
    CU_TRY(c->b, cudaEventCreateWithFlags(&p->ready, cudaEventDisableTiming));
    CU_TRY(c->b, cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming));
    for (int i = 0; i < NCCL_MAX_PAIRS; i++) {
        for (int j = 0; j < 3; j++)
            CU_TRY(c->b, cudaEventCreate(&p->busy[i][j]));
        for (int j = 0; j < 2; j++)
            CU_TRY(c->b, cudaEventCreate(&p->stall[i][j]));
    }
    /* The barrier's operand: its sum is never read, so never reset. Zeroed
     * on the side stream its collectives run on: a plain cudaMemset runs
     * on the legacy default stream, which a non-blocking stream does not
     * wait for, so the first barrier could read it before it is set. */
    CU_TRY(c->b, cudaMalloc((void **)&p->arrival, sizeof *p->arrival));
    CU_TRY(c->b, cudaMemsetAsync(p->arrival, 0, sizeof *p->arrival, p->side));
    p->events_made = 1;
    return BK_OK;
}

/* nccl-tests' bootstrap: rank 0's unique id, broadcast by the host engine
 * (over MPI; one rank alone keeps its own). */
static int join(comm *c)
{
    nccl_impl *p = impl_of(c);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (c->rank == 0)
        NC_TRY(c->b, ncclGetUniqueId(&id));
    int rc = p->host->ops->host_broadcast(p->host, &id, sizeof id);
    if (rc)
        return rc;
    NC_TRY(c->b, ncclCommInitRank(&p->nc, c->size, id, c->rank));
    return BK_OK;
}

/* An NCCL engine over the ranks of the host engine `host` (taken over),
 * split from `parent` (NULL: the world), whose peers it waits for as
 * long. */
static int nccl_over(comm *host, comm *parent, comm **out)
{
    *out = NULL;
    backend *b = host->b;
    comm *c = calloc(1, sizeof *c);
    nccl_impl *p = calloc(1, sizeof *p);
    if (!c || !p) {
        free(c);
        free(p);
        host->ops->destroy(host);
        snprintf(b->error, sizeof b->error, "out of host memory for a communicator");
        return BK_OOM;
    }
    p->host = host;
    p->parent = parent;
    p->wait_limit_s = parent ? impl_of(parent)->wait_limit_s : 0;
    c->ops = &nccl_ops;
    c->impl = p;
    c->name = "nccl";
    c->b = b;
    int version = 0;
    if (ncclGetVersion(&version) == ncclSuccess)
        snprintf(c->library, sizeof c->library, "NCCL %d.%d.%d (bootstrap: %s)",
                 version / 10000, version / 100 % 100, version % 100, host->library);
    c->rank = host->rank;
    c->size = host->size;
    int rc = make_device_side(c);
    if (!rc)
        rc = join(c);
    if (rc) {
        nccl_destroy(c);
        return rc;
    }
    cuda_backend_set_wait_poll(b, nccl_poll, c);
    *out = c;
    return BK_OK;
}

static int nccl_split(comm *c, int size, comm **out)
{
    comm *h = impl_of(c)->host, *sub = NULL;
    *out = NULL;
    int rc = h->ops->split(h, size, &sub);
    return rc || !sub ? rc : nccl_over(sub, c, out);
}

#ifdef ACCUBENCH_HAVE_MPI
int nccl_comm_world(backend *b, comm **out, char *why, size_t why_len)
{
    comm *host = NULL;
    int rc = mpi_stop_open() == MPI_SUCCESS ? BK_OK : BK_ERROR;
    if (rc)
        snprintf(b->error, sizeof b->error, "MPI_Comm_dup (the stop channel) failed");
    else
        rc = mpi_comm_over(b, MPI_COMM_WORLD, &host);
    if (!rc)
        rc = nccl_over(host, NULL, out);
    if (!rc)
        impl_of(*out)->wait_limit_s = mpi_wait_limit();
    if (rc)
        snprintf(why, why_len, "%s", b->error);
    return rc;
}
#endif

int nccl_comm_solo(backend *b, comm **out, char *why, size_t why_len)
{
    comm *host = NULL;
    int rc = nccl_solo_host_create(b, &host);
    if (!rc)
        rc = nccl_over(host, NULL, out);
    if (rc)
        snprintf(why, why_len, "%s", b->error);
    return rc;
}
