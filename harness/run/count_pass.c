#include "count_pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "step.h"
#include "trace.h"

/* The table being wrapped and the tally, for the wrappers: the backend
 * table has no context pointer of its own, and one counting pass runs at
 * a time in a process (the sweep runs its configs one after another). */
static const backend_ops *inner;
static count_result *tally;

static gemm_shape_tally *shape_of(const gemm_desc *g)
{
    int batch = g->batch > 1 ? g->batch : 1;
    for (int i = 0; i < tally->n_shapes; i++) {
        gemm_shape_tally *t = &tally->shapes[i];
        if (t->m == g->m && t->n == g->n && t->k == g->k && t->batch == batch &&
            t->trans_a == g->trans_a && t->trans_b == g->trans_b)
            return t;
    }
    if (tally->n_shapes == COUNT_MAX_SHAPES)
        return &tally->shapes[COUNT_MAX_SHAPES];
    gemm_shape_tally *t = &tally->shapes[tally->n_shapes++];
    *t = (gemm_shape_tally){.m = g->m, .n = g->n, .k = g->k, .batch = batch,
                            .trans_a = g->trans_a, .trans_b = g->trans_b};
    return t;
}

static int counted_gemm(backend *b, const gemm_desc *g)
{
    uint64_t t0 = trace_now_ns();
    int rc = inner->gemm(b, g);
    double ms = (double)(trace_now_ns() - t0) / 1e6;
    gemm_shape_tally *t = shape_of(g);
    t->calls++;
    if (tally->timed) {
        t->ms += ms;
        tally->gemm_ms += ms;
    }
    return rc;
}

static int counted_sync(backend *b)
{
    tally->host_syncs++;
    return inner->sync(b);
}

static int counted_download(backend *b, void *dst, const void *src, size_t bytes)
{
    tally->host_syncs++; /* the host waits for the bytes */
    return inner->download(b, dst, src, bytes);
}

static int counted_elapsed(backend *b, bk_timer *start, bk_timer *end, double *ms)
{
    tally->host_syncs++; /* waits for `end` */
    return inner->timer_elapsed_ms(b, start, end, ms);
}

int count_pass_run(step_runner *s, int steps, count_result *out)
{
    backend *b = s->m->b;
    memset(out, 0, sizeof *out);
    out->timed = (b->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK) != 0;
    int rc = b->ops->sync(b); /* nothing of before is counted */
    if (rc)
        return rc;
    backend_ops wrapped = *b->ops;
    wrapped.gemm = counted_gemm;
    wrapped.sync = counted_sync;
    wrapped.download = counted_download;
    wrapped.timer_elapsed_ms = counted_elapsed;
    inner = b->ops;
    tally = out;
    uint64_t dispatches = b->dispatches;
    b->ops = &wrapped;
    for (int i = 0; i < steps && !rc; i++, out->steps++)
        rc = step_run(s);
    b->ops = inner;
    if (!rc)
        rc = b->ops->sync(b); /* the harness's wait, not the step's */
    b->dispatches = dispatches; /* the timed pass's count stands */
    inner = NULL;
    tally = NULL;
    return rc;
}

static int by_start_time(const void *a, const void *b)
{
    const gemm_shape_tally *x = a, *y = b;
    double kx = x->ms > 0 ? x->ms : x->calls, ky = y->ms > 0 ? y->ms : y->calls;
    return (kx < ky) - (kx > ky);
}

/* "512x1024x256 NT: 4/step 12.1 ms 61%" */
static int shape_text(const gemm_shape_tally *t, int steps, int timed, double peak_tflops,
                      char *out, size_t len)
{
    char dims[64];
    int other = t->m == 0;
    if (other)
        snprintf(dims, sizeof dims, "other shapes");
    else if (t->batch > 1)
        snprintf(dims, sizeof dims, "%dx%dx%d x%d %c%c", t->m, t->n, t->k, t->batch,
                 t->trans_a ? 'T' : 'N', t->trans_b ? 'T' : 'N');
    else
        snprintf(dims, sizeof dims, "%dx%dx%d %c%c", t->m, t->n, t->k, t->trans_a ? 'T' : 'N',
                 t->trans_b ? 'T' : 'N');
    if (!timed)
        return snprintf(out, len, "%s: %.3g/step", dims, t->calls / steps);
    double flops = 2.0 * t->m * t->n * (double)t->k * t->batch * t->calls;
    double mfu = !other && peak_tflops > 0 && t->ms > 0
                     ? 100.0 * flops / (t->ms * 1e-3) / 1e12 / peak_tflops : NAN;
    if (isnan(mfu))
        return snprintf(out, len, "%s: %.3g/step %.3g ms", dims, t->calls / steps, t->ms / steps);
    return snprintf(out, len, "%s: %.3g/step %.3g ms %.3g%%", dims, t->calls / steps,
                    t->ms / steps, mfu);
}

void count_fill_row(result_row *r, const count_result *c, double peak_tflops)
{
    if (c->steps < 1)
        return;
    r->host_syncs_per_step = c->host_syncs / c->steps;
    int n = c->n_shapes + (c->shapes[COUNT_MAX_SHAPES].calls > 0);
    if (!n)
        return; /* no GEMM went through the table (a graph replay) */
    gemm_shape_tally sorted[COUNT_MAX_SHAPES + 1];
    memcpy(sorted, c->shapes, (size_t)c->n_shapes * sizeof *sorted);
    if (n > c->n_shapes)
        sorted[c->n_shapes] = c->shapes[COUNT_MAX_SHAPES];
    qsort(sorted, (size_t)n, sizeof *sorted, by_start_time);
    if (c->timed)
        r->gemm_ms_per_step = c->gemm_ms / c->steps;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char one[128];
        shape_text(&sorted[i], c->steps, c->timed, peak_tflops, one, sizeof one);
        /* what does not fit is named, not cut mid-entry */
        if (used + strlen(one) + 2 + 24 >= sizeof r->gemm_shapes) {
            snprintf(r->gemm_shapes + used, sizeof r->gemm_shapes - used, "; %d more", n - i);
            break;
        }
        used += (size_t)snprintf(r->gemm_shapes + used, sizeof r->gemm_shapes - used, "%s%s",
                                 used ? "; " : "", one);
    }
}
