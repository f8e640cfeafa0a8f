#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "model_need.h"

double relative_error(const float *a, const float *b, size_t n)
{
    double diff = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        diff += d * d;
        ref += (double)b[i] * b[i];
    }
    if (ref == 0)
        return diff == 0 ? 0 : INFINITY;
    return sqrt(diff / ref);
}

/* The reference's pieces: the config's micro-batch, so that the check
 * needs no device memory beyond the step's and fits wherever the step does
 * (under a --mem-cap, and where the device's memory is the host's). On a
 * device of its own with no cap, as many examples as its free memory holds
 * the activations of (by the need's arithmetic, the usable share of
 * model_need.h), up to the whole batch: every piece costs a download of the
 * whole gradient and a pass over it in double on the host, which at
 * micro-batch 1 of E 256 on a 134M-parameter model was 256 pieces and a
 * minute on an H200, where one piece takes a second. */
static int reference_chunk(const step_runner *s, int batch)
{
    const backend *b = s->m->b;
    int micro = s->sp.micro;
    if ((b->caps & BK_CAP_SHARES_HOST_MEMORY) || b->mem_cap || !b->mem_total)
        return micro;
    size_t usable = (size_t)(MEMORY_FIT_USABLE_SHARE * (double)b->mem_total);
    size_t room = usable > b->mem_in_use ? usable - b->mem_in_use : 0;
    for (int p = batch; p > micro; p = (p + 1) / 2) {
        memory_need need;
        model_memory_need(&s->m->spec, b->dtype, OPT_SGD, p, p, 0, &need);
        if (!need.saturated && need.activations <= room)
            return p;
    }
    return micro;
}

int gradcheck_first_piece(int chunk, int micro, int count)
{
    return chunk == micro && micro >= 2 && count >= 2 ? micro / 2 : chunk;
}

/* The reference into full: every example of the batch with the full
 * batch's normalisation, in pieces (reference_chunk, the first cut by
 * gradcheck_first_piece; each from zeroed
 * gradients, so no accumulation on the device is trusted), summed on the
 * host in double. Pieces of the micro-batch run in the runner's own
 * activations where it holds them; larger ones in their own, and where
 * those cannot be had after all (BK_OOM), in pieces of the micro-batch.
 * BK_* status. */
static int full_batch_reference(step_runner *s, float *full, float *piece, double *sum)
{
    model *m = s->m;
    backend *b = m->b;
    size_t n = m->n_params, bytes = n * sizeof(float);
    micro_batch_view all = dataset_full_batch(s->d, 0, s->sp.micro);
    int chunk = reference_chunk(s, all.count), rc = BK_OK;
    activations own = {0}, *acts = &s->acts;
    if (acts->capacity < chunk) {
        rc = activations_create(m, chunk, BK_ALLOC_HELD, &own);
        if (rc == BK_OOM && chunk > s->sp.micro) {
            chunk = s->sp.micro;
            rc = acts->capacity < chunk ? activations_create(m, chunk, BK_ALLOC_HELD, &own)
                                        : BK_OK;
        }
        if (own.capacity)
            acts = &own;
    }
    for (size_t i = 0; i < n; i++)
        sum[i] = 0;
    for (int first = 0, len = gradcheck_first_piece(chunk, s->sp.micro, all.count);
         !rc && first < all.count; first += len, len = chunk) {
        micro_batch_view v = all;
        v.first = first;
        v.count = all.count - first < len ? all.count - first : len;
        if ((rc = model_zero_grads(m, s->loss_sum)) || (rc = model_forward(m, acts, &v, s->loss_sum)) ||
            (rc = model_backward(m, acts, &v)) || (rc = bk_download(b, piece, m->grads, bytes)))
            break;
        for (size_t i = 0; i < n; i++)
            sum[i] += piece[i];
    }
    for (size_t i = 0; !rc && i < n; i++)
        full[i] = (float)sum[i];
    if (own.capacity)
        activations_destroy(m, &own, BK_ALLOC_HELD);
    return rc;
}

int grad_check(step_runner *s, double *rel_err, double *loss_sum_out, float *g_window,
               float *g_full)
{
    model *m = s->m;
    backend *b = m->b;
    size_t n = m->n_params, bytes = n * sizeof(float);
    float *window = g_window ? g_window : malloc(bytes);
    float *full = g_full ? g_full : malloc(bytes);
    float *piece = malloc(bytes);
    double *sum = malloc(n * sizeof *sum);
    float loss_sum = 0;
    int rc = BK_OK;
    if (!window || !full || !piece || !sum) {
        snprintf(b->error, sizeof b->error, "out of host memory for the gradient check");
        rc = BK_OOM;
        goto done;
    }
    if ((rc = step_window(s, 0)) || (rc = bk_download(b, window, m->grads, bytes)) ||
        (rc = bk_download(b, &loss_sum, s->loss_sum, sizeof loss_sum)))
        goto done;
    *loss_sum_out = loss_sum;
    if ((rc = full_batch_reference(s, full, piece, sum)))
        goto done;
    *rel_err = relative_error(window, full, n);
done:
    if (window != g_window)
        free(window);
    if (full != g_full)
        free(full);
    free(piece);
    free(sum);
    return rc;
}
