/* The noise pass's reductions on the GPU (backend_ops.sum_squares, axpy):
 * a gradient's squared norm and the window's weighted sum stay on the
 * device, and one double per small batch comes back instead of the whole
 * gradient.
 *
 * The sum of squares is two launches, so that it repeats to the bit (the
 * determinism stage of check-gpu compares runs): each block sums its
 * grid-stride share in double and writes one partial, in a tree of fixed
 * shape; one block then sums the partials the same way. The block count
 * depends on n alone, never on the SM count, so the order is the same on
 * any device. No atomics: their order is the scheduler's.
 *
 * The cross-entropy's loss sum is reduced here too, for the same reason:
 * its examples' losses added by one block in a fixed order, never by
 * atomics.
 *
 * Beside axpy, the other pass over a whole gradient vector: the bf16
 * accumulator's rounding (round_bf16). */
#include "cuda_check.h"
#include "cuda_internal.h"
#include "cuda_kernels.h"
#include "cuda_reduce.cuh"

static_assert(SQ_MAX_BLOCKS * sizeof(double) <= CUDA_REDUCE_SCRATCH_FLOATS * sizeof(float),
              "the partial sums must fit the reduction scratch");

extern "C" int cuda_sum_squares(backend *b, const float *x, size_t n, double *out)
{
    cuda_impl *c = cuda_of(b);
    int vec = ((uintptr_t)x % 16) == 0;
    size_t items = vec ? (n + 3) / 4 : n;
    size_t want = (items + SQ_THREADS - 1) / SQ_THREADS;
    unsigned blocks = want == 0 ? 1u : want > SQ_MAX_BLOCKS ? SQ_MAX_BLOCKS : (unsigned)want;
    double *partial = (double *)c->reduce_scratch;
    sum_squares_partial<<<blocks, SQ_THREADS, 0, c->stream>>>(x, n, vec, partial);
    CUDA_CHECK_LAUNCH(b, "sum_squares_partial");
    sum_partials<<<1, SQ_THREADS, 0, c->stream>>>(partial, (int)blocks, out);
    CUDA_CHECK_LAUNCH(b, "sum_partials");
    return BK_OK;
}

/* The cross-entropy's per-example losses, added to *loss_sum in a fixed
 * order (loss_sum_kernel): deterministic, as the determinism stage of
 * check-gpu and the loss columns of two runs expect. */
extern "C" int cuda_loss_sum(backend *b, const float *losses, int n, float *loss_sum)
{
    if (n <= 0)
        return BK_OK;
    loss_sum_kernel<<<1, SQ_THREADS, 0, cuda_of(b)->stream>>>(losses, n, loss_sum);
    CUDA_CHECK_LAUNCH(b, "loss_sum_kernel");
    return BK_OK;
}

extern "C" int cuda_round_bf16(backend *b, float *x, size_t n)
{
    if (n == 0)
        return BK_OK;
    int vec = ((uintptr_t)x % 16) == 0;
    round_bf16_kernel<<<blocks_for(b, (n + 3) / 4, EW_THREADS), EW_THREADS, 0,
                        cuda_of(b)->stream>>>(x, n, vec);
    CUDA_CHECK_LAUNCH(b, "round_bf16_kernel");
    return BK_OK;
}

extern "C" int cuda_axpy(backend *b, float *y, float alpha, const float *x, size_t n)
{
    if (n == 0)
        return BK_OK;
    int vec = (((uintptr_t)x | (uintptr_t)y) % 16) == 0;
    axpy_kernel<<<blocks_for(b, (n + 3) / 4, EW_THREADS), EW_THREADS, 0,
                  cuda_of(b)->stream>>>(y, alpha, x, n, vec);
    CUDA_CHECK_LAUNCH(b, "axpy_kernel");
    return BK_OK;
}
