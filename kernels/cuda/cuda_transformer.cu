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
 * gradient adds each token's columns in the positions' order (a token may
 * repeat anywhere in a micro-batch: one block owns each token's row and
 * adds them all), the CPU's order.
 *
 * Every op issues its kernels on the backend's compute stream and returns
 * without waiting. */
#include <limits.h>
#include <stdio.h>

#include "cuda_check.h"
#include "cuda_internal.h"
#include "cuda_kernels.h"
#include "cuda_norm_regs.cuh"
#include "cuda_transformer.cuh"
#include "elementwise.h"

static unsigned row_blocks(const backend *b, size_t ncols)
{
    return blocks_for(b, ncols, ROW_WARPS);
}

/* ------------------------------------------------------------ LayerNorm */

template <typename T>
static void launch_layernorm_forward(const backend *b, cudaStream_t st, const void *x,
                                     const float *gamma, const float *beta, void *y,
                                     float *mean, float *rstd, int dim, int rows)
{
    constexpr int V = 16 / sizeof(T);
    unsigned g = row_blocks(b, (size_t)rows);
    if (!rows_vectorisable<T>((size_t)dim, x, y) ||
        !rows_vectorisable<float>((size_t)dim, gamma, beta) ||
        !with_column_regs(column_regs(dim, V), [&](auto nv) {
            norm_forward_regs_kernel<T, V, decltype(nv)::value, true><<<g, ROW_THREADS, 0, st>>>(
                (const T *)x, gamma, beta, (T *)y, mean, rstd, dim, (size_t)rows);
        }))
        layernorm_forward_kernel<T><<<g, ROW_THREADS, 0, st>>>((const T *)x, gamma, beta, (T *)y,
                                                               mean, rstd, dim, (size_t)rows);
}

extern "C" int cuda_layernorm_forward(backend *b, storage s, const void *x,
                                      const float *gamma, const float *beta, void *y,
                                      float *mean, float *rstd, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        launch_layernorm_forward<bf16_bits>(b, st, x, gamma, beta, y, mean, rstd, dim, rows);
    else
        launch_layernorm_forward<float>(b, st, x, gamma, beta, y, mean, rstd, dim, rows);
    CUDA_CHECK_LAUNCH(b, "layernorm_forward_kernel");
    return BK_OK;
}

template <typename T>
static int launch_layernorm_backward(backend *b, const void *dy, const void *x,
                                     const float *gamma, const float *mean,
                                     const float *rstd, float *dx, float *dgamma,
                                     float *dbeta, int dim, int rows)
{
    cuda_impl *c = cuda_of(b);
    constexpr int V = 16 / sizeof(T);
    unsigned g = row_blocks(b, (size_t)rows);
    if (!rows_vectorisable<T>((size_t)dim, dy, x) ||
        !rows_vectorisable<float>((size_t)dim, gamma, dx) ||
        !with_column_regs(column_regs(dim, V), [&](auto nv) {
            norm_dx_regs_kernel<T, V, decltype(nv)::value, true><<<g, ROW_THREADS, 0, c->stream>>>(
                (const T *)dy, (const T *)x, gamma, mean, rstd, dx, dim, (size_t)rows);
        }))
        layernorm_dx_kernel<T><<<g, ROW_THREADS, 0, c->stream>>>(
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

template <typename T>
static void launch_causal_softmax_forward(const backend *b, cudaStream_t st, const void *scores,
                                          void *probs, float scale, int t, size_t ncols)
{
    constexpr int V = 16 / sizeof(T);
    unsigned g = row_blocks(b, ncols);
    if (!rows_vectorisable<T>((size_t)t, scores, probs))
        causal_softmax_forward_kernel<T, 1><<<g, ROW_THREADS, 0, st>>>(
            (const T *)scores, (T *)probs, scale, t, ncols);
    else if (!with_column_regs(column_regs(t, V), [&](auto nv) {
                 causal_softmax_forward_regs_kernel<T, V, decltype(nv)::value>
                     <<<g, ROW_THREADS, 0, st>>>((const T *)scores, (T *)probs, scale, t, ncols);
             }))
        causal_softmax_forward_kernel<T, V><<<g, ROW_THREADS, 0, st>>>(
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

template <typename T>
static void launch_causal_softmax_backward(const backend *b, cudaStream_t st, const void *probs,
                                           const void *dprobs, void *dscores, float scale,
                                           int t, size_t ncols)
{
    constexpr int V = 16 / sizeof(T);
    unsigned g = row_blocks(b, ncols);
    if (!rows_vectorisable<T>((size_t)t, probs, dprobs) ||
        !rows_vectorisable<T>((size_t)t, dscores, dscores))
        causal_softmax_backward_kernel<T, 1><<<g, ROW_THREADS, 0, st>>>(
            (const T *)probs, (const T *)dprobs, (T *)dscores, scale, t, ncols);
    else if (!with_column_regs(column_regs(t, V), [&](auto nv) {
                 causal_softmax_backward_regs_kernel<T, V, decltype(nv)::value>
                     <<<g, ROW_THREADS, 0, st>>>((const T *)probs, (const T *)dprobs,
                                                 (T *)dscores, scale, t, ncols);
             }))
        causal_softmax_backward_kernel<T, V><<<g, ROW_THREADS, 0, st>>>(
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

template <typename T>
static int launch_embedding_backward(backend *b, const int *tokens, const void *dout,
                                     float *dwte, float *dwpe, int dim, int t, int batch)
{
    cudaStream_t st = cuda_of(b)->stream;
    /* cuda_embedding_backward: count fits an int. Slices of EMB_THREADS
     * elements across the rows, and owners of the token rows: about 8
     * blocks an SM in all, each adding few columns (about 24 of the 8192
     * positions of 8 sequences of 1024 at dim 768), no more than the
     * positions. */
    int count = t * batch;
    unsigned slices = (unsigned)((dim + EMB_THREADS - 1) / EMB_THREADS);
    unsigned owners = (unsigned)cuda_of(b)->sm_count * 8u / slices;
    if (owners > (unsigned)count)
        owners = (unsigned)count;
    if (owners == 0)
        owners = 1;
    embedding_dwte_kernel<T><<<dim3(owners, slices), EMB_THREADS, 0, st>>>(
        tokens, (const T *)dout, dwte, dim, count);
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
    /* the kernel counts positions in an int, a chunk past the last */
    if ((size_t)t * (size_t)batch > (size_t)INT_MAX - EMB_THREADS) {
        snprintf(b->error, sizeof b->error, "embedding backward: %d x %d positions is more "
                 "than the kernel's %d", batch, t, INT_MAX - EMB_THREADS);
        return BK_UNSUPPORTED;
    }
    return s == STORAGE_BF16
               ? launch_embedding_backward<bf16_bits>(b, tokens, dout, dwte, dwpe, dim, t,
                                                      batch)
               : launch_embedding_backward<float>(b, tokens, dout, dwte, dwpe, dim, t, batch);
}

/* ------------------------------------------------------------ residual */

template <typename T> static void launch_add(backend *b, void *y, const void *x, size_t n)
{
    constexpr int V = 16 / sizeof(T);
    cudaStream_t st = cuda_of(b)->stream;
    if (rows_vectorisable<T>(n, y, x))
        add_vec_kernel<T, V><<<blocks_for(b, n / V, EW_THREADS), EW_THREADS, 0, st>>>(
            (T *)y, (const T *)x, n);
    else
        add_kernel<T><<<blocks_for(b, n, EW_THREADS), EW_THREADS, 0, st>>>((T *)y,
                                                                          (const T *)x, n);
}

extern "C" int cuda_add(backend *b, storage s, void *y, const void *x, size_t n)
{
    if (n == 0)
        return BK_OK;
    if (s == STORAGE_BF16)
        launch_add<bf16_bits>(b, y, x, n);
    else
        launch_add<float>(b, y, x, n);
    CUDA_CHECK_LAUNCH(b, "add_kernel");
    return BK_OK;
}

/* ------------------------------------------------------ head arrangement */

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
