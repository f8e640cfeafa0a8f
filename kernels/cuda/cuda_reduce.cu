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
 * Beside axpy, the other pass over a whole gradient vector: the bf16
 * accumulator's rounding (round_bf16). */
#include "cuda_check.h"
#include "cuda_internal.h"
#include "cuda_kernels.h"

#define SQ_THREADS 256 /* a power of two: block_sum halves it */
/* Enough blocks to fill an H200 (132 SMs) several times over; the partials
 * (8 KiB) live in the backend's reduction scratch. */
#define SQ_MAX_BLOCKS 1024
#define SQ_UNROLL 4 /* 16-byte loads in flight per thread before the first use */

static_assert(SQ_MAX_BLOCKS * sizeof(double) <= CUDA_REDUCE_SCRATCH_FLOATS * sizeof(float),
              "the partial sums must fit the reduction scratch");

/* The block's sum, in a tree of fixed shape: every thread gets it. */
__device__ double block_sum(double v)
{
    __shared__ double s[SQ_THREADS];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = SQ_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    return s[0];
}

__device__ __forceinline__ double sq4(float4 v)
{
    return (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z + (double)v.w * v.w;
}

/* Partial sums of x[i]^2, one per block. vec: x is 16-byte aligned. */
__global__ void __launch_bounds__(SQ_THREADS)
    sum_squares_partial(const float *x, size_t n, int vec, double *partial)
{
    double acc = 0;
    size_t stride = (size_t)gridDim.x * SQ_THREADS;
    size_t q = (size_t)blockIdx.x * SQ_THREADS + threadIdx.x;
    if (vec) {
        const float4 *x4 = (const float4 *)x;
        size_t nq = n / 4;
        /* SQ_UNROLL independent loads issued before any is used. */
        for (; q + (SQ_UNROLL - 1) * stride < nq; q += SQ_UNROLL * stride) {
            float4 v[SQ_UNROLL];
#pragma unroll
            for (int k = 0; k < SQ_UNROLL; k++)
                v[k] = x4[q + k * stride];
#pragma unroll
            for (int k = 0; k < SQ_UNROLL; k++)
                acc += sq4(v[k]);
        }
        for (; q < nq; q += stride)
            acc += sq4(x4[q]);
        /* The tail past the last whole float4, by the first block. */
        if (blockIdx.x == 0 && threadIdx.x < n % 4) {
            float t = x[nq * 4 + threadIdx.x];
            acc += (double)t * t;
        }
    } else {
        for (; q < n; q += stride)
            acc += (double)x[q] * x[q];
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        partial[blockIdx.x] = acc;
}

__global__ void __launch_bounds__(SQ_THREADS)
    sum_partials(const double *partial, int count, double *out)
{
    double acc = 0;
    for (int i = threadIdx.x; i < count; i += SQ_THREADS)
        acc += partial[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        *out = acc;
}

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

/* y += alpha x, 16 bytes a turn where both are aligned. */
__global__ void axpy_kernel(float *y, float alpha, const float *x, size_t n, int vec)
{
    GRID_STRIDE(q, (n + 3) / 4)
    {
        size_t i = q * 4;
        if (vec && i + 4 <= n) {
            float4 yq = ((float4 *)y)[q], xq = ((const float4 *)x)[q];
            yq.x += alpha * xq.x;
            yq.y += alpha * xq.y;
            yq.z += alpha * xq.z;
            yq.w += alpha * xq.w;
            ((float4 *)y)[q] = yq;
        } else {
            for (size_t j = i; j < n && j < i + 4; j++)
                y[j] += alpha * x[j];
        }
    }
}

/* The bf16 gradient accumulator (backend_ops.round_bf16): every float
 * rounded in place by the CPU backend's own bit arithmetic (elementwise.h),
 * 16 bytes a turn where aligned. */
__global__ void round_bf16_kernel(float *x, size_t n, int vec)
{
    GRID_STRIDE(q, (n + 3) / 4)
    {
        size_t i = q * 4;
        if (vec && i + 4 <= n) {
            float4 v = ((float4 *)x)[q];
            v.x = ew_round_bf16(v.x);
            v.y = ew_round_bf16(v.y);
            v.z = ew_round_bf16(v.z);
            v.w = ew_round_bf16(v.w);
            ((float4 *)x)[q] = v;
        } else {
            for (size_t j = i; j < n && j < i + 4; j++)
                x[j] = ew_round_bf16(x[j]);
        }
    }
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
