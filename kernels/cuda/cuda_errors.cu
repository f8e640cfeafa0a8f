/* The CUDA backend's failures as backend errors: the message names the
 * file, line and call; an allocation failure is BK_OOM (the sweep goes
 * on), and an error that leaves the context unusable marks the backend
 * lost, so the sweep stops instead of writing one error row per config. */
#include <stdio.h>

#include "cuda_backend.h"
#include "cuda_check.h"
#include "cuda_internal.h"

/* The errors that leave the context unusable: every later call in this
 * process returns them again, so nothing more can run here. Every error
 * driver_types.h documents as "the process must be terminated and
 * relaunched" is here (tests/e2e/e2e_cuda_sticky_errors.sh holds the list
 * to the toolkit's): a fault that the GPU's error containment catches
 * (Hopper and later) is cudaErrorContained, not an illegal address. */
static int sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorMpsClientTerminated:
#if CUDART_VERSION >= 12080 /* all three in the 12.8 headers and later */
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
#endif
        return 1;
    default:
        return 0;
    }
}

int cuda_fail(backend *b, const char *file, int line, const char *call, cudaError_t e)
{
    snprintf(b->error, sizeof b->error, "%s:%d: %s: %s: %s", file, line, call,
             cudaGetErrorName(e), cudaGetErrorString(e));
    /* Every failing runtime call also leaves its error in the last-error
     * slot, which the next launch check reads: clear it, or that launch
     * would report this failure as its own. A sticky error stays with the
     * context whatever is cleared: the backend is lost. */
    (void)cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
        return BK_OOM;
    if (sticky(e))
        b->lost = 1;
    return BK_ERROR;
}

/* A cuBLAS or cuBLASLt failure other than an allocation marks the backend
 * lost. cuBLAS reports a device fault under its own names
 * (CUBLAS_STATUS_EXECUTION_FAILED, _INTERNAL_ERROR) without saying which
 * CUDA error lies beneath, and the shapes and plans it is given were made
 * to be valid, so whatever else it returns is either that fault or a bug
 * that would fail every config alike: one line and the sweep stops, rather
 * than one error row per config. An allocation failure stays BK_OOM: the
 * config does not fit, the next may. */
static int blas_status(backend *b, cublasStatus_t s)
{
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        return BK_OOM;
    b->lost = 1;
    return BK_ERROR;
}

int cublas_fail(backend *b, const char *file, int line, const char *call, cublasStatus_t s)
{
    snprintf(b->error, sizeof b->error, "%s:%d: %s: %s: %s", file, line, call,
             cublasGetStatusName(s), cublasGetStatusString(s));
    return blas_status(b, s);
}

int cublaslt_fail(backend *b, const char *file, int line, const char *call,
                  cublasStatus_t s)
{
    snprintf(b->error, sizeof b->error, "%s:%d: %s: %s: %s", file, line, call,
             cublasLtGetStatusName(s), cublasLtGetStatusString(s));
    return blas_status(b, s);
}

