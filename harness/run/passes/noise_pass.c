/* The noise pass (noise_pass.h) on the backend table. */
#include "noise_pass.h"

#include <stdio.h>

#include "dataset_learnable.h"
#include "dispatch.h"
#include "dp_check.h"
#include "trace.h"

typedef struct noise_run {
    model *m;
    const split *sp;
    activations acts;
    float *scale, *loss_sum; /* device floats */
    /* Device: the window's sum of its small batches' gradients, each
     * weighted by its valid items (their sum, not their mean). fp32, as
     * the all-reduce sums it over the ranks: K terms add K roundings of
     * 6e-8, far under the differences of norms the estimate is made of. */
    float *window_sum;
    double *sq;              /* device: one squared norm */
    uint64_t t0;             /* the pass's start (trace_now_ns) */
    int complete;            /* windows run to their end */
} noise_run;

int noise_window_data(model *m, const split *sp, uint64_t seed, int index, dataset *d)
{
    input_spec in;
    model_input(&m->spec, &in);
    uint64_t window_seed = seed ^ (0x5eed0000ull + (uint64_t)index * 0x9e3779b97f4a7c15ull);
    return dataset_create_learnable(m->b, &in, sp->global, 1, seed, window_seed, 0, d);
}

/* |x|^2 of an fp32 device vector, summed on the device: one double comes
 * back, never the vector. */
static int device_sq(noise_run *r, const float *x, size_t n, double *out)
{
    backend *b = r->m->b;
    int rc = bk_sum_squares(b, x, n, r->sq);
    return rc ? rc : bk_download(b, out, r->sq, sizeof *out);
}

/* Small batch k of the window in d: its own mean gradient, its squared
 * norm into w and its valid-weighted sum into the window's. */
static int small_batch(noise_run *r, dataset *d, int k, noise_window *w)
{
    model *m = r->m;
    micro_batch_view v = dataset_micro(d, 0, r->sp->micro, k);
    int valid = dataset_valid_count(d, 0, v.first, v.count);
    if (valid == 0)
        return BK_OK;
    float inv = 1.0f / (float)valid;
    v.scale = r->scale;
    v.first_of_window = 1;
    int rc = bk_upload(m->b, r->scale, &inv, sizeof inv);
    if (!rc)
        rc = model_zero_grads(m, r->loss_sum);
    if (!rc)
        rc = model_forward(m, &r->acts, &v, r->loss_sum);
    if (!rc)
        rc = model_backward(m, &r->acts, &v);
    /* valid is exact in a float up to 2^24 items */
    if (!rc)
        rc = bk_axpy(m->b, r->window_sum, (float)valid, m->grads, m->n_params);
    double sq = 0;
    if (!rc)
        rc = device_sq(r, m->grads, m->n_params, &sq);
    if (!rc)
        noise_window_add(w, sq, valid);
    return rc;
}

/* Whether this rank would stop after window `index`: time_s spent and
 * NOISE_WINDOWS_MIN windows run. */
static int time_up(const noise_run *r, const noise_pass_options *o, int index)
{
    double elapsed = (double)(trace_now_ns() - r->t0) / 1e9;
    return o->time_s > 0 && index + 1 >= NOISE_WINDOWS_MIN && elapsed >= o->time_s;
}

/* The window's totals over the ranks: every rank's small batches, how many
 * ranks would stop here and how many cut the window short (any rank's stop
 * is every rank's, so all run the same windows and none waits in a
 * collective the others left; a window any rank cut short is no window).
 * The window's sum is summed on the device, where it is. */
static int sum_ranks(comm *c, noise_window *w, float *window_sum, size_t n, int *stop,
                     int *cut)
{
    double v[6] = {w->small_sq_sum, w->inv_valid_sum, w->smalls, w->valid, *stop, *cut};
    if (c->ops->host_allreduce(c, v, 6, COMM_SUM))
        return BK_ERROR;
    *w = (noise_window){.small_sq_sum = v[0], .inv_valid_sum = v[1], .smalls = (int)v[2],
                        .valid = v[3]};
    *stop = v[4] > 0;
    *cut = v[5] > 0;
    if (*cut) /* every rank skips the sum alike: the vote above is shared */
        return BK_OK;
    int rc = c->ops->allreduce_start(c, window_sum, n);
    return rc ? rc : c->ops->wait_all(c);
}

/* Window `index` into ns; *stop: the pass ends after it. A signal is
 * looked at after every small batch (a window of a large model takes
 * seconds): the window it cuts short is dropped, and the pass ends. */
static int one_window(noise_run *r, const noise_pass_options *o, int index, noise_scale *ns,
                      int *stop)
{
    model *m = r->m;
    dataset d;
    int rc = noise_window_data(m, r->sp, o->seed, index, &d);
    if (rc)
        return rc;
    if (o->comm)
        dataset_set_shard(&d, o->comm->rank, o->comm->size);
    noise_window w = {0};
    rc = bk_zero(m->b, r->window_sum, m->n_params * sizeof(float));
    int k = 0;
    for (; k < r->sp->accum && !rc && !(o->stop && *o->stop); k++)
        rc = small_batch(r, &d, k, &w);
    dataset_destroy(&d);
    int cut = k < r->sp->accum;
    *stop = cut || time_up(r, o, index);
    if (!rc && o->comm)
        rc = sum_ranks(o->comm, &w, r->window_sum, m->n_params, stop, &cut);
    if (!rc && !cut) {
        r->complete++;
        /* |sum_j n_j g_j / N|^2: the window's mean gradient's norm */
        double sq = 0;
        rc = device_sq(r, r->window_sum, m->n_params, &sq);
        w.window_sq = w.valid > 0 ? sq / (w.valid * w.valid) : 0;
        if (!rc)
            noise_scale_add(ns, &w); /* a window of one small batch adds nothing */
    }
    return rc;
}

static int noise_pass_uncapped(model *m, const split *sp, const noise_pass_options *o,
                               noise_result *out)
{
    backend *b = m->b;
    noise_run r = {.m = m, .sp = sp};
    noise_scale ns = {0};
    int rc = BK_OK;
    if (noise_scale_init(&ns, o->windows)) {
        snprintf(b->error, sizeof b->error, "out of host memory for the noise scale");
        rc = BK_OOM;
    }
    if (!rc && !(rc = bk_alloc(b, sizeof(float), (void **)&r.scale)) &&
        !(rc = bk_alloc(b, sizeof(float), (void **)&r.loss_sum)) &&
        !(rc = bk_alloc(b, sizeof(double), (void **)&r.sq)) &&
        !(rc = bk_alloc(b, m->n_params * sizeof(float), (void **)&r.window_sum)))
        rc = activations_create(m, sp->micro, BK_ALLOC_HELD, &r.acts);
    if (o->comm) /* every rank runs the windows, or none (they all-reduce) */
        rc = dp_agree_status(o->comm, rc);
    r.t0 = trace_now_ns();
    int run = 0, stop = 0;
    for (; run < o->windows && !rc && !stop && sp->accum * sp->devices > 1; run++)
        rc = one_window(&r, o, run, &ns, &stop);
    noise_scale_result(&ns, out);
    out->windows_run = run;
    out->windows_complete = r.complete;
    if (r.acts.capacity)
        activations_destroy(m, &r.acts, BK_ALLOC_HELD);
    bk_free(b, r.scale, sizeof(float));
    bk_free(b, r.loss_sum, sizeof(float));
    bk_free(b, r.sq, sizeof(double));
    bk_free(b, r.window_sum, m->n_params * sizeof(float));
    noise_scale_free(&ns);
    return rc;
}

/* The pass is a check, not the step: its memory (its data, activations
 * and the window's sum) is outside the cap, and never in the row's peak (counted
 * from the timed steps). A device too full for it still stops it: the row
 * then says so and is measured all the same. */
int noise_pass_run(model *m, const split *sp, const noise_pass_options *o, noise_result *out)
{
    backend *b = m->b;
    size_t cap = b->mem_cap;
    b->mem_cap = 0;
    int rc = noise_pass_uncapped(m, sp, o, out);
    b->mem_cap = cap;
    return rc;
}
