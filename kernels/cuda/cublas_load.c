/* The cuBLAS and cuBLASLt functions the CUDA backend calls, forwarded to
 * the libraries opened by cublas_load (see cublas_load.h). Each forwarder
 * is defined with the library's own name and the header's own types, so a
 * wrong signature is a compile error ("conflicting types"), and the
 * program links no cuBLAS at all. */
#include "cublas_load.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>
#include <stdio.h>

#define STR_(x) #x
#define STR(x) STR_(x) /* after expansion: cublasCreate -> "cublasCreate_v2" */

/* Every function, by library (LT: cuBLASLt, BLAS: cuBLAS). */
#define CUBLAS_FUNCTIONS(X)                                                   \
    X(LT, cublasLtCreate)                                                     \
    X(LT, cublasLtDestroy)                                                    \
    X(LT, cublasLtGetVersion)                                                 \
    X(LT, cublasLtGetStatusName)                                              \
    X(LT, cublasLtGetStatusString)                                            \
    X(LT, cublasLtMatmul)                                                     \
    X(LT, cublasLtMatmulAlgoGetHeuristic)                                     \
    X(LT, cublasLtMatmulDescCreate)                                           \
    X(LT, cublasLtMatmulDescDestroy)                                          \
    X(LT, cublasLtMatmulDescSetAttribute)                                     \
    X(LT, cublasLtMatmulPreferenceCreate)                                     \
    X(LT, cublasLtMatmulPreferenceDestroy)                                    \
    X(LT, cublasLtMatmulPreferenceSetAttribute)                               \
    X(LT, cublasLtMatrixLayoutCreate)                                         \
    X(LT, cublasLtMatrixLayoutDestroy)                                        \
    X(LT, cublasLtMatrixLayoutSetAttribute)                                   \
    X(BLAS, cublasCreate)                                                     \
    X(BLAS, cublasDestroy)                                                    \
    X(BLAS, cublasGetVersion)                                                 \
    X(BLAS, cublasGetStatusName)                                              \
    X(BLAS, cublasGetStatusString)                                            \
    X(BLAS, cublasSetStream)                                                  \
    X(BLAS, cublasSetWorkspace)                                               \
    X(BLAS, cublasGemmEx)                                                     \
    X(BLAS, cublasGemmStridedBatchedEx)

/* One pointer per function, of the function's own type. */
#define POINTER(lib, f) static __typeof__(&f) p_##f;
CUBLAS_FUNCTIONS(POINTER)

static void *opened[2]; /* LT, BLAS */
enum { LT, BLAS };

static int open_library(int which, const char *name, char *why, size_t len)
{
    if (opened[which])
        return 0;
    opened[which] = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!opened[which]) {
        snprintf(why, len, "cannot open %s: %s", name, dlerror());
        return -1;
    }
    return 0;
}

#define FIND(lib, f)                                                          \
    if (!p_##f) {                                                             \
        p_##f = (__typeof__(&f))dlsym(opened[lib], STR(f));                   \
        if (!p_##f) {                                                         \
            snprintf(why, len, "%s has no %s", lib == LT ? lt_name : blas_name, STR(f)); \
            return -1;                                                        \
        }                                                                     \
    }

int cublas_load(char *why, size_t len)
{
    /* The sonames carry the major version (libcublasLt.so.13): the one
     * these headers describe. cuBLAS needs cuBLASLt, so it opens first. */
    static const char lt_name[] = "libcublasLt.so." STR(CUBLAS_VER_MAJOR);
    static const char blas_name[] = "libcublas.so." STR(CUBLAS_VER_MAJOR);
    if (open_library(LT, lt_name, why, len) || open_library(BLAS, blas_name, why, len))
        return -1;
    CUBLAS_FUNCTIONS(FIND)
    return 0;
}

/* A forwarder: the library's function where it was found, else "not
 * initialized" (cublas_load has not run or failed). */
#define FORWARD(f, ...) return p_##f ? p_##f(__VA_ARGS__) : CUBLAS_STATUS_NOT_INITIALIZED

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) { FORWARD(cublasLtCreate, h); }
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) { FORWARD(cublasLtDestroy, h); }
size_t cublasLtGetVersion(void) { return p_cublasLtGetVersion ? p_cublasLtGetVersion() : 0; }
const char *cublasLtGetStatusName(cublasStatus_t s)
{
    return p_cublasLtGetStatusName ? p_cublasLtGetStatusName(s) : "cuBLASLt not loaded";
}
const char *cublasLtGetStatusString(cublasStatus_t s)
{
    return p_cublasLtGetStatusString ? p_cublasLtGetStatusString(s) : "cuBLASLt not loaded";
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
                              const void *a, cublasLtMatrixLayout_t a_desc, const void *b,
                              cublasLtMatrixLayout_t b_desc, const void *beta, const void *c,
                              cublasLtMatrixLayout_t c_desc, void *d,
                              cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t *algo,
                              void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    FORWARD(cublasLtMatmul, h, desc, alpha, a, a_desc, b, b_desc, beta, c, c_desc, d, d_desc,
            algo, workspace, workspace_bytes, stream);
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *returned)
{
    FORWARD(cublasLtMatmulAlgoGetHeuristic, h, desc, a, b, c, d, pref, requested, results,
            returned);
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    FORWARD(cublasLtMatmulDescCreate, desc, compute, scale);
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    FORWARD(cublasLtMatmulDescDestroy, desc);
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t bytes)
{
    FORWARD(cublasLtMatmulDescSetAttribute, desc, attr, buf, bytes);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    FORWARD(cublasLtMatmulPreferenceCreate, pref);
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    FORWARD(cublasLtMatmulPreferenceDestroy, pref);
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t bytes)
{
    FORWARD(cublasLtMatmulPreferenceSetAttribute, pref, attr, buf, bytes);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    FORWARD(cublasLtMatrixLayoutCreate, layout, type, rows, cols, ld);
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    FORWARD(cublasLtMatrixLayoutDestroy, layout);
}
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t bytes)
{
    FORWARD(cublasLtMatrixLayoutSetAttribute, layout, attr, buf, bytes);
}

cublasStatus_t cublasCreate(cublasHandle_t *h) { FORWARD(cublasCreate, h); }
cublasStatus_t cublasDestroy(cublasHandle_t h) { FORWARD(cublasDestroy, h); }
cublasStatus_t cublasGetVersion(cublasHandle_t h, int *version)
{
    FORWARD(cublasGetVersion, h, version);
}
const char *cublasGetStatusName(cublasStatus_t s)
{
    return p_cublasGetStatusName ? p_cublasGetStatusName(s) : "cuBLAS not loaded";
}
const char *cublasGetStatusString(cublasStatus_t s)
{
    return p_cublasGetStatusString ? p_cublasGetStatusString(s) : "cuBLAS not loaded";
}
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t stream)
{
    FORWARD(cublasSetStream, h, stream);
}
cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *workspace, size_t bytes)
{
    FORWARD(cublasSetWorkspace, h, workspace, bytes);
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                            int n, int k, const void *alpha, const void *a, cudaDataType a_type,
                            int lda, const void *b, cudaDataType b_type, int ldb,
                            const void *beta, void *c, cudaDataType c_type, int ldc,
                            cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    FORWARD(cublasGemmEx, h, ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c,
            c_type, ldc, compute, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *a, cudaDataType a_type,
                                          int lda, long long int stride_a, const void *b,
                                          cudaDataType b_type, int ldb, long long int stride_b,
                                          const void *beta, void *c, cudaDataType c_type,
                                          int ldc, long long int stride_c, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    FORWARD(cublasGemmStridedBatchedEx, h, ta, tb, m, n, k, alpha, a, a_type, lda, stride_a, b,
            b_type, ldb, stride_b, beta, c, c_type, ldc, stride_c, batch, compute, algo);
}
