/* The buffers of an op check, on both sides, in either storage. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "elementwise.h"
#include "gpu_check.h"

/* Fills a fresh buffer with all-ones bytes: NaN in fp32 (0xffffffff) and
 * in bf16 (0xffff), so that an output element an op never writes reads as
 * NaN and fails its check, instead of passing as the zero a new buffer
 * often holds. Inputs are uploaded over it. */
static int poison(backend *b, void *p, size_t bytes)
{
    static unsigned char ones[1 << 20];
    if (!ones[0])
        memset(ones, 0xff, sizeof ones);
    for (size_t off = 0; off < bytes; off += sizeof ones) {
        size_t len = bytes - off < sizeof ones ? bytes - off : sizeof ones;
        int rc = bk_upload(b, (char *)p + off, ones, len);
        if (rc)
            return rc;
    }
    return BK_OK;
}

int dev_alloc(scratch *sc, int side, size_t bytes, void **out)
{
    backend *b = sc->b[side];
    *out = NULL;
    if (sc->n_dev[side] == SCRATCH_MAX) {
        snprintf(b->error, sizeof b->error, "gpu-check: too many buffers in one check");
        return BK_ERROR;
    }
    int rc = bk_alloc(b, bytes, out);
    if (rc == BK_OK) {
        sc->dev[side][sc->n_dev[side]] = *out;
        sc->bytes[side][sc->n_dev[side]++] = bytes;
        rc = poison(b, *out, bytes);
    }
    return rc;
}

float *host_alloc(scratch *sc, size_t n)
{
    float *p = sc->n_host < SCRATCH_MAX ? malloc((n ? n : 1) * sizeof *p) : NULL;
    if (!p)
        sc->host_failed = 1;
    else
        sc->host[sc->n_host++] = p;
    return p;
}

/* x rounded to TF32 (10 mantissa bits, to nearest even): a value the tensor
 * cores take as it is, whether they round or truncate. */
static float round_tf32(float x)
{
    union { float f; uint32_t u; } v = {x};
    if ((v.u & 0x7f800000u) != 0x7f800000u) {
        v.u += 0x0fffu + ((v.u >> 13) & 1u);
        v.u &= ~0x1fffu;
    }
    return v.f;
}

float *host_random_as(scratch *sc, rng *r, size_t n, float lo, float hi, storage s, int tf32)
{
    float *v = host_alloc(sc, n);
    for (size_t i = 0; v && i < n; i++) {
        v[i] = rng_uniform(r, lo, hi);
        if (s == STORAGE_BF16)
            v[i] = ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(v[i]));
        if (tf32)
            v[i] = round_tf32(v[i]);
    }
    return v;
}

float *host_random(scratch *sc, rng *r, size_t n, float lo, float hi, storage s)
{
    return host_random_as(sc, r, n, lo, hi, s, 0);
}

void scratch_free(scratch *sc)
{
    for (int side = 0; side < 2; side++)
        for (int i = sc->n_dev[side] - 1; i >= 0; i--)
            bk_free(sc->b[side], sc->dev[side][i], sc->bytes[side][i]);
    for (int i = 0; i < sc->n_host; i++)
        free(sc->host[i]);
    memset(sc, 0, sizeof *sc);
}

int put_into(backend *b, storage s, const float *host, size_t n, void *dev)
{
    if (s == STORAGE_F32)
        return bk_upload(b, dev, host, n * sizeof(float));
    unsigned short *bits = malloc(n * sizeof *bits);
    if (!bits) {
        snprintf(b->error, sizeof b->error, "gpu-check: out of host memory");
        return BK_OOM;
    }
    for (size_t i = 0; i < n; i++)
        bits[i] = ew_f32_to_bf16_bits(host[i]);
    int rc = bk_upload(b, dev, bits, n * sizeof *bits);
    if (!rc)
        rc = b->ops->sync(b); /* bits must outlive the copy */
    free(bits);
    return rc;
}

int put(scratch *sc, int side, storage s, const float *host, size_t n, void **out)
{
    int rc = dev_alloc(sc, side, n * storage_bytes(s), out);
    return rc ? rc : put_into(sc->b[side], s, host, n, *out);
}

int get(backend *b, storage s, const void *dev, size_t n, float *host)
{
    if (s == STORAGE_F32)
        return bk_download(b, host, dev, n * sizeof(float));
    unsigned short *bits = malloc(n * sizeof *bits);
    if (!bits) {
        snprintf(b->error, sizeof b->error, "gpu-check: out of host memory");
        return BK_OOM;
    }
    int rc = bk_download(b, bits, dev, n * sizeof *bits);
    for (size_t i = 0; !rc && i < n; i++)
        host[i] = ew_bf16_bits_to_f32(bits[i]);
    free(bits);
    return rc;
}
