/* The CUDA backend's element-wise ops: grid-stride kernels around the
 * per-element bodies of elementwise.h, the same bodies the CPU backend loops
 * over. Activations are fp32 or bf16 (stored as raw bf16 bits, converted by
 * the shared ew_* functions, so the GPU rounds exactly as the CPU tests
 * expect); master weights, gradients and optimizer state are always fp32.
 *
 * Every op issues its kernels on the backend's compute stream and returns
 * without waiting. */
#include "cuda_check.h"
#include "cuda_elementwise.cuh"
#include "cuda_internal.h"
#include "cuda_kernels.h"
#include "elementwise.h"

/* ------------------------------------------------------- bias + GELU */

template <typename T>
static int launch_bias_gelu(backend *b, void *z, const float *bias, void *h, int rows,
                            int cols, int gelu)
{
    constexpr int V = 16 / sizeof(T);
    if (rows_vectorisable<T>((size_t)rows, z, gelu ? h : z)) {
        size_t n = (size_t)rows * (size_t)cols;
        bias_gelu_vec_kernel<T, V>
            <<<blocks_for(b, n / V, EW_THREADS), EW_THREADS, 0, cuda_of(b)->stream>>>(
                (T *)z, bias, (T *)h, rows, n, gelu);
        CUDA_CHECK_LAUNCH(b, "bias_gelu_vec_kernel");
        return BK_OK;
    }
    unsigned gx = blocks_for(b, (size_t)rows, EW_THREADS);
    unsigned total = blocks_for(b, (size_t)rows * (size_t)cols, EW_THREADS);
    unsigned gy = total / gx ? total / gx : 1;
    if (gy > (unsigned)cols)
        gy = (unsigned)cols;
    if (gy > 65535u)
        gy = 65535u;
    bias_gelu_kernel<T><<<dim3(gx, gy), EW_THREADS, 0, cuda_of(b)->stream>>>(
        (T *)z, bias, (T *)h, rows, cols, gelu);
    CUDA_CHECK_LAUNCH(b, "bias_gelu_kernel");
    return BK_OK;
}

extern "C" int cuda_bias_gelu_forward(backend *b, storage s, void *z, const float *bias,
                                      void *h, int rows, int cols, int gelu)
{
    if (rows <= 0 || cols <= 0)
        return BK_OK;
    if (gelu && !h) {
        snprintf(b->error, sizeof b->error, "bias_gelu_forward: gelu needs an output h");
        return BK_ERROR;
    }
    return s == STORAGE_BF16 ? launch_bias_gelu<bf16_bits>(b, z, bias, h, rows, cols, gelu)
                             : launch_bias_gelu<float>(b, z, bias, h, rows, cols, gelu);
}

/* ------------------------------------------------------ GELU backward */

extern "C" int cuda_gelu_forward(backend *b, storage s, const void *z, void *h, size_t n)
{
    if (n == 0)
        return BK_OK;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        gelu_forward_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>((const bf16_bits *)z,
                                                                 (bf16_bits *)h, n);
    else
        gelu_forward_kernel<float><<<g, EW_THREADS, 0, st>>>((const float *)z, (float *)h, n);
    CUDA_CHECK_LAUNCH(b, "gelu_forward_kernel");
    return BK_OK;
}

/* 16 bytes a lane where n and the buffers allow (gelu_backward_vec_kernel). */
template <typename T>
static void launch_gelu_backward(backend *b, const void *z, const void *dh, void *dz, size_t n)
{
    constexpr int V = 16 / sizeof(T);
    cudaStream_t st = cuda_of(b)->stream;
    if (rows_vectorisable<T>(n, z, dh) && rows_vectorisable<T>(n, dz, dz))
        gelu_backward_vec_kernel<T, V><<<blocks_for(b, n / V, EW_THREADS), EW_THREADS, 0, st>>>(
            (const T *)z, (const T *)dh, (T *)dz, n);
    else
        gelu_backward_kernel<T><<<blocks_for(b, n, EW_THREADS), EW_THREADS, 0, st>>>(
            (const T *)z, (const T *)dh, (T *)dz, n);
}

extern "C" int cuda_gelu_backward(backend *b, storage s, const void *z, const void *dh,
                                  void *dz, size_t n)
{
    if (n == 0)
        return BK_OK;
    if (s == STORAGE_BF16)
        launch_gelu_backward<bf16_bits>(b, z, dh, dz, n);
    else
        launch_gelu_backward<float>(b, z, dh, dz, n);
    CUDA_CHECK_LAUNCH(b, "gelu_backward_kernel");
    return BK_OK;
}

/* ------------------------------------------------------- bias gradient */

template <typename T>
static int launch_bias_grad(backend *b, const void *dz, float *db, int rows, int cols)
{
    cuda_impl *c = cuda_of(b);
    unsigned gx = (unsigned)((rows + BG_ROWS - 1) / BG_ROWS);
    int chunk_cols;
    int chunks = reduce_chunks(c, gx, cols, BG_LANES, (size_t)rows, &chunk_cols);

    dim3 block(BG_ROWS, BG_LANES);
    if (chunks == 1) {
        bias_grad_partial_kernel<T><<<dim3(gx, 1), block, 0, c->stream>>>(
            (const T *)dz, db, 1, rows, cols, chunk_cols);
        CUDA_CHECK_LAUNCH(b, "bias_grad_partial_kernel");
        return BK_OK;
    }
    bias_grad_partial_kernel<T><<<dim3(gx, (unsigned)chunks), block, 0, c->stream>>>(
        (const T *)dz, c->reduce_scratch, 0, rows, cols, chunk_cols);
    CUDA_CHECK_LAUNCH(b, "bias_grad_partial_kernel");
    bias_grad_finish_kernel<<<blocks_for(b, (size_t)rows, EW_THREADS), EW_THREADS, 0,
                              c->stream>>>(c->reduce_scratch, db, rows, chunks);
    CUDA_CHECK_LAUNCH(b, "bias_grad_finish_kernel");
    return BK_OK;
}

extern "C" int cuda_bias_grad(backend *b, storage s, const void *dz, float *db, int rows,
                              int cols)
{
    if (rows <= 0 || cols <= 0)
        return BK_OK;
    return s == STORAGE_BF16 ? launch_bias_grad<bf16_bits>(b, dz, db, rows, cols)
                             : launch_bias_grad<float>(b, dz, db, rows, cols);
}

/* ------------------------------------------- softmax cross-entropy */

template <typename T>
static void launch_softmax_xent(cudaStream_t st, unsigned grid, const void *logits,
                                void *dlogits, const int *labels, const int *valid,
                                const float *scale, float *losses, int classes, int batch)
{
    constexpr int V = 16 / sizeof(T);
    if (rows_vectorisable<T>((size_t)classes, logits, dlogits))
        softmax_xent_kernel<T, V><<<grid, SX_THREADS, 0, st>>>(
            (const T *)logits, (T *)dlogits, labels, valid, scale, losses, classes, batch);
    else
        softmax_xent_kernel<T, 1><<<grid, SX_THREADS, 0, st>>>(
            (const T *)logits, (T *)dlogits, labels, valid, scale, losses, classes, batch);
}

/* The examples' losses go through the reduction scratch, one float each,
 * and are added to *loss_sum in a fixed order (cuda_loss_sum): the scratch
 * is the backend's own, allocated as it starts, so the step's memory need
 * gains nothing. A batch of more examples than it holds is taken in
 * slices of as many, each slice's sum added in turn. */
extern "C" int cuda_softmax_xent(backend *b, storage s, const void *logits, void *dlogits,
                                 const int *labels, const int *valid, const float *scale,
                                 float *loss_sum, int classes, int batch)
{
    cuda_impl *c = cuda_of(b);
    const size_t es = s == STORAGE_BF16 ? sizeof(bf16_bits) : sizeof(float);
    const long most = (long)CUDA_REDUCE_SCRATCH_FLOATS;
    for (long first = 0; first < batch; first += most) {
        int n = (int)(batch - first < most ? batch - first : most);
        size_t at = (size_t)first * (size_t)classes * es;
        unsigned grid = (unsigned)((n + SX_WARPS - 1) / SX_WARPS);
        unsigned cap = (unsigned)c->sm_count * 16;
        if (grid > cap)
            grid = cap;
        const char *l = (const char *)logits + at;
        char *dl = (char *)dlogits + at;
        if (s == STORAGE_BF16)
            launch_softmax_xent<bf16_bits>(c->stream, grid, l, dl, labels + first,
                                           valid + first, scale, c->reduce_scratch, classes, n);
        else
            launch_softmax_xent<float>(c->stream, grid, l, dl, labels + first, valid + first,
                                       scale, c->reduce_scratch, classes, n);
        CUDA_CHECK_LAUNCH(b, "softmax_xent_kernel");
        int rc = cuda_loss_sum(b, c->reduce_scratch, n, loss_sum);
        if (rc)
            return rc;
    }
    return BK_OK;
}

/* ------------------------------------------- optimizers, conversion */

static int aligned(const void *p, size_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

extern "C" int cuda_adamw(backend *b, float *w, const float *g, float *m, float *v,
                          size_t n, const adamw_hparams *h)
{
    if (n == 0)
        return BK_OK;
    int vec = aligned(w, 16) && aligned(g, 16) && aligned(m, 16) && aligned(v, 16);
    adamw_kernel<<<blocks_for(b, (n + VEC - 1) / VEC, EW_THREADS), EW_THREADS, 0,
                   cuda_of(b)->stream>>>(w, g, m, v, n, h, vec);
    CUDA_CHECK_LAUNCH(b, "adamw_kernel");
    return BK_OK;
}

extern "C" int cuda_sgd(backend *b, float *w, const float *g, size_t n, float lr,
                        float weight_decay)
{
    if (n == 0)
        return BK_OK;
    int vec = aligned(w, 16) && aligned(g, 16);
    sgd_kernel<<<blocks_for(b, (n + VEC - 1) / VEC, EW_THREADS), EW_THREADS, 0,
                 cuda_of(b)->stream>>>(w, g, n, lr, weight_decay, vec);
    CUDA_CHECK_LAUNCH(b, "sgd_kernel");
    return BK_OK;
}

/* fp32 to fp32 is a device copy (nothing when in place). */
static int copy_f32(backend *b, void *dst, const void *src, size_t n)
{
    if (n && dst != src)
        CUDA_CHECK(b, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice,
                                      cuda_of(b)->stream));
    return BK_OK;
}

extern "C" int cuda_convert(backend *b, const float *src, void *dst, storage dst_storage,
                            size_t n)
{
    if (dst_storage == STORAGE_F32)
        return copy_f32(b, dst, src, n);
    if (n == 0)
        return BK_OK;
    int vec = aligned(src, 16) && aligned(dst, 8);
    to_bf16_kernel<<<blocks_for(b, (n + VEC - 1) / VEC, EW_THREADS), EW_THREADS, 0,
                     cuda_of(b)->stream>>>(src, (bf16_bits *)dst, n, vec);
    CUDA_CHECK_LAUNCH(b, "to_bf16_kernel");
    return BK_OK;
}

extern "C" int cuda_to_f32(backend *b, const void *src, storage src_storage, float *dst,
                           size_t n)
{
    if (src_storage == STORAGE_F32)
        return copy_f32(b, dst, src, n);
    if (n == 0)
        return BK_OK;
    to_f32_kernel<<<blocks_for(b, n, EW_THREADS), EW_THREADS, 0, cuda_of(b)->stream>>>(
        (const bf16_bits *)src, dst, n);
    CUDA_CHECK_LAUNCH(b, "to_f32_kernel");
    return BK_OK;
}

/* Whether this binary carries code the current device can run (a build for
 * sm_90 on an older GPU does not): cudaErrorNoKernelImageForDevice if not. */
extern "C" cudaError_t cuda_elementwise_loadable(void)
{
    cudaFuncAttributes attr;
    return cudaFuncGetAttributes(&attr, adamw_kernel);
}
