/* Checking CUDA, cuBLAS and cuBLASLt calls inside the CUDA backend.
 *
 * Every call goes through one of the macros below. A failure writes one line
 * into backend.error ("file:line: call: NAME: description") and returns the
 * backend status from the enclosing function: BK_OOM for an allocation
 * failure (after clearing CUDA's last-error slot, so that the next call does
 * not see it again), BK_ERROR otherwise. Nothing here exits: the harness
 * decides what a failure means for the sweep. */
#ifndef ACCUBENCH_CUDA_CHECK_H
#define ACCUBENCH_CUDA_CHECK_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* The harness's headers are C: their functions and the table's function
 * pointers have C linkage (the standard headers they include come first,
 * outside the block, so that <math.h> keeps its C++ overloads). */
extern "C" {
#include "backend.h"
}

/* Each records the failure in b->error and returns BK_OOM or BK_ERROR. */
int cuda_fail(backend *b, const char *file, int line, const char *call, cudaError_t e);
int cublas_fail(backend *b, const char *file, int line, const char *call,
                cublasStatus_t s);
int cublaslt_fail(backend *b, const char *file, int line, const char *call,
                  cublasStatus_t s);

#define CUDA_CHECK(b, call)                                                   \
    do {                                                                      \
        cudaError_t ck_e_ = (call);                                           \
        if (ck_e_ != cudaSuccess)                                             \
            return cuda_fail((b), __FILE__, __LINE__, #call, ck_e_);          \
    } while (0)

#define CUBLAS_CHECK(b, call)                                                 \
    do {                                                                      \
        cublasStatus_t ck_s_ = (call);                                        \
        if (ck_s_ != CUBLAS_STATUS_SUCCESS)                                   \
            return cublas_fail((b), __FILE__, __LINE__, #call, ck_s_);        \
    } while (0)

#define CUBLASLT_CHECK(b, call)                                               \
    do {                                                                      \
        cublasStatus_t ck_s_ = (call);                                        \
        if (ck_s_ != CUBLAS_STATUS_SUCCESS)                                   \
            return cublaslt_fail((b), __FILE__, __LINE__, #call, ck_s_);      \
    } while (0)

/* After a kernel launch: a bad configuration or a missing kernel image shows
 * up in cudaGetLastError, named here by the kernel's name. */
#define CUDA_CHECK_LAUNCH(b, kernel_name)                                     \
    do {                                                                      \
        cudaError_t ck_e_ = cudaGetLastError();                               \
        if (ck_e_ != cudaSuccess)                                             \
            return cuda_fail((b), __FILE__, __LINE__, "launch " kernel_name,  \
                             ck_e_);                                          \
    } while (0)

#endif
