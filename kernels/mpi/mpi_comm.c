/* The MPI all-reduce engine: gradients in host memory (the CPU backend),
 * summed with MPI_Iallreduce in place. MPI has no progress thread here, so
 * a started all-reduce advances when the engine is called: at each bucket
 * of an overlapped backward (progress) and at the wait. The host is the
 * CPU backend's device, so the time the host spends inside the engine is
 * the communication the step waited for (exposed). */
#include "mpi_comm_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPI_MAX_PENDING 256
/* MPI counts are ints: larger host exchanges go in pieces. */
#define MPI_PIECE_BYTES ((size_t)1 << 30)

/* What a request leaves to do once it is done: MPI's in-place
 * reduce-scatter leaves this rank's block at the start of the buffer, and
 * comm.h's convention wants it at block `rank` (n = 0: nothing). */
typedef struct mpi_move {
    float *dst;
    const float *src;
    size_t n;
} mpi_move;

typedef struct mpi_impl {
    MPI_Comm mc;
    MPI_Request pending[MPI_MAX_PENDING];
    double started[MPI_MAX_PENDING];
    mpi_move move[MPI_MAX_PENDING];
    int n_pending;
    double busy_s, exposed_s;
} mpi_impl;

static mpi_impl *impl_of(comm *c) { return c->impl; }

int mpi_fail(backend *b, const char *call, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", err);
    snprintf(b->error, sizeof b->error, "%s failed: %s", call, text);
    return BK_ERROR;
}

#define MPI_TRY(b, call)                                                     \
    do {                                                                     \
        int mpi_err_ = (call);                                               \
        if (mpi_err_ != MPI_SUCCESS)                                         \
            return mpi_fail((b), #call, mpi_err_);                           \
    } while (0)

MPI_Comm mpi_comm_handle(comm *c) { return impl_of(c)->mc; }

static void mpi_destroy(comm *c)
{
    mpi_impl *p = impl_of(c);
    if (p->mc != MPI_COMM_NULL)
        MPI_Comm_free(&p->mc);
    free(p);
    free(c);
}

static int mpi_barrier(comm *c);

static int mpi_split(comm *c, int size, comm **out)
{
    *out = NULL;
    MPI_Comm sub;
    /* MPI_Comm_split cannot be watched: every rank is at this point first. */
    if (mpi_barrier(c))
        return BK_ERROR;
    MPI_TRY(c->b, MPI_Comm_split(impl_of(c)->mc, c->rank < size ? 0 : MPI_UNDEFINED, c->rank,
                                 &sub));
    if (sub == MPI_COMM_NULL)
        return BK_OK;
    int rc = mpi_comm_over(c->b, sub, out);
    MPI_Comm_free(&sub);
    return rc;
}

/* Room for one more request of n floats a rank, or BK_UNSUPPORTED. */
static int room_for(comm *c, const char *what, size_t n)
{
    mpi_impl *p = impl_of(c);
    if (n <= INT_MAX && p->n_pending < MPI_MAX_PENDING)
        return BK_OK;
    snprintf(c->b->error, sizeof c->b->error, "%s of %zu floats with %d pending is past what "
             "the MPI engine takes", what, n, p->n_pending);
    return BK_UNSUPPORTED;
}

/* The request just started (at t0) joins the pending ones. */
static void started(mpi_impl *p, double t0, mpi_move move)
{
    p->move[p->n_pending] = move;
    p->started[p->n_pending++] = t0;
    p->exposed_s += MPI_Wtime() - t0;
}

static int mpi_allreduce_start(comm *c, float *buf, size_t n)
{
    mpi_impl *p = impl_of(c);
    int rc = room_for(c, "an all-reduce", n);
    if (rc)
        return rc;
    double t0 = MPI_Wtime();
    MPI_TRY(c->b, MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, p->mc,
                                 &p->pending[p->n_pending]));
    started(p, t0, (mpi_move){0});
    return BK_OK;
}

/* In place: MPI puts this rank's summed block at buf's start; the move
 * when it is done takes it to block `rank`. */
static int mpi_reduce_scatter_start(comm *c, float *buf, size_t len)
{
    mpi_impl *p = impl_of(c);
    int rc = room_for(c, "a reduce-scatter", len);
    if (rc)
        return rc;
    double t0 = MPI_Wtime();
    MPI_TRY(c->b, MPI_Ireduce_scatter_block(MPI_IN_PLACE, buf, (int)len, MPI_FLOAT, MPI_SUM,
                                            p->mc, &p->pending[p->n_pending]));
    mpi_move move = {buf + (size_t)c->rank * len, buf, c->rank ? len : 0};
    started(p, t0, move);
    return BK_OK;
}

/* One MPI_Ireduce to each rank whose slice meets [a, b), in rank order
 * (every rank issues the same ones); the owner's in place. */
static int mpi_reduce_range_start(comm *c, float *buf, size_t a, size_t b, size_t len)
{
    mpi_impl *p = impl_of(c);
    for (int r = 0; r < c->size; r++) {
        size_t lo = (size_t)r * len > a ? (size_t)r * len : a;
        size_t hi = (size_t)r * len + len < b ? (size_t)r * len + len : b;
        if (lo >= hi)
            continue;
        int rc = room_for(c, "a bucket's reduce", hi - lo);
        if (rc)
            return rc;
        float *at = buf + (lo - a);
        double t0 = MPI_Wtime();
        MPI_TRY(c->b, MPI_Ireduce(r == c->rank ? MPI_IN_PLACE : at, at, (int)(hi - lo),
                                  MPI_FLOAT, MPI_SUM, r, p->mc, &p->pending[p->n_pending]));
        started(p, t0, (mpi_move){0});
    }
    return BK_OK;
}

/* In place: this rank's block is already at block `rank` of buf. */
static int mpi_allgather_start(comm *c, float *buf, size_t len)
{
    mpi_impl *p = impl_of(c);
    int rc = room_for(c, "an all-gather", len);
    if (rc)
        return rc;
    double t0 = MPI_Wtime();
    MPI_TRY(c->b, MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, (int)len, MPI_FLOAT,
                                 p->mc, &p->pending[p->n_pending]));
    started(p, t0, (mpi_move){0});
    return BK_OK;
}

/* A request is done: what it left to do, done. The move is the
 * collective's own work (its time counts as its time). */
static void finish(mpi_impl *p, int i)
{
    mpi_move *mv = &p->move[i];
    if (mv->n)
        memmove(mv->dst, mv->src, mv->n * sizeof(float));
    mv->n = 0;
}

/* Drops the finished requests, counting their time. */
static void settle(mpi_impl *p, const int *done, double now)
{
    int kept = 0;
    for (int i = 0; i < p->n_pending; i++) {
        if (done[i]) {
            finish(p, i);
            p->busy_s += now - p->started[i];
            continue;
        }
        p->pending[kept] = p->pending[i];
        p->move[kept] = p->move[i];
        p->started[kept++] = p->started[i];
    }
    p->n_pending = kept;
}

static int mpi_progress(comm *c)
{
    mpi_impl *p = impl_of(c);
    if (!p->n_pending)
        return BK_OK;
    double t0 = MPI_Wtime();
    int done[MPI_MAX_PENDING] = {0};
    for (int i = 0; i < p->n_pending; i++)
        MPI_TRY(c->b, MPI_Test(&p->pending[i], &done[i], MPI_STATUS_IGNORE));
    double now = MPI_Wtime();
    settle(p, done, now);
    p->exposed_s += now - t0;
    return BK_OK;
}

static int mpi_wait_all(comm *c)
{
    mpi_impl *p = impl_of(c);
    double t0 = MPI_Wtime(), end = t0;
    /* In order: each one's end is when its wait returns. The wait ends at
     * the last one's end, one clock reading for both: a later reading made
     * the exposed part longer than the communication it is part of. */
    for (int i = 0; i < p->n_pending; i++) {
        MPI_TRY(c->b, mpi_wait_watched(&p->pending[i]));
        finish(p, i);
        end = MPI_Wtime();
        p->busy_s += end - p->started[i];
    }
    p->n_pending = 0;
    p->exposed_s += end - t0;
    return BK_OK;
}

static int mpi_times(comm *c, double *busy_ms, double *exposed_ms, int wait)
{
    (void)wait; /* the host has done all it counted */
    mpi_impl *p = impl_of(c);
    *busy_ms = p->busy_s * 1e3;
    /* part of the communication by definition; the clock reads around the
     * starts and tests can pass it by microseconds */
    *exposed_ms = (p->exposed_s < p->busy_s ? p->exposed_s : p->busy_s) * 1e3;
    return BK_OK;
}

static void mpi_reset_times(comm *c)
{
    impl_of(c)->busy_s = impl_of(c)->exposed_s = 0;
}

static int mpi_host_allreduce(comm *c, double *v, int n, comm_reduce op)
{
    MPI_Op mop = op == COMM_MAX ? MPI_MAX : op == COMM_MIN ? MPI_MIN : MPI_SUM;
    MPI_Request r;
    MPI_TRY(c->b, MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, mop, impl_of(c)->mc, &r));
    MPI_TRY(c->b, mpi_wait_watched(&r));
    return BK_OK;
}

static int mpi_host_broadcast(comm *c, void *buf, size_t bytes)
{
    for (size_t at = 0; at < bytes; at += MPI_PIECE_BYTES) {
        size_t piece = bytes - at < MPI_PIECE_BYTES ? bytes - at : MPI_PIECE_BYTES;
        MPI_Request r;
        MPI_TRY(c->b, MPI_Ibcast((char *)buf + at, (int)piece, MPI_BYTE, 0, impl_of(c)->mc, &r));
        MPI_TRY(c->b, mpi_wait_watched(&r));
    }
    return BK_OK;
}

static int mpi_host_gather(comm *c, const double *v, int n, double *out)
{
    MPI_Request r;
    MPI_TRY(c->b, MPI_Igather(v, n, MPI_DOUBLE, out, n, MPI_DOUBLE, 0, impl_of(c)->mc, &r));
    MPI_TRY(c->b, mpi_wait_watched(&r));
    return BK_OK;
}

static int mpi_barrier(comm *c)
{
    MPI_Request r;
    MPI_TRY(c->b, MPI_Ibarrier(impl_of(c)->mc, &r));
    MPI_TRY(c->b, mpi_wait_watched(&r));
    return BK_OK;
}

static void mpi_abort(comm *c, const char *reason)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    (void)c;
    fprintf(stderr, "accubench: rank %d of %d: %s; stopping every rank\n", rank, size, reason);
    /* Through rank 0, as a stop is: an MPI_Abort from here would reach
     * rank 0 as mpirun's SIGTERM, and it would say it was interrupted. */
    mpi_stop_end(1);
}

static void mpi_watch(comm *c, volatile sig_atomic_t *flag, void (*on_stop)(int sig))
{
    (void)c;
    mpi_stop_watch(flag, on_stop);
}

static void mpi_end(comm *c, int code)
{
    (void)c;
    mpi_stop_end(code);
}

static const comm_ops mpi_ops = {
    .destroy = mpi_destroy,
    .split = mpi_split,
    .allreduce_start = mpi_allreduce_start,
    .reduce_scatter_start = mpi_reduce_scatter_start,
    .allgather_start = mpi_allgather_start,
    .reduce_range_start = mpi_reduce_range_start,
    .progress = mpi_progress,
    .wait_all = mpi_wait_all,
    .times = mpi_times,
    .reset_times = mpi_reset_times,
    .host_allreduce = mpi_host_allreduce,
    .host_broadcast = mpi_host_broadcast,
    .host_gather = mpi_host_gather,
    .barrier = mpi_barrier,
    .abort = mpi_abort,
    .watch = mpi_watch,
    .end = mpi_end,
};

int mpi_comm_over(backend *b, MPI_Comm mc, comm **out)
{
    *out = NULL;
    comm *c = calloc(1, sizeof *c);
    mpi_impl *p = calloc(1, sizeof *p);
    if (!c || !p) {
        free(c);
        free(p);
        snprintf(b->error, sizeof b->error, "out of host memory for a communicator");
        return BK_OOM;
    }
    p->mc = MPI_COMM_NULL;
    c->ops = &mpi_ops;
    c->impl = p;
    c->name = "mpi";
    c->b = b;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) == MPI_SUCCESS)
        snprintf(c->library, sizeof c->library, "%.*s", (int)strcspn(version, ",\n"), version);
    int err = MPI_Comm_dup(mc, &p->mc);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_set_errhandler(p->mc, MPI_ERRORS_RETURN);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(p->mc, &c->rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(p->mc, &c->size);
    if (err != MPI_SUCCESS) {
        mpi_destroy(c);
        return mpi_fail(b, "MPI_Comm_dup", err);
    }
    *out = c;
    return BK_OK;
}

int mpi_comm_world(backend *b, comm **out, char *why, size_t why_len)
{
    int err = mpi_stop_open();
    if (err != MPI_SUCCESS) {
        *out = NULL;
        mpi_fail(b, "MPI_Comm_dup (the stop channel)", err);
        snprintf(why, why_len, "%s", b->error);
        return BK_ERROR;
    }
    int rc = mpi_comm_over(b, MPI_COMM_WORLD, out);
    if (rc)
        snprintf(why, why_len, "%s", b->error);
    return rc;
}

int mpi_launch_init(int *argc, char ***argv, mpi_launch *out, char *why, size_t why_len)
{
    int provided = 0;
    int err = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm node = MPI_COMM_NULL;
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(MPI_COMM_WORLD, &out->rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(MPI_COMM_WORLD, &out->size);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, out->rank,
                                  MPI_INFO_NULL, &node);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_rank(node, &out->local_rank);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_size(node, &out->local_size);
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    if (err != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(err, text, &len);
        snprintf(why, why_len, "starting MPI failed: %s", text);
        return -1;
    }
    if (provided < MPI_THREAD_FUNNELED) {
        snprintf(why, why_len, "this MPI cannot be called from a threaded program "
                 "(MPI_THREAD_FUNNELED not provided)");
        return -1;
    }
    return 0;
}

int mpi_launch_first_refusal(int refused)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = refused ? rank : size, first = mine;
    MPI_Request r;
    /* watched as every wait is: a rank stopped before it gets here ends
     * the job after the wait limit rather than never */
    if (MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &r) != MPI_SUCCESS ||
        mpi_wait_watched(&r) != MPI_SUCCESS)
        return refused ? rank : -1; /* MPI's own errors end the job (MPI_ERRORS_ARE_FATAL) */
    return first < size ? first : -1;
}

void mpi_launch_finalize(void)
{
    mpi_stop_close();
    MPI_Finalize();
}

void mpi_launch_abort(int code)
{
    mpi_stop_end(code);
}
