/* GEMMs of the CUDA backend: cuBLASLt with the algorithm chosen once per
 * shape (cublasLtMatmulAlgoGetHeuristic) and kept, with its descriptors, in
 * a hash table keyed by shape; cublasGemmEx (cublasGemmStridedBatchedEx
 * for a batch) where cuBLASLt offers no algorithm for a shape.
 *
 * A strided batch (gemm_desc.batch > 1, attention's per-head products) is
 * one cuBLASLt call: each matrix layout carries the batch count and its
 * stride, and both are in the plan's key.
 *
 * Compute types by the backend's dtype: fp32 -> CUBLAS_COMPUTE_32F (no
 * tensor cores), tf32 -> CUBLAS_COMPUTE_32F_FAST_TF32 (fp32 data, TF32
 * tensor cores), bf16 -> CUBLAS_COMPUTE_32F over bf16 A and B, writing bf16
 * activations or, for weight gradients, accumulating into fp32 C with
 * beta = 1. alpha and beta are host values (baked into a captured graph,
 * which is right: the model's are constants). */
#include <stdlib.h>

#include "cuda_check.h"
#include "cuda_gemm_cache.h"
#include "cuda_internal.h"

typedef struct gemm_plan {
    int use_lt; /* 0: cuBLASLt had no algorithm; cublasGemmEx instead */
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
} gemm_plan;

struct cuda_gemm_cache {
    gemm_table table;
};

static cudaDataType_t data_type(int s)
{
    return s == STORAGE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

static cublasComputeType_t compute_type(int dt, int ab_storage)
{
    if (dt == DTYPE_TF32 && ab_storage == STORAGE_F32)
        return CUBLAS_COMPUTE_32F_FAST_TF32;
    return CUBLAS_COMPUTE_32F;
}

static void plan_release(void *value, void *ctx)
{
    (void)ctx;
    gemm_plan *p = (gemm_plan *)value;
    if (p->a)
        cublasLtMatrixLayoutDestroy(p->a);
    if (p->b)
        cublasLtMatrixLayoutDestroy(p->b);
    if (p->c)
        cublasLtMatrixLayoutDestroy(p->c);
    if (p->desc)
        cublasLtMatmulDescDestroy(p->desc);
    free(p);
}

/* Creates the plan's matmul descriptor and its three matrix layouts for
 * this shape (with the batch count and strides of a strided batch). What
 * it created stays in *p for plan_release, on failure too. */
static int plan_describe(backend *b, const gemm_key *k, gemm_plan *p)
{
    cublasOperation_t op_a = k->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_b = k->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* Stored shapes: op(A) is m x k, op(B) is k x n. */
    uint64_t a_rows = (uint64_t)(k->trans_a ? k->k : k->m);
    uint64_t a_cols = (uint64_t)(k->trans_a ? k->m : k->k);
    uint64_t b_rows = (uint64_t)(k->trans_b ? k->n : k->k);
    uint64_t b_cols = (uint64_t)(k->trans_b ? k->k : k->n);

    CUBLASLT_CHECK(b, cublasLtMatmulDescCreate(&p->desc, compute_type(k->compute, k->ab_storage),
                                               CUDA_R_32F));
    CUBLASLT_CHECK(b, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                     &op_a, sizeof op_a));
    CUBLASLT_CHECK(b, cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                     &op_b, sizeof op_b));
    CUBLASLT_CHECK(b, cublasLtMatrixLayoutCreate(&p->a, data_type(k->ab_storage), a_rows,
                                                 a_cols, k->lda));
    CUBLASLT_CHECK(b, cublasLtMatrixLayoutCreate(&p->b, data_type(k->ab_storage), b_rows,
                                                 b_cols, k->ldb));
    CUBLASLT_CHECK(b, cublasLtMatrixLayoutCreate(&p->c, data_type(k->c_storage),
                                                 (uint64_t)k->m, (uint64_t)k->n, k->ldc));
    if (k->batch > 1) {
        /* Strided batch: every layout carries the count and its stride. */
        int32_t count = k->batch;
        const struct {
            cublasLtMatrixLayout_t layout;
            int64_t stride;
        } batched[] = {{p->a, k->stride_a}, {p->b, k->stride_b}, {p->c, k->stride_c}};
        for (size_t i = 0; i < sizeof batched / sizeof batched[0]; i++) {
            CUBLASLT_CHECK(b, cublasLtMatrixLayoutSetAttribute(
                                  batched[i].layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                  &count, sizeof count));
            CUBLASLT_CHECK(b, cublasLtMatrixLayoutSetAttribute(
                                  batched[i].layout,
                                  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                  &batched[i].stride, sizeof batched[i].stride));
        }
    }
    return BK_OK;
}

/* Asks cuBLASLt's heuristic for the best algorithm for the described
 * shape, within the workspace and the operands' alignments; leaves
 * use_lt = 0 when it has none (CUBLAS_STATUS_NOT_SUPPORTED or zero
 * results). */
static int plan_pick_algo(backend *b, cuda_impl *c, const gemm_key *k, gemm_plan *p)
{
    cublasLtMatmulPreference_t pref = NULL;
    CUBLASLT_CHECK(b, cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = CUDA_GEMM_WORKSPACE_BYTES;
    uint32_t align_a = (uint32_t)k->align_a, align_b = (uint32_t)k->align_b,
             align_c = (uint32_t)k->align_c;
    const struct {
        cublasLtMatmulPreferenceAttributes_t attr;
        const void *value;
        size_t size;
    } prefs[] = {
        {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a, sizeof align_a},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b, sizeof align_b},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof align_c},
    };
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (size_t i = 0; i < sizeof prefs / sizeof prefs[0] && s == CUBLAS_STATUS_SUCCESS; i++)
        s = cublasLtMatmulPreferenceSetAttribute(pref, prefs[i].attr, prefs[i].value,
                                                 prefs[i].size);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(c->lt, p->desc, p->a, p->b, p->c, p->c, pref, 1,
                                           &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && found == 0))
        return BK_OK; /* cuBLAS takes this shape */
    if (s != CUBLAS_STATUS_SUCCESS)
        return cublaslt_fail(b, __FILE__, __LINE__,
                             "cublasLtMatmulPreferenceSetAttribute/AlgoGetHeuristic", s);
    p->algo = result.algo;
    p->use_lt = 1;
    return BK_OK;
}

/* Asks cuBLASLt for the best algorithm for this shape; leaves use_lt = 0
 * when it has none (CUBLAS_STATUS_NOT_SUPPORTED or zero results). */
static int plan_choose(backend *b, cuda_impl *c, const gemm_key *k, gemm_plan *p)
{
    int rc = plan_describe(b, k, p);
    if (rc != BK_OK)
        return rc;
    return plan_pick_algo(b, c, k, p);
}

/* The cached plan for the GEMM g, built on first sight. */
static int plan_for(backend *b, cuda_impl *c, const gemm_desc *g, gemm_plan **out)
{
    gemm_key k = gemm_key_of(g, (int)b->dtype);
    *out = (gemm_plan *)gemm_table_find(&c->gemms->table, &k);
    if (*out)
        return BK_OK;
    gemm_plan *p = (gemm_plan *)calloc(1, sizeof *p);
    if (!p) {
        snprintf(b->error, sizeof b->error, "out of host memory for a GEMM plan");
        return BK_OOM;
    }
    int rc = plan_choose(b, c, &k, p);
    if (rc == BK_OK && gemm_table_insert(&c->gemms->table, &k, p) != 0) {
        snprintf(b->error, sizeof b->error, "out of host memory for the GEMM plan cache");
        rc = BK_OOM;
    }
    if (rc != BK_OK) {
        plan_release(p, NULL);
        return rc;
    }
    *out = p;
    return BK_OK;
}

extern "C" int cuda_gemm(backend *b, const gemm_desc *g)
{
    cuda_impl *c = cuda_of(b);
    if (g->m <= 0 || g->n <= 0)
        return BK_OK;
    if (g->ab_storage == STORAGE_BF16 && b->dtype != DTYPE_BF16) {
        snprintf(b->error, sizeof b->error, "gemm: bf16 operands in a %s run",
                 dtype_name(b->dtype));
        return BK_UNSUPPORTED;
    }
    gemm_plan *p;
    int rc = plan_for(b, c, g, &p);
    if (rc != BK_OK)
        return rc;
    if (p->use_lt) {
        CUBLASLT_CHECK(b, cublasLtMatmul(c->lt, p->desc, &g->alpha, g->a, p->a, g->b, p->b,
                                         &g->beta, g->c, p->c, g->c, p->c, &p->algo,
                                         c->workspace, CUDA_GEMM_WORKSPACE_BYTES,
                                         c->stream));
        return BK_OK;
    }
    if (g->batch > 1) {
        CUBLAS_CHECK(b, cublasGemmStridedBatchedEx(
                            c->blas, g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                            g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g->m, g->n, g->k,
                            &g->alpha, g->a, data_type(g->ab_storage), g->lda,
                            (long long)g->stride_a, g->b, data_type(g->ab_storage), g->ldb,
                            (long long)g->stride_b, &g->beta, g->c, data_type(g->c_storage),
                            g->ldc, (long long)g->stride_c, g->batch,
                            compute_type(b->dtype, g->ab_storage), CUBLAS_GEMM_DEFAULT));
        return BK_OK;
    }
    CUBLAS_CHECK(b, cublasGemmEx(c->blas, g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                 g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g->m, g->n, g->k,
                                 &g->alpha, g->a, data_type(g->ab_storage), g->lda, g->b,
                                 data_type(g->ab_storage), g->ldb, &g->beta, g->c,
                                 data_type(g->c_storage), g->ldc,
                                 compute_type(b->dtype, g->ab_storage),
                                 CUBLAS_GEMM_DEFAULT));
    return BK_OK;
}

extern "C" int cuda_gemm_create(backend *b)
{
    cuda_impl *c = cuda_of(b);
    c->gemms = (cuda_gemm_cache *)calloc(1, sizeof *c->gemms);
    if (!c->gemms) {
        snprintf(b->error, sizeof b->error, "out of host memory for the GEMM plan cache");
        return BK_OOM;
    }
    return BK_OK;
}

extern "C" void cuda_gemm_destroy(backend *b)
{
    cuda_impl *c = cuda_of(b);
    if (!c->gemms)
        return;
    gemm_table_clear(&c->gemms->table, plan_release, NULL);
    free(c->gemms);
    c->gemms = NULL;
}
