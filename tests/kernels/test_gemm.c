/* The CPU GEMMs (portable, and cpu_sgemm through each library that loads)
 * against a naive triple loop, for every transpose, odd sizes and
 * alpha/beta; and ACCUBENCH_CPU_GEMM's check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_gemm.h"
#include "rng.h"

typedef void (*gemm_fn)(int, int, int, int, int, float, const float *, int, const float *,
                        int, float, float *, int);

static float at(const float *x, int ld, int trans, int r, int c)
{
    return trans ? x[c + r * ld] : x[r + c * ld];
}

static double max_error(gemm_fn fn, int ta, int tb, int m, int n, int k, float alpha,
                        float beta)
{
    int lda = (ta ? k : m) + 3, ldb = (tb ? n : k) + 1, ldc = m + 2;
    size_t sa = (size_t)lda * (ta ? m : k), sb = (size_t)ldb * (tb ? k : n),
           sc = (size_t)ldc * n;
    float *a = malloc(sa * 4), *b = malloc(sb * 4), *c = malloc(sc * 4), *ref = malloc(sc * 4);
    rng r = {42};
    for (size_t i = 0; i < sa; i++)
        a[i] = rng_uniform(&r, -1, 1);
    for (size_t i = 0; i < sb; i++)
        b[i] = rng_uniform(&r, -1, 1);
    for (size_t i = 0; i < sc; i++)
        c[i] = ref[i] = rng_uniform(&r, -1, 1);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (double)at(a, lda, ta, i, p) * at(b, ldb, tb, p, j);
            ref[i + (size_t)j * ldc] = (float)(alpha * s + beta * ref[i + (size_t)j * ldc]);
        }
    fn(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    double worst = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double e = fabs(c[i + (size_t)j * ldc] - ref[i + (size_t)j * ldc]);
            worst = e > worst ? e : worst;
        }
    free(a);
    free(b);
    free(c);
    free(ref);
    return worst;
}

/* beta = 0 ignores what C held, NaN included (BLAS semantics), whether C's
 * columns are contiguous (ldc = m) or not. */
static int beta0_overwrites(gemm_fn fn, int ldc, int N)
{
    enum { M = 33, K = 17, N_MAX = 300 };
    float a[M * K], b[K * N_MAX], c[(M + 4) * N_MAX];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5) - 2.0f;
    for (int i = 0; i < (M + 4) * N; i++)
        c[i] = NAN;
    fn(0, 0, M, N, K, 1.0f, a, M, b, K, 0.0f, c, ldc);
    int ok = 1;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            float want = 0.0f;
            for (int p = 0; p < K; p++)
                want += a[i + p * M] * b[p + j * K];
            ok &= c[i + j * ldc] == want; /* small whole numbers: exact */
        }
    return ok;
}

/* Every case through fn. */
static void check_gemm(gemm_fn fn)
{
    /* Those with the longer side of C over two blocks run the library in
     * blocks of C, one per thread: by rows where m >= n (the last two
     * skinny: n or k of a few examples), by columns where n > m (wide:
     * the GPT's d_model rows and tokens as columns; the last with m of a
     * few). */
    int sizes[][3] = {{1, 1, 1},    {7, 5, 3},    {130, 67, 300}, {64, 1, 513},
                      {257, 129, 33}, {300, 8, 200}, {260, 150, 9}, {67, 300, 130},
                      {129, 257, 33}, {5, 260, 200}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                int m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
                CHECK(max_error(fn, ta, tb, m, n, k, 1.0f, 0.0f) < 1e-4 * sqrt(k));
                CHECK(max_error(fn, ta, tb, m, n, k, 0.5f, 1.0f) < 1e-4 * sqrt(k));
                CHECK(max_error(fn, ta, tb, m, n, k, -2.0f, 0.25f) < 2e-4 * sqrt(k));
            }
    /* k = 0: no product, C = beta C (oneDNN 2.6 left C as it was) */
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            CHECK(max_error(fn, ta, tb, 7, 5, 0, 1.0f, 0.5f) < 1e-6);
            CHECK(max_error(fn, ta, tb, 260, 150, 0, 1.0f, 0.25f) < 1e-6);
        }
    CHECK(beta0_overwrites(fn, 33, 9));
    CHECK(beta0_overwrites(fn, 37, 9));
    CHECK(beta0_overwrites(fn, 37, 300)); /* cut by columns */
}

/* ACCUBENCH_CPU_GEMM: a name it does not know, and one it does, fails or
 * passes the backend's check with one line. */
static void check_choice(void)
{
    char why[300] = "";
    unsetenv("ACCUBENCH_CPU_GEMM");
    CHECK(cpu_gemm_choice_check(why, sizeof why) == 0);
    setenv("ACCUBENCH_CPU_GEMM", "mkl", 1);
    CHECK(cpu_gemm_choice_check(why, sizeof why) == -1);
    CHECK(strstr(why, "'mkl'") && strstr(why, "onednn, openblas or portable"));
    CHECK(!strchr(why, '\n'));
    setenv("ACCUBENCH_CPU_GEMM", "portable", 1);
    CHECK(cpu_gemm_choice_check(why, sizeof why) == 0);
    unsetenv("ACCUBENCH_CPU_GEMM");
}

int main(void)
{
    check_gemm(cpu_sgemm_portable);
    static const struct { cpu_gemm_library lib; const char *name; } LIBS[] = {
        {CPU_GEMM_OPENBLAS, "OpenBLAS"}, {CPU_GEMM_ONEDNN, "oneDNN"},
        {CPU_GEMM_PORTABLE, "portable"}};
    for (size_t i = 0; i < sizeof LIBS / sizeof *LIBS; i++) {
        if (!cpu_gemm_use(LIBS[i].lib)) {
            printf("test_gemm: %s not loaded, its cases skipped\n", LIBS[i].name);
            continue;
        }
        check_gemm(cpu_sgemm);
        if (LIBS[i].lib != CPU_GEMM_PORTABLE)
            CHECK(strstr(cpu_blas_description(), LIBS[i].name) != NULL);
    }
    check_choice();
    return check_finish("test_gemm");
}
