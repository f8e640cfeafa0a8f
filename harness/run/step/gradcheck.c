#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"

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

/* The reference into full: every example of the batch with the full
 * batch's normalisation, in pieces of at most the config's micro-batch
 * (each from zeroed gradients, so no accumulation on the device is
 * trusted), summed on the host in double. The pieces run in the runner's
 * own activations where it holds them: the check needs no device memory
 * beyond the step's, so it fits wherever the step does. BK_* status. */
static int full_batch_reference(step_runner *s, float *full, float *piece, double *sum)
{
    model *m = s->m;
    backend *b = m->b;
    size_t n = m->n_params, bytes = n * sizeof(float);
    int chunk = s->sp.micro, rc = BK_OK;
    activations own = {0}, *acts = &s->acts;
    if (acts->capacity < chunk) {
        rc = activations_create(m, chunk, BK_ALLOC_HELD, &own);
        acts = &own;
    }
    micro_batch_view all = dataset_full_batch(s->d, 0, s->sp.micro);
    for (size_t i = 0; i < n; i++)
        sum[i] = 0;
    for (int first = 0; !rc && first < all.count; first += chunk) {
        micro_batch_view v = all;
        v.first = first;
        v.count = all.count - first < chunk ? all.count - first : chunk;
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
