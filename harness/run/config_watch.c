#include "config_watch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "measure.h"
#include "rng.h"
#include "stats.h"
#include "trace.h"

int config_watch_init(config_watch *w, backend *b, double startup_tflops, double budget_s)
{
    memset(w, 0, sizeof *w);
    w->b = b;
    /* measure_gemm_ms at the start-up rate (512 where none was measured) */
    int size = startup_tflops > 0
                   ? measure_gemm_size(b, startup_tflops, measure_gemm_ms(budget_s), 128)
                                  : measure_gemm_size(b, 0, 0, 512);
    w->host = malloc((size_t)size * size * sizeof *w->host);
    if (!w->host)
        return -1;
    rng r = {21};
    for (size_t i = 0; i < (size_t)size * size; i++)
        w->host[i] = rng_uniform(&r, -1.0f, 1.0f);
    w->n = size;
    w->gpu = gpu_clocks_open(b->pci_bus_id, w->gpu_why, sizeof w->gpu_why);
    return 0;
}

void config_watch_free(config_watch *w)
{
    free(w->host);
    gpu_clocks_close(w->gpu);
    memset(w, 0, sizeof *w);
}

/* The probe's two inputs (both w->host) in compute storage. */
static int probe_inputs(config_watch *w, void *a, void *bm)
{
    backend *b = w->b;
    size_t count = (size_t)w->n * w->n, f32 = count * sizeof(float);
    if (b->compute_storage == STORAGE_F32) {
        int rc = bk_upload(b, a, w->host, f32);
        return rc ? rc : bk_upload(b, bm, w->host, f32);
    }
    float *staging = NULL;
    int rc = bk_alloc(b, f32, (void **)&staging);
    if (!rc)
        rc = bk_upload(b, staging, w->host, f32);
    if (!rc)
        rc = bk_convert(b, staging, a, b->compute_storage, count);
    if (!rc)
        rc = bk_convert(b, staging, bm, b->compute_storage, count);
    if (!rc)
        rc = b->ops->sync(b);
    bk_free(b, staging, f32);
    return rc;
}

/* One untimed GEMM, then PROBE_REPS, each between its own pair of device
 * timestamps: the fastest in *ms, the spread in *noise_pct. */
static int probe_time(backend *b, const gemm_desc *g, double *ms, double *noise_pct)
{
    bk_timer *t0 = NULL, *t1 = NULL;
    double each[PROBE_REPS];
    int rc = bk_gemm(b, g);
    if (!rc)
        rc = b->ops->sync(b);
    if (!rc)
        rc = b->ops->timer_create(b, &t0);
    if (!rc)
        rc = b->ops->timer_create(b, &t1);
    for (int i = 0; i < PROBE_REPS && !rc; i++) {
        rc = b->ops->timer_record(b, t0);
        if (!rc)
            rc = bk_gemm(b, g);
        if (!rc)
            rc = b->ops->timer_record(b, t1);
        if (!rc)
            rc = b->ops->timer_elapsed_ms(b, t0, t1, &each[i]);
    }
    if (t0)
        b->ops->timer_destroy(b, t0);
    if (t1)
        b->ops->timer_destroy(b, t1);
    if (!rc) {
        qsort(each, PROBE_REPS, sizeof *each, stats_compare_doubles);
        double median = each[PROBE_REPS / 2];
        *ms = each[0];
        *noise_pct = median > 0 ? 100.0 * (median - each[0]) / median : NAN;
    }
    return rc;
}

/* The probe's rate (NAN: it failed) and its noise into *noise_pct. */
static double run_probe(config_watch *w, double *noise_pct)
{
    backend *b = w->b;
    int n = w->n;
    size_t bytes = (size_t)n * n * storage_bytes(b->compute_storage);
    void *a = NULL, *bm = NULL, *c = NULL;
    int rc = bk_alloc(b, bytes, &a);
    if (!rc)
        rc = bk_alloc(b, bytes, &bm);
    if (!rc)
        rc = bk_alloc(b, bytes, &c);
    if (!rc)
        rc = probe_inputs(w, a, bm);
    gemm_desc g = {.m = n, .n = n, .k = n, .alpha = 1.0f, .a = a, .lda = n, .b = bm, .ldb = n,
                   .beta = 0.0f, .c = c, .ldc = n, .ab_storage = b->compute_storage,
                   .c_storage = b->compute_storage};
    double ms = 0;
    if (!rc)
        rc = probe_time(b, &g, &ms, noise_pct);
    bk_free(b, c, bytes);
    bk_free(b, bm, bytes);
    bk_free(b, a, bytes);
    return !rc && ms > 0 ? 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12 : NAN;
}

void config_watch_mark(config_watch *w, watch_mark *m)
{
    memset(m, 0, sizeof *m);
    m->probe_tflops = m->probe_noise_pct = NAN;
    if (!w)
        return;
    if (w->n && w->host) {
        backend *b = w->b;
        size_t cap = b->mem_cap, peak = b->mem_peak;
        uint64_t dispatches = b->dispatches;
        b->mem_cap = 0; /* the probe is ours: outside the user's cap ... */
        m->probe_tflops = run_probe(w, &m->probe_noise_pct);
        b->mem_cap = cap;
        b->mem_peak = peak; /* ... and the row's memory peak */
        b->dispatches = dispatches;
        b->error[0] = '\0'; /* a failed probe leaves no reason behind for the row */
    }
    m->cpu_ok = cpu_sample_now(&m->cpu) == 0;
    gpu_clocks_sample(w->gpu, &m->gpu);
}
