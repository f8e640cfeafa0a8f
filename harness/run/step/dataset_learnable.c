/* Learnable data (dataset_learnable.h): a teacher network's labels, or a
 * Markov source's tokens, written over the buffers dataset_create made. */
#include "dataset_learnable.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "rng.h"

#define TEACHER_HIDDEN 16
#define SUCCESSORS 4
#define VALID_PERCENT 75

typedef struct host_buffer {
    float *x;   /* features, width per example */
    int *ids;   /* tokens, width per example */
    int *labels, *valid;
} host_buffer;

static const int SUCCESSOR_PERCENT[SUCCESSORS] = {55, 25, 12, 8};

/* The teacher's label of one example: argmax of W2 tanh(W1 x). */
static int teacher_label(const float *w, int width, int classes, const float *x)
{
    float h[TEACHER_HIDDEN];
    for (int j = 0; j < TEACHER_HIDDEN; j++) {
        float z = 0;
        for (int i = 0; i < width; i++)
            z += w[j * width + i] * x[i];
        h[j] = tanhf(z);
    }
    const float *w2 = w + TEACHER_HIDDEN * width;
    int best = 0;
    float top = -INFINITY;
    for (int c = 0; c < classes; c++) {
        float z = 0;
        for (int j = 0; j < TEACHER_HIDDEN; j++)
            z += w2[c * TEACHER_HIDDEN + j] * h[j];
        if (z > top) {
            top = z;
            best = c;
        }
    }
    return best;
}

/* The teacher's weights (or the source's successor table) from `source`. */
static void *make_source(const input_spec *in, uint64_t source)
{
    rng r = {source ^ 0x7eac4e25ull};
    if (in->kind == INPUT_TOKENS) {
        int *next = malloc((size_t)in->vocab * SUCCESSORS * sizeof *next);
        for (int i = 0; next && i < in->vocab * SUCCESSORS; i++)
            next[i] = rng_below(&r, in->vocab);
        return next;
    }
    size_t n = (size_t)TEACHER_HIDDEN * ((size_t)in->width + (size_t)in->classes);
    float *w = malloc(n * sizeof *w);
    /* uniform with the variance 3 / fan-in: pre-activations of order 1 */
    float a1 = 3.0f / sqrtf((float)in->width), a2 = 3.0f / sqrtf((float)TEACHER_HIDDEN);
    for (size_t i = 0; w && i < n; i++)
        w[i] = rng_uniform(&r, -1, 1) * (i < (size_t)TEACHER_HIDDEN * in->width ? a1 : a2);
    return w;
}

static void fill_features(const input_spec *in, int e_count, const float *teacher, rng *r,
                          host_buffer *h)
{
    int valid = 0;
    for (int e = 0; e < e_count; e++) {
        float *x = h->x + (size_t)e * in->width;
        for (int i = 0; i < in->width; i++)
            x[i] = rng_uniform(r, -1.0f, 1.0f);
        h->labels[e] = teacher_label(teacher, in->width, in->classes, x);
        h->valid[e] = rng_below(r, 100) < VALID_PERCENT;
        valid += h->valid[e];
    }
    if (!valid)
        h->valid[0] = 1; /* a window always holds a valid item */
}

static int markov_next(const int *next, int cur, rng *r)
{
    int u = rng_below(r, 100), j = 0;
    while (j < SUCCESSORS - 1 && u >= SUCCESSOR_PERCENT[j])
        u -= SUCCESSOR_PERCENT[j++];
    return next[cur * SUCCESSORS + j];
}

static void fill_learnable_tokens(const input_spec *in, int e_count, const int *next, rng *r,
                                  host_buffer *h)
{
    int t = in->width, lm = in->classes == in->vocab;
    for (int e = 0; e < e_count; e++) {
        int len = 1 + rng_below(r, t), cur = rng_below(r, in->vocab);
        for (int i = 0; i < t; i++) {
            size_t j = (size_t)e * t + i;
            int nxt = markov_next(next, cur, r);
            h->valid[j] = i < len;
            h->ids[j] = h->valid[j] ? cur : 0;
            h->labels[j] = !h->valid[j] ? 0 : lm ? nxt : cur % in->classes;
            cur = nxt;
        }
    }
}

/* Reverses the examples (of `per` elements of `size` bytes each) inside
 * every block of `block` examples. */
static void reverse_blocks(void *data, int e_count, size_t per, size_t size, int block)
{
    size_t stride = per * size;
    char tmp[4096], *p = data;
    for (int lo = 0; lo < e_count; lo += block) {
        int hi = (lo + block < e_count ? lo + block : e_count) - 1;
        for (int a = lo, z = hi; a < z; a++, z--)
            for (size_t off = 0; off < stride; off += sizeof tmp) {
                size_t len = stride - off < sizeof tmp ? stride - off : sizeof tmp;
                memcpy(tmp, p + a * stride + off, len);
                memcpy(p + a * stride + off, p + z * stride + off, len);
                memcpy(p + z * stride + off, tmp, len);
            }
    }
}

/* Features in the compute storage: through an fp32 staging buffer and the
 * backend's convert when it is narrower (as dataset.c does). */
static int upload_features(backend *b, storage st, void *dst, const float *x, size_t n)
{
    if (st == STORAGE_F32)
        return bk_upload(b, dst, x, n * sizeof(float));
    float *staging;
    int rc = bk_alloc(b, n * sizeof(float), (void **)&staging);
    if (rc)
        return rc;
    rc = bk_upload(b, staging, x, n * sizeof(float));
    if (!rc)
        rc = bk_convert(b, staging, dst, st, n);
    if (!rc)
        rc = b->ops->sync(b); /* staging must outlive the conversion */
    bk_free(b, staging, n * sizeof(float));
    return rc;
}

static int upload_buffer(dataset *d, input_buffer *ib, host_buffer *h, int reverse_block)
{
    const input_spec *in = &d->input;
    int e = d->effective_batch;
    size_t items = (size_t)e * in->loss_items, nx = (size_t)e * in->width;
    int tokens = in->kind == INPUT_TOKENS;
    if (reverse_block > 0) {
        reverse_blocks(tokens ? (void *)h->ids : (void *)h->x, e, in->width,
                       tokens ? sizeof(int) : sizeof(float), reverse_block);
        reverse_blocks(h->labels, e, in->loss_items, sizeof(int), reverse_block);
        reverse_blocks(h->valid, e, in->loss_items, sizeof(int), reverse_block);
    }
    memcpy(ib->valid_host, h->valid, items * sizeof(int));
    int rc = tokens ? bk_upload(d->b, ib->x, h->ids, nx * sizeof(int))
                    : upload_features(d->b, d->x_storage, ib->x, h->x, nx);
    if (!rc)
        rc = bk_upload(d->b, ib->labels, h->labels, items * sizeof(int));
    return rc ? rc : bk_upload(d->b, ib->valid, h->valid, items * sizeof(int));
}

/* Fills every buffer of d with windows drawn from `seed` (buffer i from
 * its own stream), the teacher or source from `source`. BK_* status. */
static int fill_all(dataset *d, uint64_t source, uint64_t seed, int reverse_block)
{
    backend *b = d->b;
    const input_spec *in = &d->input;
    int effective_batch = d->effective_batch, rc = BK_OK;
    size_t items = (size_t)effective_batch * in->loss_items;
    size_t nx = (size_t)effective_batch * in->width;
    int tokens = in->kind == INPUT_TOKENS;
    host_buffer h = {
        .x = tokens ? NULL : malloc(nx * sizeof(float)),
        .ids = tokens ? malloc(nx * sizeof(int)) : NULL,
        .labels = malloc(items * sizeof(int)), .valid = malloc(items * sizeof(int)),
    };
    void *src = make_source(in, source);
    if (!(tokens ? (void *)h.ids : (void *)h.x) || !h.labels || !h.valid || !src) {
        snprintf(b->error, sizeof b->error, "out of host memory for the learnable data");
        rc = BK_OOM;
    }
    for (int i = 0; i < d->count && !rc; i++) {
        rng r = {seed + (uint64_t)i * 0x9e3779b97f4a7c15ull};
        if (tokens)
            fill_learnable_tokens(in, effective_batch, src, &r, &h);
        else
            fill_features(in, effective_batch, src, &r, &h);
        rc = upload_buffer(d, &d->buf[i], &h, reverse_block);
    }
    free(h.x);
    free(h.ids);
    free(h.labels);
    free(h.valid);
    free(src);
    return rc;
}

int dataset_create_learnable(backend *b, const input_spec *in, int effective_batch,
                             int buffers, uint64_t source, uint64_t seed, int reverse_block,
                             dataset *d)
{
    int rc = dataset_create(b, in, effective_batch, buffers, seed, d);
    if (rc)
        return rc;
    rc = fill_all(d, source, seed, reverse_block);
    if (rc)
        dataset_destroy(d);
    return rc;
}

int dataset_refill_learnable(dataset *d, uint64_t source, uint64_t seed, int reverse_block)
{
    return fill_all(d, source, seed, reverse_block);
}
