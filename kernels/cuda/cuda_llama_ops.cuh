/* The kernels of the CUDA backend's Llama ops: RMSNorm, SwiGLU, the
 * rotary embedding, the repeat of the key and value heads (the launches,
 * and what the kernels compute, in cuda_llama_ops.cu). Device code alone,
 * so that the host emulation (tests/kernels/cuda_emulation.h) runs these
 * very kernels where no GPU is. */
#ifndef ACCUBENCH_CUDA_LLAMA_OPS_CUH
#define ACCUBENCH_CUDA_LLAMA_OPS_CUH

#include "cuda_device.cuh"

/* -------------------------------------------------------------- RMSNorm */

template <typename T>
__global__ void rmsnorm_forward_kernel(const T *x, const float *gamma, T *y, float *rstd,
                                       int dim, size_t rows)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, rows)
    {
        const T *xc = x + col * (size_t)dim;
        T *yc = y + col * (size_t)dim;
        float sq = 0.0f;
        for (int i = lane; i < dim; i += 32) {
            float v = load(xc, i);
            sq += v * v;
        }
        float rs = ew_rmsnorm_rstd(warp_sum(sq), dim);
        for (int i = lane; i < dim; i += 32)
            store(yc, i, load(xc, i) * rs * gamma[i]);
        if (lane == 0)
            rstd[col] = rs;
    }
}

template <typename T>
__global__ void rmsnorm_dx_kernel(const T *dy, const T *x, const float *gamma,
                                  const float *rstd, float *dx, int dim, size_t rows)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, rows)
    {
        size_t off = col * (size_t)dim;
        const float rs = rstd[col];
        float gx_sum = 0.0f;
        for (int i = lane; i < dim; i += 32)
            gx_sum += load(dy, off + i) * gamma[i] * load(x, off + i) * rs;
        float gx_mean = warp_sum(gx_sum) / (float)dim;
        for (int i = lane; i < dim; i += 32)
            dx[off + i] += ew_rmsnorm_dx(load(dy, off + i) * gamma[i], load(x, off + i) * rs,
                                         rs, gx_mean);
    }
}

/* dgamma += sum_cols dy x rstd, reduced as LayerNorm's gain and bias are
 * (cuda_transformer.cu): a block takes 32 features and one chunk of the
 * columns, its 32 x 8 threads read 32 consecutive features of a column at
 * a time and reduce over the 8 column lanes in shared memory; with several
 * chunks the partial sums go to the scratch and a second pass adds them in
 * a fixed order. Deterministic, and enough blocks to fill the device. */
#define RG_FEATURES 32
#define RG_LANES 8

template <typename T>
__global__ void rmsnorm_gain_partial_kernel(const T *dy, const T *x, const float *rstd,
                                            float *dgamma, float *partial, int dim, int rows,
                                            int chunk_cols)
{
    BLOCK_SHARED(float, part, [RG_LANES][RG_FEATURES + 1]);
    int f = blockIdx.x * RG_FEATURES + threadIdx.x;
    int first = blockIdx.y * chunk_cols;
    int last = min(rows, first + chunk_cols);
    float sum = 0.0f;
    if (f < dim)
        for (int j = first + threadIdx.y; j < last; j += RG_LANES) {
            size_t idx = (size_t)j * (size_t)dim + (size_t)f;
            sum += load(dy, idx) * load(x, idx) * rstd[j];
        }
    part[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && f < dim) {
        float total = 0.0f;
        for (int l = 0; l < RG_LANES; l++)
            total += part[l][threadIdx.x];
        if (!partial)
            dgamma[f] += total;
        else
            partial[(size_t)blockIdx.y * (size_t)dim + (size_t)f] = total;
    }
}

__global__ void rmsnorm_gain_finish_kernel(const float *partial, float *dgamma, int dim,
                                           int chunks)
{
    GRID_STRIDE(i, (size_t)dim)
    {
        float total = 0.0f;
        for (int c = 0; c < chunks; c++)
            total += partial[(size_t)c * (size_t)dim + i];
        dgamma[i] += total;
    }
}

/* --------------------------------------------------------------- SwiGLU */

template <typename T>
__global__ void swiglu_forward_kernel(const T *gate, const T *up, T *h, size_t n)
{
    GRID_STRIDE(i, n)
    store(h, i, ew_swiglu(load(gate, i), load(up, i)));
}

/* dh is read before dgate (which may alias it) is written. */
template <typename T>
__global__ void swiglu_backward_kernel(const T *gate, const T *up, const T *dh, T *dgate,
                                       T *dup, size_t n)
{
    GRID_STRIDE(i, n)
    {
        float g = load(gate, i), u = load(up, i), d = load(dh, i);
        store(dup, i, ew_swiglu_dup(g, d));
        store(dgate, i, ew_swiglu_dgate(g, u, d));
    }
}

/* --------------------------------------------------------------- rotary */

/* One thread per (column, head, pair e < hd/2). */
template <typename T>
__global__ void rotary_kernel(T *x, int ld, int heads, int hd, int t, size_t cols, float theta,
                              float sign)
{
    size_t half = (size_t)hd / 2, per_col = (size_t)heads * half;
    GRID_STRIDE(idx, cols * per_col)
    {
        size_t c = idx / per_col, r = idx - c * per_col;
        size_t h = r / half, e = r - h * half;
        float angle = ew_rotary_angle((int)(c % (size_t)t), (int)e, hd, theta);
        float cosv = cosf(angle), sinv = sign * sinf(angle);
        size_t at = c * (size_t)ld + h * (size_t)hd + e;
        float a = load(x, at), bv = load(x, at + half);
        ew_rotate(&a, &bv, cosv, sinv);
        store(x, at, a);
        store(x, at + half, bv);
    }
}

/* ------------------------------------------------------------ repeat_kv */

/* One thread per element of dst's rows: dst[p, h, e] = kv[p, h / group, e]. */
template <typename T>
__global__ void repeat_kv_kernel(const T *kv, T *dst, int ld_dst, int hd, int kv_heads,
                                 int group, int parts, size_t cols)
{
    size_t kvd = (size_t)kv_heads * (size_t)hd, qd = kvd * (size_t)group;
    size_t per_col = (size_t)parts * qd;
    GRID_STRIDE(idx, cols * per_col)
    {
        size_t c = idx / per_col, r = idx - c * per_col;
        size_t p = r / qd, q = r - p * qd, h = q / (size_t)hd, e = q - h * (size_t)hd;
        T v = kv[c * (size_t)parts * kvd + p * kvd + h / (size_t)group * (size_t)hd + e];
        dst[c * (size_t)ld_dst + r] = v;
    }
}

/* One thread per element of dkv: the sum over its group, in head order. */
template <typename T>
__global__ void repeat_kv_backward_kernel(const T *ddst, int ld_dst, T *dkv, int hd,
                                          int kv_heads, int group, int parts, size_t cols)
{
    size_t kvd = (size_t)kv_heads * (size_t)hd, qd = kvd * (size_t)group;
    size_t per_col = (size_t)parts * kvd;
    GRID_STRIDE(idx, cols * per_col)
    {
        size_t c = idx / per_col, r = idx - c * per_col;
        size_t p = r / kvd, q = r - p * kvd, g = q / (size_t)hd, e = q - g * (size_t)hd;
        const T *from = ddst + c * (size_t)ld_dst + p * qd + g * (size_t)group * (size_t)hd + e;
        float sum = 0.0f;
        for (int k = 0; k < group; k++)
            sum += load(from, (size_t)k * (size_t)hd);
        store(dkv, idx, sum);
    }
}

#endif
