#include "npy.h"

#include <stdio.h>
#include <string.h>

#include "atomic_file.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c writes the host's floats as they are: '<f4' needs a little-endian host"
#endif

int npy_header(npy_dtype type, const int64_t *shape, int ndim, char *out, size_t cap)
{
    if (ndim < 1 || ndim > NPY_MAX_DIMS || cap < 128)
        return -1;
    char dims[160];
    size_t used = 0;
    for (int i = 0; i < ndim; i++)
        used += (size_t)snprintf(dims + used, sizeof dims - used, "%lld,%s",
                                 (long long)shape[i], i + 1 < ndim ? " " : "");
    if (ndim > 1)
        dims[used - 1] = '\0'; /* (2, 3) but (5,) */
    /* The preamble: magic, version 1.0, the header's length (2 bytes, LE). */
    char dict[256];
    int dict_len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, "
                            "'shape': (%s), }", type == NPY_F32 ? "<f4" : "<i4", dims);
    size_t total = 10 + (size_t)dict_len + 1; /* + '\n' */
    size_t padded = (total + 63) / 64 * 64;
    if (padded >= cap)
        return -1;
    size_t header_len = padded - 10;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)(header_len & 0xff);
    out[9] = (char)(header_len >> 8);
    memcpy(out + 10, dict, (size_t)dict_len);
    memset(out + 10 + dict_len, ' ', padded - total);
    out[padded - 1] = '\n';
    out[padded] = '\0';
    return (int)padded;
}

typedef struct npy_job {
    const char *header;
    size_t header_len;
    const void *data;
    size_t bytes;
} npy_job;

static int write_npy(FILE *f, void *ctx, char *why, size_t n)
{
    (void)why;
    (void)n;
    const npy_job *j = ctx;
    fwrite(j->header, 1, j->header_len, f);
    if (j->bytes)
        fwrite(j->data, 1, j->bytes, f);
    return 0; /* a failed write is caught by ferror */
}

int npy_write(const char *path, npy_dtype type, const int64_t *shape, int ndim,
              const void *data, char *why, size_t n)
{
    char header[512];
    int len = npy_header(type, shape, ndim, header, sizeof header);
    if (len < 0) {
        snprintf(why, n, "cannot write %s: %d dimensions (at most %d)", path, ndim,
                 NPY_MAX_DIMS);
        return -1;
    }
    size_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= (size_t)shape[i];
    npy_job j = {header, (size_t)len, data, count * 4};
    return atomic_write_file(path, write_npy, &j, why, n);
}
