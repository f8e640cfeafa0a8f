/* LayerNorm's and RMSNorm's forward and input gradient with a warp's
 * column held in registers (CENTRED: LayerNorm, which takes the mean out;
 * else RMSNorm). The loop kernels (cuda_transformer.cuh,
 * cuda_llama_ops.cuh) read a column two or three times, two bytes a lane a
 * load in bf16: at GPT-2 small's 768 features that is 24 dependent turns
 * of small loads a pass, bound by latency rather than by the memory. Here
 * every load of a column is issued at once, 16 bytes a lane, and the
 * passes after the first read registers. The same shared functions
 * (elementwise.h) give each element; only the order of the sums across
 * the warp differs from the loop kernels' (lane l holds elements 8l..8l+7
 * in bf16, not l, l+32, ...). Where the features are not a whole number
 * of 16-byte vectors, a buffer is not aligned or the column does not fit
 * (column_regs 0), the launches take the loop kernels. Device code alone,
 * for the host emulation. */
#ifndef ACCUBENCH_CUDA_NORM_REGS_CUH
#define ACCUBENCH_CUDA_NORM_REGS_CUH

#include "cuda_device.cuh"

/* V fp32 values at p + i (i a multiple of 4, p 16-byte aligned): V / 4
 * 16-byte loads. The gains, biases and the fp32 input gradient. */
template <int V> __device__ __forceinline__ void load_f32_vec(const float *p, size_t i, float *out)
{
    for (int h = 0; h < V; h += 4)
        load_vec<float, 4>(p, i + h, out + h);
}

template <int V> __device__ __forceinline__ void store_f32_vec(float *p, size_t i, const float *in)
{
    for (int h = 0; h < V; h += 4)
        store_vec<float, 4>(p, i + h, in + h);
}

/* A lane's share of a column of dim elements (dim a multiple of V): every
 * vector's load issued before any is used; vectors past the column read
 * as 0. */
template <typename T, int V, int NV>
__device__ __forceinline__ void load_column(const T *c, int dim, int lane, float (&v)[NV][V])
{
#pragma unroll
    for (int n = 0; n < NV; n++) {
        const int j = (n * 32 + lane) * V;
        if (j < dim)
            load_vec<T, V>(c, j, v[n]);
        else
            for (int k = 0; k < V; k++)
                v[n][k] = 0.0f;
    }
}

/* y = the normalised column times gamma (plus beta, centred); the
 * column's mean (centred) and rstd. Two sums as ew_layernorm_column makes
 * them (the mean, then the squared deviations), from registers. */
template <typename T, int V, int NV, bool CENTRED>
__global__ void norm_forward_regs_kernel(const T *x, const float *gamma, const float *beta,
                                         T *y, float *mean, float *rstd, int dim, size_t rows)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, rows)
    {
        float v[NV][V];
        load_column<T, V, NV>(x + col * (size_t)dim, dim, lane, v);
        float mu = 0.0f;
        if (CENTRED) {
            float sum = 0.0f; /* the vectors past the column add zeros */
#pragma unroll
            for (int n = 0; n < NV; n++)
#pragma unroll
                for (int k = 0; k < V; k++)
                    sum += v[n][k];
            mu = warp_sum(sum) / (float)dim;
        }
        float sq = 0.0f;
#pragma unroll
        for (int n = 0; n < NV; n++)
            if ((n * 32 + lane) * V < dim)
#pragma unroll
                for (int k = 0; k < V; k++)
                    sq += (v[n][k] - mu) * (v[n][k] - mu);
        const float rs = CENTRED ? ew_layernorm_rstd(warp_sum(sq), dim)
                                 : ew_rmsnorm_rstd(warp_sum(sq), dim);
        T *yc = y + col * (size_t)dim;
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j >= dim)
                continue;
            float g[V], b[V];
            load_f32_vec<V>(gamma, j, g);
            if (CENTRED)
                load_f32_vec<V>(beta, j, b);
#pragma unroll
            for (int k = 0; k < V; k++)
                v[n][k] = CENTRED ? ew_layernorm_out(v[n][k], mu, rs, g[k], b[k])
                                  : v[n][k] * rs * g[k];
            store_vec<T, V>(yc, j, v[n]);
        }
        if (lane == 0) {
            if (CENTRED)
                mean[col] = mu;
            rstd[col] = rs;
        }
    }
}

/* dx += the input gradient (dx fp32, the residual stream's gradient):
 * g = dy gamma and xhat kept in the registers that loaded dy and x, their
 * column means, then dx read, added to and written a vector at a time. */
template <typename T, int V, int NV, bool CENTRED>
__global__ void norm_dx_regs_kernel(const T *dy, const T *x, const float *gamma,
                                    const float *mean, const float *rstd, float *dx, int dim,
                                    size_t rows)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, rows)
    {
        const size_t off = col * (size_t)dim;
        const float mu = CENTRED ? mean[col] : 0.0f, rs = rstd[col];
        float g[NV][V], xh[NV][V];
        load_column<T, V, NV>(dy + off, dim, lane, g);
        load_column<T, V, NV>(x + off, dim, lane, xh);
        float g_sum = 0.0f, gx_sum = 0.0f;
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j >= dim)
                continue;
            float gm[V];
            load_f32_vec<V>(gamma, j, gm);
#pragma unroll
            for (int k = 0; k < V; k++) {
                g[n][k] *= gm[k];
                xh[n][k] = CENTRED ? ew_layernorm_xhat(xh[n][k], mu, rs) : xh[n][k] * rs;
                g_sum += g[n][k];
                gx_sum += g[n][k] * xh[n][k];
            }
        }
        const float g_mean = CENTRED ? warp_sum(g_sum) / (float)dim : 0.0f;
        const float gx_mean = warp_sum(gx_sum) / (float)dim;
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j >= dim)
                continue;
            float d[V];
            load_f32_vec<V>(dx, off + j, d);
#pragma unroll
            for (int k = 0; k < V; k++)
                d[k] += CENTRED ? ew_layernorm_dx(g[n][k], xh[n][k], rs, g_mean, gx_mean)
                                : ew_rmsnorm_dx(g[n][k], xh[n][k], rs, gx_mean);
            store_f32_vec<V>(dx, off + j, d);
        }
    }
}

#endif
