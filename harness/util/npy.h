/* NumPy .npy files (format 1.0, little-endian, C order), written whole or
 * not at all (atomic_file.h): what any framework reads with numpy.load. */
#ifndef ACCUBENCH_NPY_H
#define ACCUBENCH_NPY_H

#include <stddef.h>
#include <stdint.h>

typedef enum npy_dtype { NPY_F32 = 0, NPY_I32 = 1 } npy_dtype;

#define NPY_MAX_DIMS 4

/* Writes `path`: an array of `ndim` (1 to NPY_MAX_DIMS) dimensions `shape`
 * whose elements, row-major, are `data` (4 bytes each). Returns 0, or -1
 * with a one-line reason. */
int npy_write(const char *path, npy_dtype type, const int64_t *shape, int ndim,
              const void *data, char *why, size_t why_len);

/* The header's text for the array ("{'descr': '<f4', ...}" padded so the
 * data starts on a 64-byte boundary, ending in '\n'), preamble included:
 * returns its length (at most cap - 1, NUL-terminated), or -1. */
int npy_header(npy_dtype type, const int64_t *shape, int ndim, char *out, size_t cap);

#endif
