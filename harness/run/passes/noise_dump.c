/* The noise pass's windows drawn again and their gradient over all of
 * them (noise_dump.h), on the backend table as the pass runs. */
#include "noise_dump.h"

#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "noise_pass.h"
#include "noise_scale.h"

/* Window `index` into out->windows when the estimate used it: the rule is
 * noise_scale.h's, on the small batches' valid counts as the pass met them. */
static int draw_window(model *m, const split *sp, uint64_t seed, int index, noise_dump *out)
{
    dataset *d = &out->windows[out->n_windows];
    int rc = noise_window_data(m, sp, seed, index, d);
    if (rc)
        return rc;
    noise_window w = {0};
    for (int k = 0; k < sp->accum; k++) {
        micro_batch_view v = dataset_micro(d, 0, sp->micro, k);
        noise_window_add(&w, 0, dataset_valid_count(d, 0, v.first, v.count));
    }
    if (!noise_window_usable(&w)) {
        dataset_destroy(d);
        return BK_OK;
    }
    out->valid += (int)w.valid;
    out->n_windows++;
    return BK_OK;
}

/* Every small batch of every window into one gradient, each scaled by
 * 1 / (all the windows' valid items): the mean over all of them. */
static int accumulate(model *m, const split *sp, noise_dump *out)
{
    backend *b = m->b;
    activations acts = {0};
    float *scale = NULL, *loss_sum = NULL, inv = 1.0f / (float)out->valid, loss = 0;
    int rc = bk_alloc(b, sizeof(float), (void **)&scale);
    if (!rc)
        rc = bk_alloc(b, sizeof(float), (void **)&loss_sum);
    if (!rc)
        rc = activations_create(m, sp->micro, BK_ALLOC_HELD, &acts);
    if (!rc)
        rc = bk_upload(b, scale, &inv, sizeof inv);
    if (!rc)
        rc = model_zero_grads(m, loss_sum);
    for (int i = 0; i < out->n_windows && !rc; i++)
        for (int k = 0; k < sp->accum && !rc; k++) {
            dataset *d = &out->windows[i];
            micro_batch_view v = dataset_micro(d, 0, sp->micro, k);
            if (dataset_valid_count(d, 0, v.first, v.count) == 0)
                continue; /* as the pass: padding alone adds nothing */
            v.scale = scale;
            v.first_of_window = 0; /* zeroed once above: every one adds */
            rc = model_forward(m, &acts, &v, loss_sum);
            if (!rc)
                rc = model_backward(m, &acts, &v);
        }
    if (!rc)
        rc = bk_download(b, out->grad, m->grads, m->n_params * sizeof(float));
    if (!rc)
        rc = bk_download(b, &loss, loss_sum, sizeof loss);
    out->loss_sum = loss;
    if (acts.capacity)
        activations_destroy(m, &acts, BK_ALLOC_HELD);
    bk_free(b, scale, sizeof(float));
    bk_free(b, loss_sum, sizeof(float));
    return rc;
}

static int build_uncapped(model *m, const split *sp, uint64_t seed, int windows_complete,
                          noise_dump *out)
{
    *out = (noise_dump){0};
    out->windows = calloc(windows_complete > 0 ? (size_t)windows_complete : 1,
                          sizeof *out->windows);
    out->grad = malloc(m->n_params * sizeof *out->grad);
    int rc = BK_OK;
    if (!out->windows || !out->grad) {
        snprintf(m->b->error, sizeof m->b->error, "out of host memory for the noise dump");
        rc = BK_OOM;
    }
    for (int i = 0; i < windows_complete && !rc; i++)
        rc = draw_window(m, sp, seed, i, out);
    if (!rc && out->valid == 0) {
        snprintf(m->b->error, sizeof m->b->error, "the noise pass's windows hold no valid item");
        rc = BK_ERROR;
    }
    if (!rc)
        rc = accumulate(m, sp, out);
    if (rc)
        noise_dump_free(out);
    return rc;
}

/* A check's memory, as the pass's: outside the cap (noise_pass_run). */
int noise_dump_build(model *m, const split *sp, uint64_t seed, int windows_complete,
                     noise_dump *out)
{
    size_t cap = m->b->mem_cap;
    m->b->mem_cap = 0;
    int rc = build_uncapped(m, sp, seed, windows_complete, out);
    m->b->mem_cap = cap;
    return rc;
}

void noise_dump_free(noise_dump *nd)
{
    for (int i = 0; i < nd->n_windows; i++)
        dataset_destroy(&nd->windows[i]);
    free(nd->windows);
    free(nd->grad);
    *nd = (noise_dump){0};
}
