/* cuBLAS and cuBLASLt, opened when the CUDA backend starts, not when the
 * program does.
 *
 * Linked directly, the two libraries cost every start of the program about
 * 70 ms of the loader's time (cuBLASLt alone is hundreds of MB of
 * relocations), on the CPU backend and for `accubench report` too. Here
 * the backend's calls go to functions of the same names and types
 * (cublas_load.c), each forwarding to the library's own, found with
 * dlopen/dlsym by cublas_load(); before it, or where it failed, each
 * returns CUBLAS_STATUS_NOT_INITIALIZED (and a name or version query
 * "not loaded" or 0). The headers' prototypes check every signature at
 * compile time. */
#ifndef ACCUBENCH_CUBLAS_LOAD_H
#define ACCUBENCH_CUBLAS_LOAD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens libcublasLt and libcublas of the major version built against and
 * finds every function the backend calls. 0, or -1 with the reason in why
 * (the library or the symbol not found). Idempotent; not thread-safe (the
 * backend is created on one thread). */
int cublas_load(char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
