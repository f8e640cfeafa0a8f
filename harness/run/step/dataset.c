/* Synthetic inputs, labels and validity masks; the loss scales of a split
 * from their valid counts. */
#include "dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "split.h"
#include "rng.h"

/* One loss item in four is padding. */
#define VALID_PERCENT 75

/* Bytes of one buffer's x. */
static size_t x_bytes(const dataset *d)
{
    const input_spec *in = &d->input;
    size_t per = in->kind == INPUT_TOKENS ? sizeof(int) : storage_bytes(d->x_storage);
    return (size_t)in->width * (size_t)d->effective_batch * per;
}

static size_t items_of(const dataset *d)
{
    return (size_t)d->effective_batch * (size_t)d->input.loss_items;
}

void dataset_destroy(dataset *d)
{
    backend *b = d->b;
    if (!b)
        return;
    size_t items = items_of(d);
    for (int i = 0; i < d->count; i++) {
        input_buffer *ib = &d->buf[i];
        bk_free(b, ib->x, x_bytes(d));
        bk_free(b, ib->labels, items * sizeof(int));
        bk_free(b, ib->valid, items * sizeof(int));
        bk_free(b, ib->scales, (size_t)d->scale_capacity * sizeof(float));
        free(ib->valid_host);
    }
    memset(d, 0, sizeof *d);
}

/* x of one buffer of features: through an fp32 staging buffer and the
 * backend's convert when the compute storage is narrower. */
static int fill_x(dataset *d, input_buffer *ib, rng *r, void *xh)
{
    backend *b = d->b;
    size_t nx = (size_t)d->input.width * (size_t)d->effective_batch;
    float *f = xh;
    for (size_t i = 0; i < nx; i++)
        f[i] = rng_uniform(r, -1.0f, 1.0f);
    if (d->x_storage == STORAGE_F32)
        return bk_upload(b, ib->x, f, nx * sizeof(float));
    float *staging;
    int rc;
    if ((rc = bk_alloc(b, nx * sizeof(float), (void **)&staging)))
        return rc;
    rc = bk_upload(b, staging, f, nx * sizeof(float));
    if (!rc)
        rc = bk_convert(b, staging, ib->x, d->x_storage, nx);
    if (!rc)
        rc = b->ops->sync(b); /* staging must outlive the conversion */
    bk_free(b, staging, nx * sizeof(float));
    return rc;
}

/* Zipf's law over the vocabulary: token k (0 the most frequent) drawn with
 * probability proportional to 1 / (k + 1), as word frequencies in text
 * are. cdf[k] = P(token <= k). */
static double *zipf_cdf(int vocab)
{
    double *cdf = malloc((size_t)vocab * sizeof *cdf), sum = 0;
    if (!cdf)
        return NULL;
    for (int k = 0; k < vocab; k++)
        cdf[k] = sum += 1.0 / (k + 1);
    for (int k = 0; k < vocab; k++)
        cdf[k] /= sum;
    return cdf;
}

static int zipf_draw(rng *r, const double *cdf, int vocab)
{
    double u = (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    int lo = 0, hi = vocab - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Token data as a language model reads packed documents: each sequence is
 * a stretch of a document whose length (1 to seq tokens, uniform) ends
 * somewhere in the window, the rest padding (token 0, masked out), so
 * sequences, and micro-batches, hold different numbers of valid tokens.
 * Token ids follow Zipf's law; the label of a token is the next token of
 * the document (classes = vocabulary), or where the classes are not the
 * vocabulary, a class drawn uniformly. */
static int fill_packed_tokens(dataset *d, input_buffer *ib, rng *r, const double *cdf, int *ids,
                              int *labels)
{
    const input_spec *in = &d->input;
    int t = in->width, lm = in->classes == in->vocab;
    for (int e = 0; e < d->effective_batch; e++) {
        int len = 1 + rng_below(r, t);
        int *x = ids + (size_t)e * t, *y = labels + (size_t)e * t;
        int *ok = ib->valid_host + (size_t)e * t;
        int next = zipf_draw(r, cdf, in->vocab);
        for (int i = 0; i < t; i++) {
            int cur = next;
            next = zipf_draw(r, cdf, in->vocab);
            ok[i] = i < len;
            x[i] = ok[i] ? cur : 0;
            y[i] = !ok[i] ? 0 : lm ? next : rng_below(r, in->classes);
        }
    }
    int rc = bk_upload(d->b, ib->x, ids, (size_t)t * d->effective_batch * sizeof(int));
    if (!rc)
        rc = bk_upload(d->b, ib->labels, labels, items_of(d) * sizeof(int));
    return rc ? rc : bk_upload(d->b, ib->valid, ib->valid_host, items_of(d) * sizeof(int));
}

/* Fills one buffer of features from the generator: x first, then each
 * loss item's label and validity. */
static int fill_buffer(dataset *d, input_buffer *ib, rng *r, void *xh, int *labels)
{
    backend *b = d->b;
    size_t items = items_of(d);
    int rc = fill_x(d, ib, r, xh);
    if (rc)
        return rc;
    int valid_count = 0;
    for (size_t j = 0; j < items; j++) {
        labels[j] = rng_below(r, d->input.classes);
        ib->valid_host[j] = rng_below(r, 100) < VALID_PERCENT;
        valid_count += ib->valid_host[j];
    }
    if (valid_count == 0)
        ib->valid_host[0] = 1; /* a window always holds a valid item */
    if ((rc = bk_upload(b, ib->labels, labels, items * sizeof(int))))
        return rc;
    return bk_upload(b, ib->valid, ib->valid_host, items * sizeof(int));
}

int dataset_create(backend *b, const input_spec *in, int effective_batch, int buffers,
                   uint64_t seed, dataset *d)
{
    memset(d, 0, sizeof *d);
    d->b = b;
    d->x_storage = b->compute_storage;
    d->input = *in;
    d->effective_batch = effective_batch;
    d->scale_capacity = effective_batch + 1;
    d->ranks = 1;
    size_t items = items_of(d), nx = (size_t)in->width * (size_t)effective_batch;
    void *xh = malloc(nx * (in->kind == INPUT_TOKENS ? sizeof(int) : sizeof(float)));
    int *labels = malloc(items * sizeof *labels);
    int rc = BK_OK;
    if (!xh || !labels) {
        snprintf(b->error, sizeof b->error, "out of host memory for the inputs");
        rc = BK_OOM;
    }
    rng r = {seed ^ 0xda7a5e7ull};
    double *cdf = NULL;
    if (!rc && in->kind == INPUT_TOKENS && !(cdf = zipf_cdf(in->vocab))) {
        snprintf(b->error, sizeof b->error, "out of host memory for the token distribution");
        rc = BK_OOM;
    }
    for (int i = 0; i < buffers && !rc; i++) {
        input_buffer *ib = &d->buf[i];
        d->count = i + 1;
        ib->valid_host = calloc(items, sizeof(int));
        if (!ib->valid_host) {
            snprintf(b->error, sizeof b->error, "out of host memory for the masks");
            rc = BK_OOM;
            break;
        }
        if ((rc = bk_alloc(b, x_bytes(d), &ib->x)) ||
            (rc = bk_alloc(b, items * sizeof(int), (void **)&ib->labels)) ||
            (rc = bk_alloc(b, items * sizeof(int), (void **)&ib->valid)) ||
            (rc = bk_alloc(b, (size_t)d->scale_capacity * sizeof(float),
                           (void **)&ib->scales)))
            break;
        rc = in->kind == INPUT_TOKENS ? fill_packed_tokens(d, ib, &r, cdf, xh, labels)
                                      : fill_buffer(d, ib, &r, xh, labels);
    }
    free(cdf);
    free(xh);
    free(labels);
    if (rc) {
        dataset_destroy(d);
        return rc;
    }
    size_t per = x_bytes(d) + 2 * items * sizeof(int) + (size_t)d->scale_capacity * sizeof(float);
    d->bytes = per * (size_t)buffers;
    return BK_OK;
}

int dataset_valid_count(const dataset *d, int buf, int first, int count)
{
    const int *valid = d->buf[buf].valid_host;
    size_t per = (size_t)d->input.loss_items;
    int n = 0;
    for (size_t j = (size_t)first * per; j < (size_t)(first + count) * per; j++)
        n += valid[j];
    return n;
}

void dataset_set_shard(dataset *d, int rank, int ranks)
{
    d->rank = rank;
    d->ranks = ranks;
}

/* The split of the current micro-batch size over this dataset's ranks
 * (validated before the sweep: a split that fails here is not run). */
static split shard_of(const dataset *d, int micro)
{
    split sp;
    char why[200];
    if (split_make_sharded(d->effective_batch, micro, d->ranks, &sp, why, sizeof why))
        split_make(d->effective_batch, micro, 1, &sp, why, sizeof why);
    return sp;
}

int dataset_set_split(dataset *d, int micro, reduction r)
{
    split sp = shard_of(d, micro);
    /* Every rank's micro-batches of one window, k by k and rank by rank. */
    int n = sp.accum * sp.devices;
    int *valid = malloc((size_t)n * sizeof *valid);
    float *all = malloc(((size_t)n + 1) * sizeof *all);
    float *scales = malloc(((size_t)sp.accum + 1) * sizeof *scales);
    int rc = BK_OK;
    if (!valid || !all || !scales) {
        snprintf(d->b->error, sizeof d->b->error, "out of host memory for loss scales");
        rc = BK_OOM;
    }
    for (int i = 0; i < d->count && !rc; i++) {
        for (int k = 0; k < sp.accum; k++)
            for (int q = 0; q < sp.devices; q++) {
                int first, count;
                split_shard(&sp, q, k, &first, &count);
                valid[k * sp.devices + q] = dataset_valid_count(d, i, first, count);
            }
        reduction_scales(r, valid, n, all);
        for (int k = 0; k < sp.accum; k++)
            scales[k] = all[k * sp.devices + d->rank];
        scales[sp.accum] = all[n];
        rc = bk_upload(d->b, d->buf[i].scales, scales, ((size_t)sp.accum + 1) * sizeof *scales);
    }
    free(valid);
    free(all);
    free(scales);
    return rc;
}

micro_batch_view dataset_micro(const dataset *d, int buf, int micro, int k)
{
    const input_buffer *ib = &d->buf[buf];
    split sp = shard_of(d, micro);
    micro_batch_view v = {.x = ib->x, .labels = ib->labels, .valid = ib->valid,
                          .scale = ib->scales + k};
    split_shard(&sp, d->rank, k, &v.first, &v.count);
    return v;
}

micro_batch_view dataset_full_batch(const dataset *d, int buf, int micro)
{
    const input_buffer *ib = &d->buf[buf];
    int accum = shard_of(d, micro).accum;
    micro_batch_view v = {
        .x = ib->x, .labels = ib->labels, .valid = ib->valid, .scale = ib->scales + accum,
        .first = 0, .count = d->effective_batch,
    };
    return v;
}
