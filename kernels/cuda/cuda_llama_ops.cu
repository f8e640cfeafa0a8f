/* The CUDA backend's ops for the Llama-style decoder: RMSNorm, SwiGLU, the
 * rotary position embedding and the repeat of grouped-query attention's
 * key and value heads, in fp32 or bf16 storage, around elementwise.h's
 * bodies (the CPU backend's, cpu_llama_ops.c).
 *
 * RMSNorm gives one warp to a column, and reduces its gain's gradient over
 * the columns in two deterministic passes, as LayerNorm does
 * (cuda_transformer.cu). The rest are element-wise grid-stride loops.
 *
 * Every op issues its kernels on the backend's compute stream and returns
 * without waiting. */
#include "cuda_check.h"
#include "cuda_internal.h"
#include "cuda_kernels.h"
#include "cuda_llama_ops.cuh"
#include "cuda_norm_regs.cuh"
#include "elementwise.h"

/* -------------------------------------------------------------- RMSNorm */

template <typename T>
static void launch_rmsnorm_forward(const backend *b, cudaStream_t st, const void *x,
                                   const float *gamma, void *y, float *rstd, int dim, int rows)
{
    constexpr int V = 16 / sizeof(T);
    unsigned g = blocks_for(b, (size_t)rows, ROW_WARPS);
    if (!rows_vectorisable<T>((size_t)dim, x, y) ||
        !rows_vectorisable<float>((size_t)dim, gamma, gamma) ||
        !with_column_regs(column_regs(dim, V), [&](auto nv) {
            norm_forward_regs_kernel<T, V, decltype(nv)::value, false>
                <<<g, ROW_THREADS, 0, st>>>((const T *)x, gamma, NULL, (T *)y, NULL, rstd, dim,
                                            (size_t)rows);
        }))
        rmsnorm_forward_kernel<T><<<g, ROW_THREADS, 0, st>>>((const T *)x, gamma, (T *)y, rstd,
                                                             dim, (size_t)rows);
}

extern "C" int cuda_rmsnorm_forward(backend *b, storage s, const void *x, const float *gamma,
                                    void *y, float *rstd, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        launch_rmsnorm_forward<bf16_bits>(b, st, x, gamma, y, rstd, dim, rows);
    else
        launch_rmsnorm_forward<float>(b, st, x, gamma, y, rstd, dim, rows);
    CUDA_CHECK_LAUNCH(b, "rmsnorm_forward_kernel");
    return BK_OK;
}

template <typename T>
static int launch_rmsnorm_backward(backend *b, const void *dy, const void *x,
                                   const float *gamma, const float *rstd, float *dx,
                                   float *dgamma, int dim, int rows)
{
    cuda_impl *c = cuda_of(b);
    constexpr int V = 16 / sizeof(T);
    unsigned g = blocks_for(b, (size_t)rows, ROW_WARPS);
    if (!rows_vectorisable<T>((size_t)dim, dy, x) ||
        !rows_vectorisable<float>((size_t)dim, gamma, dx) ||
        !with_column_regs(column_regs(dim, V), [&](auto nv) {
            norm_dx_regs_kernel<T, V, decltype(nv)::value, false>
                <<<g, ROW_THREADS, 0, c->stream>>>((const T *)dy, (const T *)x, gamma, NULL,
                                                   rstd, dx, dim, (size_t)rows);
        }))
        rmsnorm_dx_kernel<T><<<g, ROW_THREADS, 0, c->stream>>>((const T *)dy, (const T *)x, gamma,
                                                               rstd, dx, dim, (size_t)rows);
    CUDA_CHECK_LAUNCH(b, "rmsnorm_dx_kernel");

    unsigned gx = (unsigned)((dim + RG_FEATURES - 1) / RG_FEATURES);
    int chunk_cols;
    int chunks = reduce_chunks(c, gx, rows, RG_LANES, (size_t)dim, &chunk_cols);
    float *partial = chunks == 1 ? NULL : c->reduce_scratch;
    rmsnorm_gain_partial_kernel<T><<<dim3(gx, (unsigned)chunks), dim3(RG_FEATURES, RG_LANES), 0,
                                     c->stream>>>((const T *)dy, (const T *)x, rstd, dgamma,
                                                  partial, dim, rows, chunk_cols);
    CUDA_CHECK_LAUNCH(b, "rmsnorm_gain_partial_kernel");
    if (!partial)
        return BK_OK;
    rmsnorm_gain_finish_kernel<<<blocks_for(b, (size_t)dim, EW_THREADS), EW_THREADS, 0,
                                 c->stream>>>(partial, dgamma, dim, chunks);
    CUDA_CHECK_LAUNCH(b, "rmsnorm_gain_finish_kernel");
    return BK_OK;
}

extern "C" int cuda_rmsnorm_backward(backend *b, storage s, const void *dy, const void *x,
                                     const float *gamma, const float *rstd, float *dx,
                                     float *dgamma, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    if ((size_t)dim > CUDA_REDUCE_SCRATCH_FLOATS) {
        snprintf(b->error, sizeof b->error,
                 "rmsnorm_backward: dim %d is more than the reduction scratch holds", dim);
        return BK_UNSUPPORTED;
    }
    return s == STORAGE_BF16
               ? launch_rmsnorm_backward<bf16_bits>(b, dy, x, gamma, rstd, dx, dgamma, dim,
                                                    rows)
               : launch_rmsnorm_backward<float>(b, dy, x, gamma, rstd, dx, dgamma, dim, rows);
}

/* --------------------------------------------------------------- SwiGLU */

extern "C" int cuda_swiglu_forward(backend *b, storage s, const void *gate, const void *up,
                                   void *h, size_t n)
{
    if (n == 0)
        return BK_OK;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        swiglu_forward_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>(
            (const bf16_bits *)gate, (const bf16_bits *)up, (bf16_bits *)h, n);
    else
        swiglu_forward_kernel<float><<<g, EW_THREADS, 0, st>>>((const float *)gate,
                                                               (const float *)up, (float *)h, n);
    CUDA_CHECK_LAUNCH(b, "swiglu_forward_kernel");
    return BK_OK;
}

extern "C" int cuda_swiglu_backward(backend *b, storage s, const void *gate, const void *up,
                                    const void *dh, void *dgate, void *dup, size_t n)
{
    if (n == 0)
        return BK_OK;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        swiglu_backward_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>(
            (const bf16_bits *)gate, (const bf16_bits *)up, (const bf16_bits *)dh,
            (bf16_bits *)dgate, (bf16_bits *)dup, n);
    else
        swiglu_backward_kernel<float><<<g, EW_THREADS, 0, st>>>(
            (const float *)gate, (const float *)up, (const float *)dh, (float *)dgate,
            (float *)dup, n);
    CUDA_CHECK_LAUNCH(b, "swiglu_backward_kernel");
    return BK_OK;
}

/* --------------------------------------------------------------- rotary */

static int rotary(backend *b, storage s, void *x, int ld, int heads, int hd, int t, int cols,
                  float theta, float sign)
{
    if (heads <= 0 || hd <= 1 || t <= 0 || cols <= 0)
        return BK_OK;
    size_t n = (size_t)cols * (size_t)heads * (size_t)(hd / 2);
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        rotary_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>((bf16_bits *)x, ld, heads, hd, t,
                                                           (size_t)cols, theta, sign);
    else
        rotary_kernel<float><<<g, EW_THREADS, 0, st>>>((float *)x, ld, heads, hd, t,
                                                       (size_t)cols, theta, sign);
    CUDA_CHECK_LAUNCH(b, "rotary_kernel");
    return BK_OK;
}

extern "C" int cuda_rotary_forward(backend *b, storage s, void *x, int ld, int heads, int hd,
                                   int t, int cols, float theta)
{
    return rotary(b, s, x, ld, heads, hd, t, cols, theta, 1.0f);
}

extern "C" int cuda_rotary_backward(backend *b, storage s, void *dx, int ld, int heads, int hd,
                                    int t, int cols, float theta)
{
    return rotary(b, s, dx, ld, heads, hd, t, cols, theta, -1.0f);
}

/* ------------------------------------------------------------ repeat_kv */

extern "C" int cuda_repeat_kv_forward(backend *b, storage s, const void *kv, void *dst,
                                      int ld_dst, int hd, int kv_heads, int group, int parts,
                                      int cols)
{
    if (cols <= 0)
        return BK_OK;
    size_t n = (size_t)cols * (size_t)parts * (size_t)kv_heads * (size_t)group * (size_t)hd;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        repeat_kv_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>(
            (const bf16_bits *)kv, (bf16_bits *)dst, ld_dst, hd, kv_heads, group, parts,
            (size_t)cols);
    else
        repeat_kv_kernel<float><<<g, EW_THREADS, 0, st>>>((const float *)kv, (float *)dst,
                                                          ld_dst, hd, kv_heads, group, parts,
                                                          (size_t)cols);
    CUDA_CHECK_LAUNCH(b, "repeat_kv_kernel");
    return BK_OK;
}

extern "C" int cuda_repeat_kv_backward(backend *b, storage s, const void *ddst, int ld_dst,
                                       void *dkv, int hd, int kv_heads, int group, int parts,
                                       int cols)
{
    if (cols <= 0)
        return BK_OK;
    size_t n = (size_t)cols * (size_t)parts * (size_t)kv_heads * (size_t)hd;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        repeat_kv_backward_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>(
            (const bf16_bits *)ddst, ld_dst, (bf16_bits *)dkv, hd, kv_heads, group, parts,
            (size_t)cols);
    else
        repeat_kv_backward_kernel<float><<<g, EW_THREADS, 0, st>>>(
            (const float *)ddst, ld_dst, (float *)dkv, hd, kv_heads, group, parts,
            (size_t)cols);
    CUDA_CHECK_LAUNCH(b, "repeat_kv_backward_kernel");
    return BK_OK;
}
