/* The kernels of the CUDA backend's noise-pass reductions (the sum of
 * squares, axpy), of the cross-entropy's loss sum and of the bf16
 * accumulator's rounding (the launches, and what the kernels compute, in
 * cuda_reduce.cu). Device code alone, so that the host emulation
 * (tests/kernels/cuda_emulation.h) runs these very kernels where no GPU
 * is. */
#ifndef ACCUBENCH_CUDA_REDUCE_CUH
#define ACCUBENCH_CUDA_REDUCE_CUH

#include "cuda_device.cuh"

#define SQ_THREADS 256 /* a power of two: block_sum halves it */
/* Enough blocks to fill an H200 (132 SMs) several times over; the partials
 * (8 KiB) live in the backend's reduction scratch. */
#define SQ_MAX_BLOCKS 1024
#define SQ_UNROLL 4 /* 16-byte loads in flight per thread before the first use */

/* The block's sum, in a tree of fixed shape: every thread gets it. */
__device__ double block_sum(double v)
{
    BLOCK_SHARED(double, s, [SQ_THREADS]);
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

/* *loss_sum += the sum of n examples' losses (softmax_xent_kernel's, one
 * float each), in an order that n alone fixes: thread t adds losses t,
 * t + SQ_THREADS, ... in double, then block_sum's tree. One block, so no
 * part of the order is the scheduler's, and the loss repeats to the bit
 * on any device and any grid the cross-entropy ran on. What is added to
 * *loss_sum is one float a call, as the CPU backend adds its own. */
__global__ void __launch_bounds__(SQ_THREADS)
    loss_sum_kernel(const float *losses, int n, float *loss_sum)
{
    double acc = 0;
    for (int i = threadIdx.x; i < n; i += SQ_THREADS)
        acc += losses[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        *loss_sum += (float)acc;
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

#endif
