/* The CPU backend's gelu_forward, the op a recomputing backward calls: h =
 * gelu(z) element by element (ew_gelu's value, to the rounding of its
 * fused multiply-adds), the same bits bias_gelu_forward wrote for h
 * from the same pre-activation (so a recomputed GELU output is the kept
 * one), z untouched; split between threads (bf16 storage:
 * test_bf16_ops.c). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "elementwise.h"
#include "rng.h"
#include "test_cpu_backend.h"

static void test_same_as_forward(backend *b, int rows, int cols)
{
    size_t n = (size_t)rows * cols;
    float *z = malloc(n * sizeof *z), *z0 = malloc(n * sizeof *z0);
    float *h_fwd = malloc(n * sizeof *h_fwd), *h = malloc(n * sizeof *h);
    float *bias = calloc((size_t)rows, sizeof *bias);
    rng r = {(uint64_t)n};
    for (size_t i = 0; i < n; i++)
        z[i] = rng_uniform(&r, -6, 6);
    for (int i = 0; i < rows; i++)
        bias[i] = rng_uniform(&r, -1, 1);
    /* The forward: z += bias, h = gelu(z); then h again from the kept z. */
    CHECK(b->ops->bias_gelu_forward(b, STORAGE_F32, z, bias, h_fwd, rows, cols, 1) == BK_OK);
    memcpy(z0, z, n * sizeof *z);
    memset(h, 0xff, n * sizeof *h);
    CHECK(bk_gelu_forward(b, z, h, n) == BK_OK);
    /* ew_gelu here is compiled without fused multiply-adds (this file's
     * flags, the default x86-64 target); the backend's loops contract them
     * (-ffp-contract=fast, the AVX2 and AVX-512 clones), as nvcc does. The
     * rounding of the cubic's argument then differs by an ulp, which the
     * exponential multiplies by |2u|, about |z|^3 / 10: a relative 2e-6 at
     * z = -5.2, where a wrong formula is off by 1e-2 and more. */
    int differ = 0, wrong = 0;
    for (size_t i = 0; i < n; i++) {
        float want = ew_gelu(z[i]), zc = fabsf(z[i]);
        differ += memcmp(&h[i], &h_fwd[i], sizeof h[i]) != 0;
        wrong += !(fabsf(h[i] - want) <= 4 * FLT_EPSILON * (1 + zc * zc * zc) * fabsf(want));
    }
    CHECK(differ == 0);
    CHECK(wrong == 0);
    CHECK(memcmp(z, z0, n * sizeof *z) == 0);
    free(z), free(z0), free(h_fwd), free(h), free(bias);
}

int main(void)
{
    backend *b = test_cpu_backend();
    if (!b)
        return 1;
    test_same_as_forward(b, 7, 3);
    test_same_as_forward(b, 512, 700); /* split between threads */
    float v = 1.0f;
    CHECK(b->ops->gelu_forward(b, STORAGE_F32, &v, &v, 0) == BK_OK);
    b->ops->destroy(b);
    return check_finish("test_gelu_forward");
}
