/* The noise pass's reductions on the CPU (backend_ops.sum_squares, axpy):
 * the same loops the pass ran on the host before it moved onto the
 * backend, so that the CPU path and the GPU path run one piece of code
 * above the table. */
#include "cpu_internal.h"

/* One thread, in index order: the order the GPU's fixed tree cannot match
 * anyway, and the pass's vectors are read once per small batch, beside a
 * whole forward and backward. */
int cpu_sum_squares(backend *b, const float *x, size_t n, double *out)
{
    (void)b;
    double sq = 0;
    for (size_t i = 0; i < n; i++)
        sq += (double)x[i] * x[i];
    *out = sq;
    return BK_OK;
}

CPU_HOT int cpu_axpy(backend *b, float *y, float alpha, const float *x, size_t n)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
    return BK_OK;
}
