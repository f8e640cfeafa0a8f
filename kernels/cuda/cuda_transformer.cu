/* The CUDA backend's transformer ops: LayerNorm, causal softmax, the token
 * and position embeddings, the residual add and the heads' arrangement for
 * attention, in fp32 or bf16 storage.
 *
 * The per-row ops give one warp to a column: its lanes sum elementwise.h's
 * terms across the column (coalesced reads), warp shuffles finish the sums,
 * and every other step is the shared function the CPU backend calls (the
 * ew_layernorm_* and ew_causal_softmax_* pieces), so only the order of the
 * sums differs from the CPU's. Sums over columns are deterministic two-pass
 * reductions (LayerNorm's parameter gradients, like the bias gradient) or a
 * fixed loop (the position embedding's gradient); the token embedding's
 * gradient adds with fp32 atomics, since any token may repeat anywhere in a
 * micro-batch.
 *
 * Every op issues its kernels on the backend's compute stream and returns
 * without waiting. */
#include "cuda_check.h"
#include "cuda_internal.h"
#include "cuda_kernels.h"
#include "elementwise.h"

/* Kernels with a warp per column: four warps a block. */
#define ROW_THREADS 128
#define ROW_WARPS (ROW_THREADS / 32)

#define FOR_EACH_WARP_COLUMN(col, ncols)                                          \
    for (size_t col = (size_t)blockIdx.x * ROW_WARPS + threadIdx.x / 32; col < (ncols); \
         col += (size_t)gridDim.x * ROW_WARPS)

static unsigned row_blocks(const backend *b, size_t ncols)
{
    return blocks_for(b, ncols, ROW_WARPS);
}

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

extern "C" int cuda_layernorm_forward(backend *b, storage s, const void *x,
                                      const float *gamma, const float *beta, void *y,
                                      float *mean, float *rstd, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    unsigned g = row_blocks(b, (size_t)rows);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        layernorm_forward_kernel<bf16_bits><<<g, ROW_THREADS, 0, st>>>(
            (const bf16_bits *)x, gamma, beta, (bf16_bits *)y, mean, rstd, dim, (size_t)rows);
    else
        layernorm_forward_kernel<float><<<g, ROW_THREADS, 0, st>>>(
            (const float *)x, gamma, beta, (float *)y, mean, rstd, dim, (size_t)rows);
    CUDA_CHECK_LAUNCH(b, "layernorm_forward_kernel");
    return BK_OK;
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
    __shared__ float part_g[LP_LANES][LP_FEATURES + 1], part_b[LP_LANES][LP_FEATURES + 1];
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

template <typename T>
static int launch_layernorm_backward(backend *b, const void *dy, const void *x,
                                     const float *gamma, const float *mean,
                                     const float *rstd, float *dx, float *dgamma,
                                     float *dbeta, int dim, int rows)
{
    cuda_impl *c = cuda_of(b);
    layernorm_dx_kernel<T><<<row_blocks(b, (size_t)rows), ROW_THREADS, 0, c->stream>>>(
        (const T *)dy, (const T *)x, gamma, mean, rstd, dx, dim, (size_t)rows);
    CUDA_CHECK_LAUNCH(b, "layernorm_dx_kernel");

    unsigned gx = (unsigned)((dim + LP_FEATURES - 1) / LP_FEATURES);
    int chunk_cols; /* gamma's and beta's partial sums: two per feature */
    int chunks = reduce_chunks(c, gx, rows, LP_LANES, 2 * (size_t)dim, &chunk_cols);

    dim3 block(LP_FEATURES, LP_LANES);
    float *partial = chunks == 1 ? NULL : c->reduce_scratch;
    layernorm_param_partial_kernel<T><<<dim3(gx, (unsigned)chunks), block, 0, c->stream>>>(
        (const T *)dy, (const T *)x, mean, rstd, dgamma, dbeta, partial, dim, rows,
        chunk_cols);
    CUDA_CHECK_LAUNCH(b, "layernorm_param_partial_kernel");
    if (!partial)
        return BK_OK;
    layernorm_param_finish_kernel<<<blocks_for(b, (size_t)dim, EW_THREADS), EW_THREADS, 0,
                                    c->stream>>>(partial, dgamma, dbeta, dim, chunks);
    CUDA_CHECK_LAUNCH(b, "layernorm_param_finish_kernel");
    return BK_OK;
}

extern "C" int cuda_layernorm_backward(backend *b, storage s, const void *dy, const void *x,
                                       const float *gamma, const float *mean,
                                       const float *rstd, float *dx, float *dgamma,
                                       float *dbeta, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    if (2 * (size_t)dim > CUDA_REDUCE_SCRATCH_FLOATS) {
        snprintf(b->error, sizeof b->error,
                 "layernorm_backward: dim %d is more than the reduction scratch holds", dim);
        return BK_UNSUPPORTED;
    }
    return s == STORAGE_BF16
               ? launch_layernorm_backward<bf16_bits>(b, dy, x, gamma, mean, rstd, dx, dgamma,
                                                      dbeta, dim, rows)
               : launch_layernorm_backward<float>(b, dy, x, gamma, mean, rstd, dx, dgamma,
                                                  dbeta, dim, rows);
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

template <typename T>
static void launch_causal_softmax_forward(const backend *b, cudaStream_t st, const void *scores,
                                          void *probs, float scale, int t, size_t ncols)
{
    unsigned g = row_blocks(b, ncols);
    if (rows_vectorisable<T>((size_t)t, scores, probs))
        causal_softmax_forward_kernel<T, 16 / sizeof(T)><<<g, ROW_THREADS, 0, st>>>(
            (const T *)scores, (T *)probs, scale, t, ncols);
    else
        causal_softmax_forward_kernel<T, 1><<<g, ROW_THREADS, 0, st>>>(
            (const T *)scores, (T *)probs, scale, t, ncols);
}

extern "C" int cuda_causal_softmax_forward(backend *b, storage s, const void *scores,
                                           void *probs, float scale, int t, int count)
{
    if (t <= 0 || count <= 0)
        return BK_OK;
    size_t ncols = (size_t)count * (size_t)t;
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        launch_causal_softmax_forward<bf16_bits>(b, st, scores, probs, scale, t, ncols);
    else
        launch_causal_softmax_forward<float>(b, st, scores, probs, scale, t, ncols);
    CUDA_CHECK_LAUNCH(b, "causal_softmax_forward_kernel");
    return BK_OK;
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

template <typename T>
static void launch_causal_softmax_backward(const backend *b, cudaStream_t st, const void *probs,
                                           const void *dprobs, void *dscores, float scale,
                                           int t, size_t ncols)
{
    unsigned g = row_blocks(b, ncols);
    if (rows_vectorisable<T>((size_t)t, probs, dprobs) &&
        rows_vectorisable<T>((size_t)t, dscores, dscores))
        causal_softmax_backward_kernel<T, 16 / sizeof(T)><<<g, ROW_THREADS, 0, st>>>(
            (const T *)probs, (const T *)dprobs, (T *)dscores, scale, t, ncols);
    else
        causal_softmax_backward_kernel<T, 1><<<g, ROW_THREADS, 0, st>>>(
            (const T *)probs, (const T *)dprobs, (T *)dscores, scale, t, ncols);
}

extern "C" int cuda_causal_softmax_backward(backend *b, storage s, const void *probs,
                                            const void *dprobs, void *dscores, float scale,
                                            int t, int count)
{
    if (t <= 0 || count <= 0)
        return BK_OK;
    size_t ncols = (size_t)count * (size_t)t;
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        launch_causal_softmax_backward<bf16_bits>(b, st, probs, dprobs, dscores, scale, t,
                                                  ncols);
    else
        launch_causal_softmax_backward<float>(b, st, probs, dprobs, dscores, scale, t, ncols);
    CUDA_CHECK_LAUNCH(b, "causal_softmax_backward_kernel");
    return BK_OK;
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

extern "C" int cuda_embedding_forward(backend *b, storage s, const int *tokens,
                                      const float *wte, const float *wpe, void *out, int dim,
                                      int t, int batch)
{
    if (dim <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
    size_t n = (size_t)dim * (size_t)t * (size_t)batch;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        embedding_forward_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>(
            tokens, wte, wpe, (bf16_bits *)out, dim, t, n);
    else
        embedding_forward_kernel<float><<<g, EW_THREADS, 0, st>>>(tokens, wte, wpe,
                                                                  (float *)out, dim, t, n);
    CUDA_CHECK_LAUNCH(b, "embedding_forward_kernel");
    return BK_OK;
}

/* dwte[:, tokens[c]] += dout[:, c]: a token may repeat anywhere, so the
 * adds are atomic (their order, and so the last bits, may vary from run to
 * run). */
template <typename T>
__global__ void embedding_dwte_kernel(const int *tokens, const T *dout, float *dwte, int dim,
                                      size_t n)
{
    GRID_STRIDE(idx, n)
    {
        size_t c = idx / (size_t)dim, r = idx - c * (size_t)dim;
        atomicAdd(&dwte[(size_t)tokens[c] * (size_t)dim + r], load(dout, idx));
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

template <typename T>
static int launch_embedding_backward(backend *b, const int *tokens, const void *dout,
                                     float *dwte, float *dwpe, int dim, int t, int batch)
{
    cudaStream_t st = cuda_of(b)->stream;
    size_t n = (size_t)dim * (size_t)t * (size_t)batch;
    embedding_dwte_kernel<T><<<blocks_for(b, n, EW_THREADS), EW_THREADS, 0, st>>>(
        tokens, (const T *)dout, dwte, dim, n);
    CUDA_CHECK_LAUNCH(b, "embedding_dwte_kernel");
    if (!dwpe) /* no position table */
        return BK_OK;
    size_t per_seq = (size_t)dim * (size_t)t;
    embedding_dwpe_kernel<T><<<blocks_for(b, per_seq, EW_THREADS), EW_THREADS, 0, st>>>(
        (const T *)dout, dwpe, dim, t, batch);
    CUDA_CHECK_LAUNCH(b, "embedding_dwpe_kernel");
    return BK_OK;
}

extern "C" int cuda_embedding_backward(backend *b, storage s, const int *tokens,
                                       const void *dout, float *dwte, float *dwpe, int dim,
                                       int t, int batch)
{
    if (dim <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
    return s == STORAGE_BF16
               ? launch_embedding_backward<bf16_bits>(b, tokens, dout, dwte, dwpe, dim, t,
                                                      batch)
               : launch_embedding_backward<float>(b, tokens, dout, dwte, dwpe, dim, t, batch);
}

/* ------------------------------------------------------------ residual */

/* y += x; y may be x. */
template <typename T> __global__ void add_kernel(T *y, const T *x, size_t n)
{
    GRID_STRIDE(i, n) { store(y, i, load(y, i) + load(x, i)); }
}

extern "C" int cuda_add(backend *b, storage s, void *y, const void *x, size_t n)
{
    if (n == 0)
        return BK_OK;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        add_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>((bf16_bits *)y, (const bf16_bits *)x,
                                                        n);
    else
        add_kernel<float><<<g, EW_THREADS, 0, st>>>((float *)y, (const float *)x, n);
    CUDA_CHECK_LAUNCH(b, "add_kernel");
    return BK_OK;
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

template <typename U>
static int launch_permute_heads(backend *b, const void *src, void *dst, size_t run_bytes,
                                size_t runs, int heads, int t, int batch, int parts,
                                int to_tokens)
{
    size_t run_units = run_bytes / sizeof(U), n = runs * run_units;
    permute_heads_kernel<U><<<blocks_for(b, n, EW_THREADS), EW_THREADS, 0, cuda_of(b)->stream>>>(
        (const U *)src, (U *)dst, run_units, heads, t, batch, parts, to_tokens, n);
    CUDA_CHECK_LAUNCH(b, "permute_heads_kernel");
    return BK_OK;
}

/* 16-byte units where every run and both buffers allow them (head_dim 64 in
 * bf16 is 8 of them a run), else 4, else 2 bytes. */
extern "C" int cuda_permute_heads(backend *b, storage s, const void *src, void *dst, int hd,
                                  int heads, int t, int batch, int parts, int to_tokens)
{
    if (hd <= 0 || heads <= 0 || t <= 0 || batch <= 0 || parts <= 0)
        return BK_OK;
    size_t run_bytes = (size_t)hd * storage_bytes(s);
    size_t runs = (size_t)parts * (size_t)batch * (size_t)heads * (size_t)t;
    uintptr_t align = (uintptr_t)src | (uintptr_t)dst | (uintptr_t)run_bytes;
    if (align % 16 == 0)
        return launch_permute_heads<int4>(b, src, dst, run_bytes, runs, heads, t, batch, parts,
                                          to_tokens);
    if (align % 4 == 0)
        return launch_permute_heads<unsigned>(b, src, dst, run_bytes, runs, heads, t, batch,
                                              parts, to_tokens);
    return launch_permute_heads<unsigned short>(b, src, dst, run_bytes, runs, heads, t, batch,
                                                parts, to_tokens);
}
