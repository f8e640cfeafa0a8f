/* One rank's host exchanges (nccl_solo_host.h): every rank's values are
 * this rank's, so a sum, a broadcast and a barrier leave them as they are
 * and a gather copies them. No watch and no end: with no other rank
 * waiting, the sweep's own look at the stop flag ends it, and its end is
 * the process's. */
#include "nccl_solo_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void solo_destroy(comm *c) { free(c); }

/* Rank 0 is inside every communicator of at least one rank. */
static int solo_split(comm *c, int size, comm **out)
{
    *out = NULL;
    return size < 1 ? BK_OK : nccl_solo_host_create(c->b, out);
}

static int solo_allreduce(comm *c, double *v, int n, comm_reduce op)
{
    (void)c, (void)v, (void)n, (void)op;
    return BK_OK;
}

static int solo_broadcast(comm *c, void *buf, size_t bytes)
{
    (void)c, (void)buf, (void)bytes;
    return BK_OK;
}

static int solo_gather(comm *c, const double *v, int n, double *out)
{
    (void)c;
    if (out && n > 0)
        memcpy(out, v, (size_t)n * sizeof *v);
    return BK_OK;
}

static int solo_barrier(comm *c)
{
    (void)c;
    return BK_OK;
}

static void solo_abort(comm *c, const char *reason)
{
    (void)c;
    fprintf(stderr, "accubench: rank 0 of 1: %s; stopping\n", reason);
    fflush(stderr);
    fflush(stdout);
    exit(1);
}

static const comm_ops solo_ops = {
    .destroy = solo_destroy,
    .split = solo_split,
    /* The device collectives are the NCCL engine's own. */
    .host_allreduce = solo_allreduce,
    .host_broadcast = solo_broadcast,
    .host_gather = solo_gather,
    .barrier = solo_barrier,
    .abort = solo_abort,
};

int nccl_solo_host_create(backend *b, comm **out)
{
    comm *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c) {
        snprintf(b->error, sizeof b->error, "out of host memory for a communicator");
        return BK_OOM;
    }
    c->ops = &solo_ops;
    c->name = "solo";
    snprintf(c->library, sizeof c->library, "one process, no launcher");
    c->rank = 0;
    c->size = 1;
    c->b = b;
    *out = c;
    return BK_OK;
}
