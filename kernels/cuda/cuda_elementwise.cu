/* The CUDA backend's element-wise ops: grid-stride kernels around the
 * per-element bodies of elementwise.h, the same bodies the CPU backend loops
 * over. Activations are fp32 or bf16 (stored as raw bf16 bits, converted by
 * the shared ew_* functions, so the GPU rounds exactly as the CPU tests
 * expect); master weights, gradients and optimizer state are always fp32.
 *
 * Every op issues its kernels on the backend's compute stream and returns
 * without waiting. */
#include "cuda_check.h"
#include "cuda_internal.h"
#include "cuda_kernels.h"
#include "elementwise.h"

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

template <typename T>
static int launch_bias_gelu(backend *b, void *z, const float *bias, void *h, int rows,
                            int cols, int gelu)
{
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

/* h = gelu(z) from the stored pre-activation: what bias_gelu_kernel wrote,
 * recomputed for a backward that kept z alone. */
template <typename T>
__global__ void gelu_forward_kernel(const T *z, T *h, size_t n)
{
    GRID_STRIDE(i, n) { store(h, i, ew_gelu(load(z, i))); }
}

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

/* dz may alias dh: each element is read before it is written, and no
 * pointer is __restrict__. */
template <typename T>
__global__ void gelu_backward_kernel(const T *z, const T *dh, T *dz, size_t n)
{
    GRID_STRIDE(i, n) { store(dz, i, load(dh, i) * ew_gelu_grad(load(z, i))); }
}

extern "C" int cuda_gelu_backward(backend *b, storage s, const void *z, const void *dh,
                                  void *dz, size_t n)
{
    if (n == 0)
        return BK_OK;
    unsigned g = blocks_for(b, n, EW_THREADS);
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        gelu_backward_kernel<bf16_bits><<<g, EW_THREADS, 0, st>>>(
            (const bf16_bits *)z, (const bf16_bits *)dh, (bf16_bits *)dz, n);
    else
        gelu_backward_kernel<float><<<g, EW_THREADS, 0, st>>>(
            (const float *)z, (const float *)dh, (float *)dz, n);
    CUDA_CHECK_LAUNCH(b, "gelu_backward_kernel");
    return BK_OK;
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
    __shared__ float part[BG_LANES][BG_ROWS + 1];
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
 * The loss is reduced per block and added to *loss_sum with one atomic per
 * block. */
#define SX_THREADS 128
#define SX_WARPS (SX_THREADS / 32)
#define SX_UNROLL 4

template <typename T, int V>
__global__ void softmax_xent_kernel(const T *logits, T *dlogits, const int *labels,
                                    const int *valid, const float *scale,
                                    float *loss_sum, int classes, int batch)
{
    __shared__ float warp_loss[SX_WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    const float sc = *scale;
    float loss = 0.0f; /* lane 0's: the sum of its warp's examples */

    for (int j = blockIdx.x * SX_WARPS + warp; j < batch; j += gridDim.x * SX_WARPS) {
        const T *l = logits + (size_t)j * (size_t)classes;
        T *dl = dlogits + (size_t)j * (size_t)classes;
        float x[V];
        if (!valid[j]) { /* padding: no loss, no gradient */
            for (int k = 0; k < V; k++)
                x[k] = 0.0f;
            for (int c = lane * V; c < classes; c += 32 * V)
                store_vec<T, V>(dl, c, x);
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
            loss += log_sum + maxv - load(l, label);
    }

    if (lane == 0)
        warp_loss[warp] = loss;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < SX_WARPS; w++)
            total += warp_loss[w];
        atomicAdd(loss_sum, total);
    }
}

template <typename T>
static void launch_softmax_xent(cudaStream_t st, unsigned grid, const void *logits,
                                void *dlogits, const int *labels, const int *valid,
                                const float *scale, float *loss_sum, int classes, int batch)
{
    constexpr int V = 16 / sizeof(T);
    if (rows_vectorisable<T>((size_t)classes, logits, dlogits))
        softmax_xent_kernel<T, V><<<grid, SX_THREADS, 0, st>>>(
            (const T *)logits, (T *)dlogits, labels, valid, scale, loss_sum, classes, batch);
    else
        softmax_xent_kernel<T, 1><<<grid, SX_THREADS, 0, st>>>(
            (const T *)logits, (T *)dlogits, labels, valid, scale, loss_sum, classes, batch);
}

extern "C" int cuda_softmax_xent(backend *b, storage s, const void *logits, void *dlogits,
                                 const int *labels, const int *valid, const float *scale,
                                 float *loss_sum, int classes, int batch)
{
    if (batch <= 0)
        return BK_OK;
    unsigned grid = (unsigned)((batch + SX_WARPS - 1) / SX_WARPS);
    unsigned cap = (unsigned)cuda_of(b)->sm_count * 16;
    if (grid > cap)
        grid = cap;
    cudaStream_t st = cuda_of(b)->stream;
    if (s == STORAGE_BF16)
        launch_softmax_xent<bf16_bits>(st, grid, logits, dlogits, labels, valid, scale,
                                       loss_sum, classes, batch);
    else
        launch_softmax_xent<float>(st, grid, logits, dlogits, labels, valid, scale, loss_sum,
                                   classes, batch);
    CUDA_CHECK_LAUNCH(b, "softmax_xent_kernel");
    return BK_OK;
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

static int aligned(const void *p, size_t bytes) { return ((uintptr_t)p & (bytes - 1)) == 0; }

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
