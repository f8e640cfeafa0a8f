#include "dp_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"

void dp_fail(comm *c, const char *what, const char *reason)
{
    char line[600];
    snprintf(line, sizeof line, "%s: %s", what, reason);
    c->ops->abort(c, line);
}

static void exchange(comm *c, double *v, int n, comm_reduce op)
{
    if (c->ops->host_allreduce(c, v, n, op))
        dp_fail(c, "exchanging a check's numbers", c->b->error);
}

int dp_agree_status(comm *c, int rc)
{
    double v = rc;
    exchange(c, &v, 1, COMM_MAX);
    return (int)v;
}

double dp_agree_max(comm *c, double x)
{
    double v = isnan(x) ? INFINITY : x;
    exchange(c, &v, 1, COMM_MAX);
    return isinf(v) && isnan(x) ? NAN : v;
}

int dp_agree_all(comm *c, int yes)
{
    double no = !yes;
    exchange(c, &no, 1, COMM_MAX);
    return no == 0;
}

double dp_agree_sum(comm *c, double x)
{
    exchange(c, &x, 1, COMM_SUM);
    return x;
}

int dp_agree_root_int(comm *c, int x)
{
    if (c->ops->host_broadcast(c, &x, sizeof x))
        dp_fail(c, "broadcasting from rank 0", c->b->error);
    return x;
}

int dp_weights_check(step_runner *s, double *max_diff)
{
    model *m = s->m;
    backend *b = m->b;
    size_t n = m->n_params, bytes = n * sizeof(float);
    float *mine = malloc(bytes), *root = malloc(bytes);
    int rc = BK_OK;
    if (!mine || !root) {
        snprintf(b->error, sizeof b->error, "out of host memory for the weights check");
        rc = BK_OOM;
    }
    if (!rc)
        rc = step_run(s);
    if (!rc)
        rc = bk_download(b, mine, m->params, bytes);
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            root[i] = mine[i];
        rc = s->comm->ops->host_broadcast(s->comm, root, bytes);
    }
    double diff = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        double d = fabs((double)mine[i] - (double)root[i]);
        if (!(d <= diff)) /* a NaN on one rank is a difference */
            diff = isnan(d) ? INFINITY : d;
    }
    free(mine);
    free(root);
    if (!rc)
        *max_diff = dp_agree_max(s->comm, diff);
    return rc;
}

void dp_fill_row(comm *c, const step_timing *t, result_row *r)
{
    r->allreduce_calls_per_step = t->allreduce_calls;
    r->allreduce_bytes_per_step = t->allreduce_bytes;
    r->comm_ms = t->comm_ms;
    r->comm_exposed_ms = t->comm_exposed_ms;
    r->reduce_scatter_calls_per_step = t->rs_calls;
    r->reduce_scatter_bytes_per_step = t->rs_bytes;
    r->allgather_calls_per_step = t->ag_calls;
    r->allgather_bytes_per_step = t->ag_bytes;
    r->comm_wait_ms = t->comm_wait_ms;
    /* nccl-tests' bus bandwidth: each collective's bytes times what each
     * link carries of them in a ring, 2 (n - 1) / n for an all-reduce and
     * (n - 1) / n for a reduce-scatter or an all-gather (the bytes being
     * the whole buffer), over the time the step's collectives took. */
    int n = c->size;
    double bus_bytes = (t->allreduce_bytes * 2.0 + t->rs_bytes + t->ag_bytes) * (n - 1) / n;
    r->busbw_gbps = n > 1 && t->comm_ms > 0 ? bus_bytes / (t->comm_ms * 1e-3) / 1e9 : NAN;
    double *all = c->rank == 0 ? malloc((size_t)n * sizeof *all) : NULL;
    double median = t->step.median;
    if (c->ops->host_gather(c, &median, 1, all))
        dp_fail(c, "gathering the step times", c->b->error);
    if (all) {
        double lo = all[0], hi = all[0];
        for (int i = 1; i < n; i++) {
            lo = all[i] < lo ? all[i] : lo;
            hi = all[i] > hi ? all[i] : hi;
        }
        r->rank_step_spread_pct = median > 0 ? 100.0 * (hi - lo) / median : NAN;
        free(all);
    }
}
