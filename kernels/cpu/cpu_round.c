/* The bf16 gradient accumulator on the CPU (backend_ops.round_bf16): each
 * float rounded by the same bit arithmetic the GPU kernel runs
 * (elementwise.h), so the two hold the same bits. */
#include "cpu_internal.h"
#include "elementwise.h"

/* One thread: it runs once per micro-batch over the gradient, beside a
 * whole forward and backward, and the loop vectorises. */
CPU_HOT int cpu_round_bf16(backend *b, float *x, size_t n)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        x[i] = ew_round_bf16(x[i]);
    return BK_OK;
}
