/* CPU GEMM: OpenBLAS cblas_sgemm, or a portable blocked fallback. */
#include "cpu_gemm.h"

#include <stdio.h>
#include <string.h>

#ifdef ACCUBENCH_HAVE_OPENBLAS
#include <cblas.h>
char *openblas_get_corename(void);
#endif

/* Block sizes: a KC x NC panel of B and an MC x KC block of A stay in
 * cache while the innermost loop streams down a column of C, which the
 * compiler vectorises (column-major: contiguous in i). */
enum { MC = 128, KC = 256, NC = 512 };

static inline float elem(const float *x, int ld, int trans, int row, int col)
{
    return trans ? x[(size_t)col + (size_t)row * ld] : x[(size_t)row + (size_t)col * ld];
}

void cpu_sgemm_portable(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb,
                        float beta, float *c, int ldc)
{
    for (int j = 0; j < n; j++) {
        float *cj = c + (size_t)j * ldc;
        if (beta == 0.0f)
            memset(cj, 0, (size_t)m * sizeof *cj);
        else if (beta != 1.0f)
            for (int i = 0; i < m; i++)
                cj[i] *= beta;
    }
    if (k == 0 || alpha == 0.0f)
        return;

    /* A packed column-major (MC x KC) so the inner loop is contiguous
     * whatever trans_a says. */
    static _Thread_local float apack[MC * KC];
    for (int j0 = 0; j0 < n; j0 += NC) {
        int nb = n - j0 < NC ? n - j0 : NC;
        for (int p0 = 0; p0 < k; p0 += KC) {
            int kb = k - p0 < KC ? k - p0 : KC;
            for (int i0 = 0; i0 < m; i0 += MC) {
                int mb = m - i0 < MC ? m - i0 : MC;
                for (int p = 0; p < kb; p++)
                    for (int i = 0; i < mb; i++)
                        apack[i + p * MC] = elem(a, lda, trans_a, i0 + i, p0 + p);
                for (int j = 0; j < nb; j++) {
                    float *cj = c + (size_t)(j0 + j) * ldc + i0;
                    for (int p = 0; p < kb; p++) {
                        float bv = alpha * elem(b, ldb, trans_b, p0 + p, j0 + j);
                        const float *ap = apack + p * MC;
                        for (int i = 0; i < mb; i++)
                            cj[i] += ap[i] * bv;
                    }
                }
            }
        }
    }
}

#ifdef ACCUBENCH_HAVE_OPENBLAS
void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc)
{
    cblas_sgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
                ldb, beta, c, ldc);
}

const char *cpu_blas_core(void)
{
    return openblas_get_corename();
}

const char *cpu_blas_description(void)
{
    /* openblas_get_config() reads e.g. "OpenBLAS 0.3.21 NO_LAPACKE ...". */
    static char text[160];
    char name[32] = "OpenBLAS", version[32] = "";
    sscanf(openblas_get_config(), "%31s %31s", name, version);
    snprintf(text, sizeof text, "%s %s core %s threads %d", name, version,
             openblas_get_corename(), openblas_get_num_threads());
    return text;
}
#else
void cpu_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc)
{
    cpu_sgemm_portable(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

const char *cpu_blas_core(void)
{
    return "portable";
}

const char *cpu_blas_description(void)
{
    return "portable blocked GEMM (no OpenBLAS)";
}
#endif
