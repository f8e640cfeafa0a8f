/* The kernels of the CUDA backend's transformer ops: LayerNorm, causal
 * softmax, embeddings, residual add, the heads' arrangement (the
 * launches, and what the kernels compute, in cuda_transformer.cu). Device
 * code alone, so that the host emulation (tests/kernels/cuda_emulation.h)
 * runs these very kernels where no GPU is. */
#ifndef ACCUBENCH_CUDA_TRANSFORMER_CUH
#define ACCUBENCH_CUDA_TRANSFORMER_CUH

#include "cuda_device.cuh"

/* Kernels with a warp per column: four warps a block. */
#define ROW_THREADS 128
#define ROW_WARPS (ROW_THREADS / 32)

#define FOR_EACH_WARP_COLUMN(col, ncols)                                          \
    for (size_t col = (size_t)blockIdx.x * ROW_WARPS + threadIdx.x / 32; col < (ncols); \
         col += (size_t)gridDim.x * ROW_WARPS)

/* ------------------------------------------------------------ LayerNorm */

/* Two passes over the column (mean, then squared deviations), as the CPU's
 * ew_layernorm_column: a large mean costs the variance no precision. */
template <typename T>
__global__ void layernorm_forward_kernel(const T *x, const float *gamma, const float *beta,
                                         T *y, float *mean, float *rstd, int dim,
                                         size_t rows)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, rows)
    {
        const T *xc = x + col * (size_t)dim;
        T *yc = y + col * (size_t)dim;
        float sum = 0.0f;
        for (int i = lane; i < dim; i += 32)
            sum += load(xc, i);
        float mu = warp_sum(sum) / (float)dim;
        float sq = 0.0f;
        for (int i = lane; i < dim; i += 32) {
            float d = load(xc, i) - mu;
            sq += d * d;
        }
        float rs = ew_layernorm_rstd(warp_sum(sq), dim);
        for (int i = lane; i < dim; i += 32)
            store(yc, i, ew_layernorm_out(load(xc, i), mu, rs, gamma[i], beta[i]));
        if (lane == 0) {
            mean[col] = mu;
            rstd[col] = rs;
        }
    }
}

/* dx += the input gradient, one warp per column; dx is fp32 (the residual
 * stream's gradient) whatever T is. */
template <typename T>
__global__ void layernorm_dx_kernel(const T *dy, const T *x, const float *gamma,
                                    const float *mean, const float *rstd, float *dx, int dim,
                                    size_t rows)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, rows)
    {
        size_t off = col * (size_t)dim;
        const float mu = mean[col], rs = rstd[col];
        float g_sum = 0.0f, gx_sum = 0.0f;
        for (int i = lane; i < dim; i += 32) {
            float g = load(dy, off + i) * gamma[i];
            g_sum += g;
            gx_sum += g * ew_layernorm_xhat(load(x, off + i), mu, rs);
        }
        float g_mean = warp_sum(g_sum) / (float)dim, gx_mean = warp_sum(gx_sum) / (float)dim;
        for (int i = lane; i < dim; i += 32) {
            float d = ew_layernorm_dx(load(dy, off + i) * gamma[i],
                                      ew_layernorm_xhat(load(x, off + i), mu, rs), rs, g_mean,
                                      gx_mean);
            dx[off + i] += d;
        }
    }
}

/* dgamma += sum_cols dy xhat and dbeta += sum_cols dy, the way the bias
 * gradient is reduced (cuda_elementwise.cu): a block takes 32 features and
 * one chunk of the columns, its 32 x 8 threads read 32 consecutive features
 * of a column at a time and reduce over the 8 column lanes in shared
 * memory; with several chunks the partial sums go to the scratch (gamma's
 * chunks, then beta's) and a second pass adds them in a fixed order. */
#define LP_FEATURES 32
#define LP_LANES 8

template <typename T>
__global__ void layernorm_param_partial_kernel(const T *dy, const T *x, const float *mean,
                                               const float *rstd, float *dgamma,
                                               float *dbeta, float *partial, int dim,
                                               int rows, int chunk_cols)
{
    BLOCK_SHARED(float, part_g, [LP_LANES][LP_FEATURES + 1]);
    BLOCK_SHARED(float, part_b, [LP_LANES][LP_FEATURES + 1]);
    int f = blockIdx.x * LP_FEATURES + threadIdx.x;
    int first = blockIdx.y * chunk_cols;
    int last = min(rows, first + chunk_cols);
    float sg = 0.0f, sb = 0.0f;
    if (f < dim)
        for (int j = first + threadIdx.y; j < last; j += LP_LANES) {
            size_t idx = (size_t)j * (size_t)dim + (size_t)f;
            float d = load(dy, idx);
            sg += d * ew_layernorm_xhat(load(x, idx), mean[j], rstd[j]);
            sb += d;
        }
    part_g[threadIdx.y][threadIdx.x] = sg;
    part_b[threadIdx.y][threadIdx.x] = sb;
    __syncthreads();
    if (threadIdx.y == 0 && f < dim) {
        float tg = 0.0f, tb = 0.0f;
        for (int l = 0; l < LP_LANES; l++) {
            tg += part_g[l][threadIdx.x];
            tb += part_b[l][threadIdx.x];
        }
        if (!partial) {
            dgamma[f] += tg;
            dbeta[f] += tb;
        } else {
            size_t chunks = gridDim.y;
            partial[(size_t)blockIdx.y * (size_t)dim + (size_t)f] = tg;
            partial[(chunks + blockIdx.y) * (size_t)dim + (size_t)f] = tb;
        }
    }
}

__global__ void layernorm_param_finish_kernel(const float *partial, float *dgamma,
                                              float *dbeta, int dim, int chunks)
{
    GRID_STRIDE(i, (size_t)dim)
    {
        float tg = 0.0f, tb = 0.0f;
        for (int c = 0; c < chunks; c++) {
            tg += partial[(size_t)c * (size_t)dim + i];
            tb += partial[((size_t)chunks + (size_t)c) * (size_t)dim + i];
        }
        dgamma[i] += tg;
        dbeta[i] += tb;
    }
}

/* ------------------------------------------------------- causal softmax */

/* Column c of the score blocks is query i = c % t, starting at c * t; only
 * keys j <= i are read. Each lane takes V consecutive keys (16 bytes) per
 * load; one pass finds the max and the sum of exponentials together
 * (online_add), a second writes the probabilities, zeros above the
 * diagonal. */
template <typename T, int V>
__global__ void causal_softmax_forward_kernel(const T *scores, T *probs, float scale, int t,
                                              size_t ncols)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, ncols)
    {
        const int i = (int)(col % (size_t)t);
        const T *s = scores + col * (size_t)t;
        T *p = probs + col * (size_t)t;
        float x[V], maxv = -INFINITY, sum = 0.0f;
        for (int j = lane * V; j <= i; j += 32 * V) {
            load_vec<T, V>(s, j, x);
            for (int k = 0; k < V && j + k <= i; k++)
                online_add(maxv, sum, x[k] * scale);
        }
        warp_online(maxv, sum);
        float inv_sum = 1.0f / sum;
        for (int j = lane * V; j < t; j += 32 * V) {
            if (j <= i)
                load_vec<T, V>(s, j, x);
            for (int k = 0; k < V; k++)
                x[k] = j + k <= i ? ew_causal_softmax_prob(
                                        ew_causal_softmax_exp(x[k], scale, maxv), inv_sum,
                                        j + k, i)
                                  : 0.0f;
            store_vec<T, V>(p, j, x);
        }
    }
}

/* dscores may alias dprobs: the dot product reads every dprobs of the
 * column before the shuffles, and then each lane reads its V elements just
 * before it overwrites them. 16-byte loads as in the forward. */
template <typename T, int V>
__global__ void causal_softmax_backward_kernel(const T *probs, const T *dprobs, T *dscores,
                                               float scale, int t, size_t ncols)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, ncols)
    {
        const int i = (int)(col % (size_t)t);
        size_t off = col * (size_t)t;
        float pv[V], dv[V], dot = 0.0f;
        for (int j = lane * V; j <= i; j += 32 * V) {
            load_vec<T, V>(probs, off + j, pv);
            load_vec<T, V>(dprobs, off + j, dv);
            for (int k = 0; k < V && j + k <= i; k++)
                dot += pv[k] * dv[k];
        }
        dot = warp_sum(dot);
        for (int j = lane * V; j < t; j += 32 * V) {
            load_vec<T, V>(probs, off + j, pv);
            load_vec<T, V>(dprobs, off + j, dv);
            for (int k = 0; k < V; k++)
                pv[k] = ew_causal_softmax_dscore(pv[k], dv[k], dot, scale, j + k, i);
            store_vec<T, V>(dscores, off + j, pv);
        }
    }
}

/* ----------------------------------------------------------- embeddings */

/* out[:, c] = wte[:, tokens[c]] + wpe[:, c % t], element by element. */
template <typename T>
__global__ void embedding_forward_kernel(const int *tokens, const float *wte,
                                         const float *wpe, T *out, int dim, int t, size_t n)
{
    GRID_STRIDE(idx, n)
    {
        size_t c = idx / (size_t)dim, r = idx - c * (size_t)dim;
        size_t pos = c % (size_t)t;
        /* wpe NULL: no position table (a rotary model). */
        float pe = wpe ? wpe[pos * (size_t)dim + r] : 0.0f;
        store(out, idx, wte[(size_t)tokens[c] * (size_t)dim + r] + pe);
    }
}

/* dwte[:, tokens[c]] += dout[:, c], in the order of the positions c, as
 * the CPU adds them: the same sums to the bit, and the same from run to
 * run (atomic adds, in the scheduler's order, made the execution modes'
 * weights differ in their last bits, which AdamW and tf32's rounding then
 * grew). Block b of the grid's G owns the rows of the tokens tok with
 * tok % G == b: no other block touches them. It walks the positions in
 * chunks of EMB_THREADS (skipping a chunk that holds none of its tokens)
 * and adds each of its positions' columns to its token's row, in position
 * order, each thread its own elements of the row. Linear in the positions:
 * each block reads the token list once (G x count ints, from L2), where a
 * block per position that first scanned the earlier positions for its
 * token was quadratic, about 5-10 ms a micro-batch of 64 sequences of 1024
 * tokens, a cost that grew with the micro-batch the tool compares. */
#define EMB_THREADS 256
template <typename T>
__global__ void __launch_bounds__(EMB_THREADS)
    embedding_dwte_kernel(const int *tokens, const T *dout, float *dwte, int dim, int count)
{
    BLOCK_SHARED(int, chunk, [EMB_THREADS]);
    const unsigned owner = blockIdx.x, owners = gridDim.x;
    for (int base = 0; base < count; base += EMB_THREADS) {
        const int j = base + (int)threadIdx.x;
        const int tok = j < count ? tokens[j] : -1;
        chunk[threadIdx.x] = tok;
        /* the barrier also publishes chunk[] */
        if (!__syncthreads_or(tok >= 0 && (unsigned)tok % owners == owner))
            continue; /* every thread of the block alike; nobody reads chunk[] */
        const int end = min(EMB_THREADS, count - base);
        for (int q = 0; q < end; q++) {
            const int tq = chunk[q];
            if ((unsigned)tq % owners != owner)
                continue;
            float *row = dwte + (size_t)tq * (size_t)dim;
            const size_t col = (size_t)(base + q) * (size_t)dim;
            for (int r = (int)threadIdx.x; r < dim; r += EMB_THREADS)
                row[r] += load(dout, col + (size_t)r);
        }
        __syncthreads(); /* every read of chunk[] before the next chunk's stores */
    }
}

/* dwpe[:, i] += sum_q dout[:, q * t + i]: one thread per element of dwpe,
 * the sequences in order. */
template <typename T>
__global__ void embedding_dwpe_kernel(const T *dout, float *dwpe, int dim, int t, int batch)
{
    size_t per_seq = (size_t)dim * (size_t)t;
    GRID_STRIDE(idx, per_seq)
    {
        float sum = 0.0f;
        for (int q = 0; q < batch; q++)
            sum += load(dout, (size_t)q * per_seq + idx);
        dwpe[idx] += sum;
    }
}

/* ------------------------------------------------------------ residual */

/* y += x; y may be x. */
template <typename T> __global__ void add_kernel(T *y, const T *x, size_t n)
{
    GRID_STRIDE(i, n) { store(y, i, load(y, i) + load(x, i)); }
}

/* ------------------------------------------------------ head arrangement */

/* One thread per unit of U (16, 4 or 2 bytes) of a run of hd elements: run
 * r of the per-head side is row i of block (p, q, h), r = ((p * batch + q)
 * * heads + h) * t + i, and the same run sits at token q * t + i, part p,
 * head h on the other side. A copy, so bf16 and fp32 differ only in how
 * many units a run holds. */
template <typename U>
__global__ void permute_heads_kernel(const U *src, U *dst, size_t run_units, int heads, int t,
                                     int batch, int parts, int to_tokens, size_t n_units)
{
    GRID_STRIDE(u, n_units)
    {
        size_t r = u / run_units, w = u % run_units, rest = r;
        size_t i = rest % (size_t)t;
        rest /= (size_t)t;
        size_t h = rest % (size_t)heads;
        rest /= (size_t)heads;
        size_t q = rest % (size_t)batch, p = rest / (size_t)batch;
        size_t tok = ((q * (size_t)t + i) * (size_t)parts + p) * (size_t)heads + h;
        size_t a = r * run_units + w, c = tok * run_units + w;
        if (to_tokens)
            dst[c] = src[a];
        else
            dst[a] = src[c];
    }
}

#endif
