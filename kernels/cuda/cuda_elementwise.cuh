/* The kernels of the CUDA backend's element-wise ops, bias gradient,
 * softmax cross-entropy, optimizers and conversions (the launches, and
 * what the kernels compute, in cuda_elementwise.cu). Device code alone,
 * so that the host emulation (tests/kernels/cuda_emulation.h) runs these
 * very kernels where no GPU is. */
#ifndef ACCUBENCH_CUDA_ELEMENTWISE_CUH
#define ACCUBENCH_CUDA_ELEMENTWISE_CUH

#include "cuda_device.cuh"

/* ------------------------------------------------------- bias + GELU */

/* One pass instead of two: z[:, j] += bias and h = gelu(z). GELU reads the
 * stored (rounded) pre-activation, the same value the backward pass will
 * read, so forward and backward agree in bf16 too. */
template <typename T>
__global__ void bias_gelu_kernel(T *z, const float *bias, T *h, int rows, int cols,
                                 int gelu)
{
    for (int j = blockIdx.y; j < cols; j += gridDim.y) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += blockDim.x * gridDim.x) {
            size_t idx = (size_t)j * (size_t)rows + (size_t)i;
            float zi = quantize<T>(load(z, idx) + bias[i]);
            store(z, idx, zi);
            if (gelu)
                store(h, idx, ew_gelu(zi));
        }
    }
}

/* The same, 16 bytes a lane (V elements), where the rows (features) are a
 * multiple of V and z and h 16-byte aligned: the element-wise form keeps
 * one 2-byte bf16 load a thread in flight, its store in the way of the
 * next load (z may alias), about 0.9 TB/s by Little's law at 2048 threads
 * an SM; eight times the bytes a load here. The same roundings. */
template <typename T, int V>
__global__ void bias_gelu_vec_kernel(T *z, const float *bias, T *h, int rows, size_t n,
                                     int gelu)
{
    GRID_STRIDE(u, n / V)
    {
        const size_t idx = u * V;
        const int i = (int)(idx % (size_t)rows);
        float x[V];
        load_vec<T, V>(z, idx, x);
        for (int k = 0; k < V; k++)
            x[k] = quantize<T>(x[k] + bias[i + k]);
        store_vec<T, V>(z, idx, x);
        if (gelu) {
            for (int k = 0; k < V; k++)
                x[k] = ew_gelu(x[k]);
            store_vec<T, V>(h, idx, x);
        }
    }
}

/* ------------------------------------------------------ GELU backward */

/* h = gelu(z) from the stored pre-activation: what bias_gelu_kernel wrote,
 * recomputed for a backward that kept z alone. */
template <typename T>
__global__ void gelu_forward_kernel(const T *z, T *h, size_t n)
{
    GRID_STRIDE(i, n) { store(h, i, ew_gelu(load(z, i))); }
}

/* dz may alias dh: each element is read before it is written, and no
 * pointer is __restrict__. */
template <typename T>
__global__ void gelu_backward_kernel(const T *z, const T *dh, T *dz, size_t n)
{
    GRID_STRIDE(i, n) { store(dz, i, load(dh, i) * ew_gelu_grad(load(z, i))); }
}

/* 16 bytes a lane, as bias_gelu_vec_kernel, where n is a multiple of V and
 * the three buffers are 16-byte aligned. */
template <typename T, int V>
__global__ void gelu_backward_vec_kernel(const T *z, const T *dh, T *dz, size_t n)
{
    GRID_STRIDE(u, n / V)
    {
        float zv[V], dv[V];
        load_vec<T, V>(z, u * V, zv);
        load_vec<T, V>(dh, u * V, dv);
        for (int k = 0; k < V; k++)
            dv[k] *= ew_gelu_grad(zv[k]);
        store_vec<T, V>(dz, u * V, dv);
    }
}

/* ------------------------------------------------------- bias gradient */

/* db[i] += sum_j dz[i, j], deterministic (no atomics), in two passes so that
 * a narrow layer still fills the device: pass 1 gives each block 32 rows and
 * one chunk of the columns; its 32 x 8 threads read 32 consecutive rows of a
 * column at a time (coalesced), reduce over the 8 column lanes in shared
 * memory and write one partial sum per row and chunk. Pass 2 adds the
 * chunks' partials in a fixed order. With one chunk, pass 1 adds to db
 * itself. */
#define BG_ROWS 32
#define BG_LANES 8

template <typename T>
__global__ void bias_grad_partial_kernel(const T *dz, float *out, int accumulate,
                                         int rows, int cols, int chunk_cols)
{
    BLOCK_SHARED(float, part, [BG_LANES][BG_ROWS + 1]);
    int row = blockIdx.x * BG_ROWS + threadIdx.x;
    int first = blockIdx.y * chunk_cols;
    int last = min(cols, first + chunk_cols);
    float sum = 0.0f;
    if (row < rows)
        for (int j = first + threadIdx.y; j < last; j += BG_LANES)
            sum += load(dz, (size_t)j * (size_t)rows + (size_t)row);
    part[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && row < rows) {
        float total = 0.0f;
        for (int l = 0; l < BG_LANES; l++)
            total += part[l][threadIdx.x];
        if (accumulate)
            out[row] += total;
        else
            out[(size_t)blockIdx.y * (size_t)rows + (size_t)row] = total;
    }
}

__global__ void bias_grad_finish_kernel(const float *partial, float *db, int rows,
                                        int chunks)
{
    GRID_STRIDE(i, (size_t)rows)
    {
        float total = 0.0f;
        for (int c = 0; c < chunks; c++)
            total += partial[(size_t)c * (size_t)rows + i];
        db[i] += total;
    }
}

/* ------------------------------------------- softmax cross-entropy */

/* One warp per example. ew_softmax_xent walks an example's classes three
 * times in a row (max, sum of exponentials, gradients), which on one GPU
 * thread costs tens of microseconds for a thousand classes: longer than the
 * GEMMs of a small micro-batch, and it would distort exactly what the
 * benchmark measures. So a warp takes the row across its 32 lanes, each
 * lane V elements (16 bytes) per load, in two passes, not three: the max
 * and the sum of exponentials together (online_add: the sum rescaled when
 * the max grows), combined with shuffles, then the gradient, written by the
 * same kernel that computes the loss (the LM head's cross-entropy and its
 * backward are one pass over the logits). The per-element ew_exp and
 * formulas are the CPU's; the order of the sum and its rescaling differ.
 * Each example's loss goes to losses[j] (0 for padding), and
 * loss_sum_kernel (cuda_reduce.cuh) adds them in a fixed order. Not an
 * atomic add per block: that sums in the order the blocks finish, and the
 * loss's last bits would change from run to run. */
#define SX_THREADS 128
#define SX_WARPS (SX_THREADS / 32)
#define SX_UNROLL 4

template <typename T, int V>
__global__ void softmax_xent_kernel(const T *logits, T *dlogits, const int *labels,
                                    const int *valid, const float *scale, float *losses,
                                    int classes, int batch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const float sc = *scale;

    for (int j = blockIdx.x * SX_WARPS + warp; j < batch; j += gridDim.x * SX_WARPS) {
        const T *l = logits + (size_t)j * (size_t)classes;
        T *dl = dlogits + (size_t)j * (size_t)classes;
        float x[V];
        if (!valid[j]) { /* padding: no loss, no gradient */
            for (int k = 0; k < V; k++)
                x[k] = 0.0f;
            for (int c = lane * V; c < classes; c += 32 * V)
                store_vec<T, V>(dl, c, x);
            if (lane == 0)
                losses[j] = 0.0f;
            continue;
        }
        int label = labels[j];
        float maxv = -INFINITY, sum = 0.0f;
        /* SX_UNROLL loads of 16 bytes in flight per lane before the first
         * is used (a row of 50304 bf16 logits is 12 turns of the warp), in
         * the order the loop after them takes: the same sums, bit for bit. */
        int c = lane * V;
        for (; c + (SX_UNROLL - 1) * 32 * V < classes; c += SX_UNROLL * 32 * V) {
            float xs[SX_UNROLL][V];
#pragma unroll
            for (int u = 0; u < SX_UNROLL; u++)
                load_vec<T, V>(l, c + u * 32 * V, xs[u]);
#pragma unroll
            for (int u = 0; u < SX_UNROLL; u++)
                for (int k = 0; k < V; k++)
                    online_add(maxv, sum, xs[u][k]);
        }
        for (; c < classes; c += 32 * V) {
            load_vec<T, V>(l, c, x);
            for (int k = 0; k < V; k++)
                online_add(maxv, sum, x[k]);
        }
        warp_online(maxv, sum);
        float log_sum = logf(sum);
        c = lane * V;
        for (; c + (SX_UNROLL - 1) * 32 * V < classes; c += SX_UNROLL * 32 * V) {
            float xs[SX_UNROLL][V];
#pragma unroll
            for (int u = 0; u < SX_UNROLL; u++)
                load_vec<T, V>(l, c + u * 32 * V, xs[u]);
#pragma unroll
            for (int u = 0; u < SX_UNROLL; u++) {
                int cu = c + u * 32 * V;
                for (int k = 0; k < V; k++) {
                    float p = ew_exp(xs[u][k] - maxv - log_sum);
                    xs[u][k] = (p - (cu + k == label ? 1.0f : 0.0f)) * sc;
                }
                store_vec<T, V>(dl, cu, xs[u]);
            }
        }
        for (; c < classes; c += 32 * V) {
            load_vec<T, V>(l, c, x);
            for (int k = 0; k < V; k++) {
                float p = ew_exp(x[k] - maxv - log_sum);
                x[k] = (p - (c + k == label ? 1.0f : 0.0f)) * sc;
            }
            store_vec<T, V>(dl, c, x);
        }
        if (lane == 0)
            losses[j] = log_sum + maxv - load(l, label);
    }
}

/* ------------------------------------------- optimizers, conversion */

/* These run over every parameter once a step and are bound by memory
 * bandwidth, so each thread takes four consecutive elements per turn: one
 * 16-byte load or store per array when every pointer is aligned for it
 * (`vec`, decided on the host), element by element otherwise and in the
 * tail. */
#define VEC 4

__device__ __forceinline__ float &lane(float4 &v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

/* The hyper-parameters are read from device memory, so that a captured graph
 * picks up each step's bias correction from the upload before its replay. */
__global__ void adamw_kernel(float *w, const float *g, float *m, float *v, size_t n,
                             const adamw_hparams *h, int vec)
{
    const adamw_hparams hp = *h;
    GRID_STRIDE(q, (n + VEC - 1) / VEC)
    {
        size_t i = q * VEC;
        if (vec && i + VEC <= n) {
            float4 wq = ((float4 *)w)[q], gq = ((const float4 *)g)[q];
            float4 mq = ((float4 *)m)[q], vq = ((float4 *)v)[q];
#pragma unroll
            for (int k = 0; k < VEC; k++)
                ew_adamw(&lane(wq, k), lane(gq, k), &lane(mq, k), &lane(vq, k), &hp);
            ((float4 *)w)[q] = wq;
            ((float4 *)m)[q] = mq;
            ((float4 *)v)[q] = vq;
        } else {
            for (size_t j = i; j < n && j < i + VEC; j++)
                ew_adamw(&w[j], g[j], &m[j], &v[j], &hp);
        }
    }
}

__global__ void sgd_kernel(float *w, const float *g, size_t n, float lr, float wd, int vec)
{
    GRID_STRIDE(q, (n + VEC - 1) / VEC)
    {
        size_t i = q * VEC;
        if (vec && i + VEC <= n) {
            float4 wq = ((float4 *)w)[q], gq = ((const float4 *)g)[q];
#pragma unroll
            for (int k = 0; k < VEC; k++)
                ew_sgd(&lane(wq, k), lane(gq, k), lr, wd);
            ((float4 *)w)[q] = wq;
        } else {
            for (size_t j = i; j < n && j < i + VEC; j++)
                ew_sgd(&w[j], g[j], lr, wd);
        }
    }
}

/* fp32 -> bf16: 16 bytes in, 8 bytes out per turn. */
__global__ void to_bf16_kernel(const float *src, bf16_bits *dst, size_t n, int vec)
{
    GRID_STRIDE(q, (n + VEC - 1) / VEC)
    {
        size_t i = q * VEC;
        if (vec && i + VEC <= n) {
            float4 x = ((const float4 *)src)[q];
            ushort4 y;
            y.x = ew_f32_to_bf16_bits(x.x);
            y.y = ew_f32_to_bf16_bits(x.y);
            y.z = ew_f32_to_bf16_bits(x.z);
            y.w = ew_f32_to_bf16_bits(x.w);
            ((ushort4 *)dst)[q] = y;
        } else {
            for (size_t j = i; j < n && j < i + VEC; j++)
                store(dst, j, src[j]);
        }
    }
}

__global__ void to_f32_kernel(const bf16_bits *src, float *dst, size_t n)
{
    GRID_STRIDE(i, n) { dst[i] = load(src, i); }
}

#endif
