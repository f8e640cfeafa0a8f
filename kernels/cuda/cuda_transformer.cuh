/* The kernels of the CUDA backend's transformer ops: LayerNorm, causal
 * softmax, embeddings, residual add, the heads' arrangement (the
 * launches, and what the kernels compute, in cuda_transformer.cu). Device
 * code alone, so that the host emulation (tests/kernels/cuda_emulation.h)
 * runs these very kernels where no GPU is. */
#ifndef ACCUBENCH_CUDA_TRANSFORMER_CUH
#define ACCUBENCH_CUDA_TRANSFORMER_CUH

#include "cuda_device.cuh"

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

/* The column held in registers, NV vectors of V a lane (t <= 32 V NV):
 * every load of a column issued at once, then the max (no exponential),
 * the exponentials once each (ew_causal_softmax_exp: the CPU's terms to
 * the bit) and their sum, and the probabilities from the registers. The
 * loop kernel above reads the column twice and makes each exponential
 * twice, once inside online_add's branch, and its warp_online ten more a
 * column: at GPT-2 small's 1024 keys it is bound by issue at about 2.5
 * times the memory's time. For t up to 32 V 8 (2048 keys in bf16, 1024
 * in fp32): column_regs picks NV. Vectors wholly above the
 * diagonal are neither read nor computed, only zeroed. */
template <typename T, int V, int NV>
__global__ void causal_softmax_forward_regs_kernel(const T *scores, T *probs, float scale,
                                                   int t, size_t ncols)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, ncols)
    {
        const int i = (int)(col % (size_t)t);
        const T *s = scores + col * (size_t)t;
        T *p = probs + col * (size_t)t;
        float x[NV][V];
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j <= i)
                load_vec<T, V>(s, j, x[n]);
            else /* never read: initialised for the compilers' sake */
                for (int k = 0; k < V; k++)
                    x[n][k] = 0.0f;
        }
        float maxv = -INFINITY;
#pragma unroll
        for (int n = 0; n < NV; n++)
#pragma unroll
            for (int k = 0; k < V; k++)
                if ((n * 32 + lane) * V + k <= i)
                    maxv = fmaxf(maxv, x[n][k] * scale);
        maxv = warp_max(maxv);
        float sum = 0.0f;
#pragma unroll
        for (int n = 0; n < NV; n++)
#pragma unroll
            for (int k = 0; k < V; k++)
                if ((n * 32 + lane) * V + k <= i) {
                    x[n][k] = ew_causal_softmax_exp(x[n][k], scale, maxv);
                    sum += x[n][k];
                }
        const float inv_sum = 1.0f / warp_sum(sum);
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j >= t)
                continue;
#pragma unroll
            for (int k = 0; k < V; k++)
                x[n][k] = j + k <= i ? ew_causal_softmax_prob(x[n][k], inv_sum, j + k, i) : 0.0f;
            store_vec<T, V>(p, j, x[n]);
        }
    }
}

/* The backward's column in registers likewise: probs and dprobs read once
 * (the loop kernel above reads them twice, and above the diagonal too),
 * then the dot product, in the loop kernel's order, and dscores written
 * from the registers. Every load of a column precedes its stores, so
 * dscores may alias dprobs. */
template <typename T, int V, int NV>
__global__ void causal_softmax_backward_regs_kernel(const T *probs, const T *dprobs,
                                                    T *dscores, float scale, int t,
                                                    size_t ncols)
{
    const int lane = threadIdx.x & 31;
    FOR_EACH_WARP_COLUMN(col, ncols)
    {
        const int i = (int)(col % (size_t)t);
        const size_t off = col * (size_t)t;
        float pv[NV][V], dv[NV][V];
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j <= i) {
                load_vec<T, V>(probs, off + j, pv[n]);
                load_vec<T, V>(dprobs, off + j, dv[n]);
            } else { /* never read: initialised for the compilers' sake */
                for (int k = 0; k < V; k++)
                    pv[n][k] = dv[n][k] = 0.0f;
            }
        }
        float dot = 0.0f;
#pragma unroll
        for (int n = 0; n < NV; n++)
#pragma unroll
            for (int k = 0; k < V; k++)
                if ((n * 32 + lane) * V + k <= i)
                    dot += pv[n][k] * dv[n][k];
        dot = warp_sum(dot);
#pragma unroll
        for (int n = 0; n < NV; n++) {
            const int j = (n * 32 + lane) * V;
            if (j >= t)
                continue;
#pragma unroll
            for (int k = 0; k < V; k++)
                pv[n][k] = j + k <= i
                               ? ew_causal_softmax_dscore(pv[n][k], dv[n][k], dot, scale, j + k, i)
                               : 0.0f;
            store_vec<T, V>(dscores, off + j, pv[n]);
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
 * grew). The grid is owners x slices: block (b, y) owns elements y *
 * EMB_THREADS + tid of the rows of the tokens tok with tok % owners == b,
 * a thread an element, so no two threads touch one element. The block
 * walks the positions in chunks of EMB_THREADS, lists its own in order
 * (a warp's ballot, then the warps' counts), and each thread adds its
 * element of their columns in that order into a register, which goes back
 * to the row when the token changes (then the next token's row is read):
 * ((row + d1) + d2) + ..., the CPU's sums.
 *
 * Why so: a token's sum is a chain, one add after another, and the data
 * make one token common (the padding after each document, token 0: about
 * half of every micro-batch, 4096 of the 8192 positions of 8 sequences of
 * 1024). A chain through memory, a load and a store of the row for each
 * position, costs a memory latency a link, milliseconds a micro-batch. In
 * a register it costs an add a link, the columns' loads EMB_BATCH at a
 * time in flight ahead of it. And each block reads the token list once
 * (owners x slices x count ints from L2): linear in the positions. */
#define EMB_THREADS 256
#define EMB_WARPS (EMB_THREADS / 32)
#define EMB_BATCH 16 /* columns' loads in flight a thread */
template <typename T>
__global__ void __launch_bounds__(EMB_THREADS)
    embedding_dwte_kernel(const int *tokens, const T *dout, float *dwte, int dim, int count)
{
    BLOCK_SHARED(int, list_pos, [EMB_THREADS]);
    BLOCK_SHARED(int, list_tok, [EMB_THREADS]);
    BLOCK_SHARED(int, warp_count, [EMB_WARPS]);
    const unsigned owner = blockIdx.x, owners = gridDim.x;
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    const int r = (int)(blockIdx.y * EMB_THREADS + threadIdx.x);
    const bool has_r = r < dim;
    int cur = -1;    /* the token whose element acc holds */
    float acc = 0.0f;
    for (int base = 0; base < count; base += EMB_THREADS) {
        /* this chunk's positions of the block's tokens, in order */
        const int j = base + (int)threadIdx.x;
        const int tok = j < count ? tokens[j] : -1;
        const bool mine = tok >= 0 && (unsigned)tok % owners == owner;
        const unsigned bits = __ballot_sync(0xffffffffu, mine);
        if (lane == 0)
            warp_count[warp] = __popc(bits);
        __syncthreads();
        int at = __popc(bits & ((1u << lane) - 1u)), listed = 0;
        for (int w = 0; w < EMB_WARPS; w++) {
            at += w < warp ? warp_count[w] : 0;
            listed += warp_count[w];
        }
        if (mine) {
            list_pos[at] = j;
            list_tok[at] = tok;
        }
        __syncthreads();
        for (int i = 0; i < listed; i += EMB_BATCH) {
            float col[EMB_BATCH];
#pragma unroll
            for (int u = 0; u < EMB_BATCH; u++)
                col[u] = has_r && i + u < listed
                             ? load(dout, (size_t)list_pos[i + u] * (size_t)dim + (size_t)r)
                             : 0.0f;
#pragma unroll
            for (int u = 0; u < EMB_BATCH; u++) {
                if (i + u >= listed)
                    break; /* every thread of the block alike */
                const int tq = list_tok[i + u];
                if (tq != cur) {
                    if (has_r && cur >= 0)
                        dwte[(size_t)cur * (size_t)dim + (size_t)r] = acc;
                    cur = tq;
                    acc = has_r ? dwte[(size_t)cur * (size_t)dim + (size_t)r] : 0.0f;
                }
                acc += col[u];
            }
        }
        __syncthreads(); /* every read of the lists before the next chunk's */
    }
    if (has_r && cur >= 0)
        dwte[(size_t)cur * (size_t)dim + (size_t)r] = acc;
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

/* The same 16 bytes a lane (V elements), where n is a multiple of V and
 * both buffers 16-byte aligned: eight times the bytes a load in bf16. */
template <typename T, int V> __global__ void add_vec_kernel(T *y, const T *x, size_t n)
{
    GRID_STRIDE(u, n / V)
    {
        float yv[V], xv[V];
        load_vec<T, V>(y, u * V, yv);
        load_vec<T, V>(x, u * V, xv);
        for (int k = 0; k < V; k++)
            yv[k] += xv[k];
        store_vec<T, V>(y, u * V, yv);
    }
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
