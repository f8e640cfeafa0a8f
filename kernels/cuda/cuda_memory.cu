/* The CUDA backend's memory: its allocators and what the device held at
 * most in a window (ops of the table in cuda_backend.cu).
 *
 * alloc is cudaMalloc; a failure returns BK_OOM and the sweep goes on.
 * alloc_transient serves the `alloc` execution modes from the allocator
 * the call names: cudaMalloc/cudaFree (BK_ALLOC_PLAIN) or the stream-ordered
 * cudaMallocAsync/cudaFreeAsync on the device's default pool, which keeps
 * freed memory for reuse (BK_ALLOC_STREAM_ORDERED).
 *
 * held_reset and held_peak give the most the device held since the reset
 * (cuda_held.h says how it is read without a call in every allocation). */
#include <stdint.h>
#include <stdio.h>

#include "cuda_check.h"
#include "cuda_internal.h"

/* Allocation failures name the size, so that an OOM row says what failed. */
static int alloc_failed(backend *b, const char *call, size_t bytes, cudaError_t e)
{
    int rc = cuda_fail(b, __FILE__, __LINE__, call, e);
    if (rc == BK_OOM)
        snprintf(b->error, sizeof b->error, "device out of memory: %s of %zu bytes failed",
                 call, bytes);
    return rc;
}

cudaError_t cuda_trim_pool(const cuda_impl *c)
{
    cudaMemPool_t pool;
    cudaError_t e = cudaDeviceGetDefaultMemPool(&pool, c->device);
    return e == cudaSuccess ? cudaMemPoolTrimTo(pool, 0) : e;
}

/* The device's memory in use: every allocation of this process (the
 * context, the kernels' code, cuBLAS's workspace, the pool's reserve)
 * and of any other process on the device. */
static cudaError_t device_used(size_t *used)
{
    size_t free_bytes = 0, total = 0;
    cudaError_t e = cudaMemGetInfo(&free_bytes, &total);
    *used = e == cudaSuccess ? total - free_bytes : 0;
    return e;
}

/* An allocation of `bytes` made: the harness's count (b->mem_in_use,
 * which dispatch.h raises once this returns) and it are what is held
 * through the backend now. */
static void held_allocated(backend *b, size_t bytes)
{
    cuda_held_allocated(&cuda_of(b)->held, b->mem_in_use + bytes);
}

/* Before a free: the device read where it may be at the window's peak.
 * A failed read is only a lost sample (the peak's end read reports). */
static void held_before_free(backend *b)
{
    cuda_impl *c = cuda_of(b);
    size_t used;
    if (cuda_held_read_before_free(&c->held) && device_used(&used) == cudaSuccess)
        cuda_held_read(&c->held, used);
}

int cuda_alloc(backend *b, size_t bytes, void **out)
{
    cuda_impl *c = cuda_of(b);
    *out = NULL;
    cudaError_t e = cudaMalloc(out, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation && c->mempools) {
        /* The alloc-async mode's pool keeps what it once held: give that
         * back (once its frees have run) and try again before saying OOM. */
        (void)cudaGetLastError();
        int rc = cuda_wait_for(b, NULL); /* polled where a peer may never arrive */
        if (rc)
            return rc;
        if (cuda_trim_pool(c) == cudaSuccess)
            e = cudaMalloc(out, bytes ? bytes : 1);
    }
    if (e != cudaSuccess) {
        *out = NULL;
        return alloc_failed(b, "cudaMalloc", bytes, e);
    }
    held_allocated(b, bytes);
    return BK_OK;
}

void cuda_free(backend *b, void *p)
{
    if (!p)
        return;
    held_before_free(b);
    (void)cudaFree(p);
}

int cuda_alloc_transient(backend *b, bk_allocator from, size_t bytes, void **out)
{
    cuda_impl *c = cuda_of(b);
    if (from != BK_ALLOC_STREAM_ORDERED)
        return cuda_alloc(b, bytes, out);
    *out = NULL;
    if (!c->mempools) {
        snprintf(b->error, sizeof b->error,
                 "this device has no stream-ordered allocator (cudaMallocAsync)");
        return BK_UNSUPPORTED;
    }
    cudaError_t e = cudaMallocAsync(out, bytes ? bytes : 1, c->stream);
    if (e != cudaSuccess) {
        *out = NULL;
        return alloc_failed(b, "cudaMallocAsync", bytes, e);
    }
    held_allocated(b, bytes);
    return BK_OK;
}

void cuda_free_transient(backend *b, bk_allocator from, void *p)
{
    if (!p)
        return;
    held_before_free(b);
    if (from == BK_ALLOC_STREAM_ORDERED)
        (void)cudaFreeAsync(p, cuda_of(b)->stream);
    else
        (void)cudaFree(p);
}

/* ------------------------------------------------- the most held */

static cudaError_t default_pool(const cuda_impl *c, cudaMemPool_t *pool)
{
    return cudaDeviceGetDefaultMemPool(pool, c->device);
}

int cuda_memory_held_reset(backend *b)
{
    cuda_impl *c = cuda_of(b);
    size_t used;
    uint64_t reserved = 0, zero = 0;
    CUDA_CHECK(b, device_used(&used));
    if (c->mempools) {
        /* The pool's own high-water mark starts again here (it can only
         * be reset to zero, and then follows what the pool reserves). */
        cudaMemPool_t pool;
        CUDA_CHECK(b, default_pool(c, &pool));
        CUDA_CHECK(b, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent,
                                              &reserved));
        CUDA_CHECK(b, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    }
    cuda_held_open(&c->held, used, b->mem_in_use, (size_t)reserved);
    return BK_OK;
}

int cuda_memory_held_peak(backend *b, size_t *bytes)
{
    cuda_impl *c = cuda_of(b);
    size_t used;
    uint64_t pool_high = 0;
    CUDA_CHECK(b, device_used(&used));
    if (c->mempools) {
        cudaMemPool_t pool;
        CUDA_CHECK(b, default_pool(c, &pool));
        CUDA_CHECK(b, cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh,
                                              &pool_high));
    }
    *bytes = cuda_held_peak(&c->held, used, (size_t)pool_high);
    return BK_OK;
}
