/* The CPU backend's noise-pass reductions (sum_squares, axpy) through the
 * harness's wrappers, against float64 references written here. The sum of
 * squares is in double over fp32 squares computed in double: against a
 * float64 reference it may differ only by the order of its additions (a
 * relative 1e-15 over a million terms of one sign); axpy is one fp32
 * multiply-add an element, fused or not (a relative 1e-7). */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "rng.h"
#include "test_cpu_backend.h"

static rng r = {77};

static void test_sum_squares(backend *b, size_t n)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    double want = 0, got = -1;
    for (size_t i = 0; i < n; i++) {
        x[i] = rng_uniform(&r, -3, 3);
        want += (double)x[i] * (double)x[i];
    }
    CHECK(bk_sum_squares(b, x, n, &got) == BK_OK);
    CHECK(n ? fabs(got - want) <= 1e-12 * want : got == 0);
    free(x);
}

static void test_axpy(backend *b, size_t n)
{
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) {
        x[i] = rng_uniform(&r, -1, 1);
        y[i] = rng_uniform(&r, -1, 1);
        want[i] = (double)y[i] + 7.0 * (double)x[i];
    }
    CHECK(bk_axpy(b, y, 7.0f, x, n) == BK_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += fabs(y[i] - want[i]) > 2e-7 * (fabs(want[i]) + 7);
    CHECK(wrong == 0);
    free(x), free(y), free(want);
}

int main(void)
{
    backend *b = test_cpu_backend();
    if (!b)
        return 1;
    test_sum_squares(b, 0);
    test_sum_squares(b, 5);
    test_sum_squares(b, 1000003);
    test_axpy(b, 1);
    test_axpy(b, 100003);
    b->ops->destroy(b);
    return check_finish("test_noise_reductions");
}
