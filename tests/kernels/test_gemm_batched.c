/* Strided-batched GEMM on both CPU paths (portable and BLAS) and through
 * the backend's gemm op, against a naive float64 triple loop per product:
 * every transpose, leading dimensions larger than the rows, strides with
 * gaps between the products, interleaved products (attention's heads side
 * by side in one matrix), small products (split between threads whole) and
 * large ones (each split by columns). What lies between the products' C
 * elements must be left untouched. batch 0 and 1 are one product. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_cpu_backend.h"
#include "cpu_backend.h"
#include "cpu_gemm.h"
#include "dispatch.h"
#include "rng.h"

typedef void (*batched_fn)(int, int, int, int, int, float, const float *, int, int64_t,
                           const float *, int, int64_t, float, float *, int, int64_t, int);

static backend *cpu;

/* The backend's op with the same arguments as the two direct paths. */
static void via_backend(int ta, int tb, int m, int n, int k, float alpha, const float *a,
                        int lda, int64_t sa, const float *b, int ldb, int64_t sb, float beta,
                        float *c, int ldc, int64_t sc, int batch)
{
    gemm_desc g = {.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = alpha,
                   .a = a, .lda = lda, .b = b, .ldb = ldb, .beta = beta, .c = c, .ldc = ldc,
                   .ab_storage = STORAGE_F32, .c_storage = STORAGE_F32, .batch = batch,
                   .stride_a = sa, .stride_b = sb, .stride_c = sc};
    CHECK(bk_gemm(cpu, &g) == BK_OK);
}

/* The layout of one case: leading dimensions and strides as given (0: the
 * tight value), or interleaved (the products side by side, rows apart). */
typedef struct layout {
    int pad_ld;  /* added to every leading dimension */
    int gap;     /* elements between one product and the next */
    int interleave;
} layout;

static double at(const float *x, int ld, int trans, int r, int c)
{
    return trans ? x[(size_t)c + (size_t)r * ld] : x[(size_t)r + (size_t)c * ld];
}

/* One case's buffers and its reference: computed once, then every path
 * is held to it (the float64 triple loop costs more than any path). */
typedef struct gemm_case {
    int ta, tb, m, n, k, batch, lda, ldb, ldc;
    int64_t sa, sb, sc;
    float alpha, beta;
    float *a, *b, *c0;
    double *want;
    size_t nc;
} gemm_case;

static void case_prepare(gemm_case *g, int ta, int tb, int m, int n, int k, float alpha,
                         float beta, int batch, layout l)
{
    int rows_a = ta ? k : m, cols_a = ta ? m : k;
    int rows_b = tb ? n : k, cols_b = tb ? k : n;
    int products = batch > 1 ? batch : 1;
    int lda, ldb, ldc;
    int64_t sa, sb, sc;
    if (l.interleave) {
        /* Product i's matrices are rows [i * rows, (i + 1) * rows) of one
         * tall matrix: stride = rows, ld = rows * products + pad. */
        lda = rows_a * products + l.pad_ld;
        ldb = rows_b * products + l.pad_ld;
        ldc = m * products + l.pad_ld;
        sa = rows_a, sb = rows_b, sc = m;
    } else {
        lda = rows_a + l.pad_ld, ldb = rows_b + l.pad_ld, ldc = m + l.pad_ld;
        sa = (int64_t)lda * cols_a + l.gap;
        sb = (int64_t)ldb * cols_b + l.gap;
        sc = (int64_t)ldc * n + l.gap;
    }
    size_t na = (size_t)(sa * (products - 1)) + (size_t)lda * cols_a;
    size_t nb = (size_t)(sb * (products - 1)) + (size_t)ldb * cols_b;
    size_t nc = (size_t)(sc * (products - 1)) + (size_t)ldc * n;
    *g = (gemm_case){ta, tb, m, n, k, batch, lda, ldb, ldc, sa, sb, sc, alpha, beta,
                     malloc(na * 4), malloc(nb * 4), malloc(nc * 4),
                     malloc(nc * sizeof(double)), nc};
    rng r = {(uint64_t)(m * 131 + n * 17 + k + batch)};
    for (size_t i = 0; i < na; i++)
        g->a[i] = rng_uniform(&r, -1, 1);
    for (size_t i = 0; i < nb; i++)
        g->b[i] = rng_uniform(&r, -1, 1);
    for (size_t i = 0; i < nc; i++)
        g->want[i] = g->c0[i] = rng_uniform(&r, -1, 1);
    for (int p = 0; p < products; p++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double s = 0;
                for (int q = 0; q < k; q++)
                    s += at(g->a + p * sa, lda, ta, i, q) * at(g->b + p * sb, ldb, tb, q, j);
                size_t idx = (size_t)(p * sc) + (size_t)i + (size_t)j * ldc;
                g->want[idx] = alpha * s + beta * g->want[idx];
            }
}

static void case_free(gemm_case *g)
{
    free(g->a);
    free(g->b);
    free(g->c0);
    free(g->want);
}

/* Largest error of fn on the case, over every element of C's buffer: the
 * products' elements against the reference, everything else against its
 * starting value (exactly). */
static double case_error(batched_fn fn, const gemm_case *g)
{
    float *c = malloc(g->nc * 4);
    memcpy(c, g->c0, g->nc * 4);
    fn(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a, g->lda, g->sa, g->b, g->ldb, g->sb,
       g->beta, c, g->ldc, g->sc, g->batch);
    double worst = 0;
    for (size_t i = 0; i < g->nc; i++)
        worst = fmax(worst, fabs(c[i] - g->want[i]));
    free(c);
    return worst;
}

int main(void)
{
    /* A batch of small products is split between the threads. */
    if (!(cpu = test_cpu_backend()))
        return 1;
    /* {m, n, k, batch}: small products (whole to threads), one product
     * (batch 0 and 1), products large enough to split by columns (m x k over 2^18), and
     * attention's per-head shape, enough of them to be cut between the
     * threads. */
    int cases[][4] = {{7, 5, 3, 4}, {16, 16, 8, 24}, {9, 11, 13, 1}, {9, 11, 13, 0},
                      {520, 5, 512, 2}, {1, 1, 1, 5}, {64, 64, 32, 40}};
    layout layouts[] = {{0, 0, 0}, {3, 5, 0}, {2, 0, 1}};
    const float scalars[][2] = {{1.0f, 0.0f}, {-0.5f, 1.0f}, {0.75f, 0.25f}};
    /* The portable path; cpu_sgemm_batched through each library that
     * loads; the backend's op through the last of them. */
    static const struct { batched_fn fn; int lib; const char *name; } runs[] = {
        {cpu_sgemm_portable_batched, -1, "portable"},
        {cpu_sgemm_batched, CPU_GEMM_OPENBLAS, "OpenBLAS"},
        {cpu_sgemm_batched, CPU_GEMM_ONEDNN, "oneDNN"},
        {via_backend, -1, "the backend's op"},
    };
    enum { RUNS = sizeof runs / sizeof *runs };
    int loaded[RUNS], last_lib = -1;
    for (int f = 0; f < RUNS; f++) {
        loaded[f] = runs[f].lib < 0 || cpu_gemm_use((cpu_gemm_library)runs[f].lib);
        if (!loaded[f])
            printf("test_gemm_batched: %s not loaded, its cases skipped\n", runs[f].name);
        else if (runs[f].lib >= 0)
            last_lib = runs[f].lib;
    }
    for (size_t s = 0; s < sizeof cases / sizeof cases[0]; s++)
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++)
                    for (int v = 0; v < 3; v++) {
                        int k = cases[s][2];
                        double tol = 1e-4 * sqrt(k);
                        gemm_case g;
                        case_prepare(&g, ta, tb, cases[s][0], cases[s][1], k, scalars[v][0],
                                     scalars[v][1], cases[s][3], layouts[l]);
                        for (int f = 0; f < RUNS; f++) {
                            if (!loaded[f])
                                continue;
                            if (runs[f].lib >= 0)
                                cpu_gemm_use((cpu_gemm_library)runs[f].lib);
                            else if (runs[f].fn == via_backend && last_lib >= 0)
                                cpu_gemm_use((cpu_gemm_library)last_lib);
                            CHECK(case_error(runs[f].fn, &g) < tol);
                        }
                        case_free(&g);
                    }
    cpu->ops->destroy(cpu);
    return check_finish("test_gemm_batched");
}
