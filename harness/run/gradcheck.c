#include "gradcheck.h"

#include <math.h>
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

int grad_check(step_runner *s, double *rel_err, double *loss_sum_out, float *g_window,
               float *g_full)
{
    model *m = s->m;
    backend *b = m->b;
    size_t n = m->n_params, bytes = n * sizeof(float);
    float *window = g_window ? g_window : malloc(bytes);
    float *full = g_full ? g_full : malloc(bytes);
    float loss_sum = 0;
    activations acts = {0};
    int rc = BK_OK;
    if (!window || !full) {
        snprintf(b->error, sizeof b->error, "out of host memory for the gradient check");
        rc = BK_OOM;
        goto done;
    }
    if ((rc = step_window(s, 0)) || (rc = bk_download(b, window, m->grads, bytes)) ||
        (rc = bk_download(b, &loss_sum, s->loss_sum, sizeof loss_sum)))
        goto done;
    *loss_sum_out = loss_sum;

    /* The reference: all E examples in one pass, normalised by the valid
     * examples of the whole batch. */
    micro_batch_view all = dataset_full_batch(s->d, 0, s->sp.micro);
    if ((rc = activations_create(m, s->d->effective_batch, BK_ALLOC_HELD, &acts)) ||
        (rc = model_zero_grads(m, s->loss_sum)) ||
        (rc = model_forward(m, &acts, &all, s->loss_sum)) ||
        (rc = model_backward(m, &acts, &all)) || (rc = bk_download(b, full, m->grads, bytes)))
        goto done;
    *rel_err = relative_error(window, full, n);
done:
    if (acts.capacity)
        activations_destroy(m, &acts, BK_ALLOC_HELD);
    if (window != g_window)
        free(window);
    if (full != g_full)
        free(full);
    return rc;
}
