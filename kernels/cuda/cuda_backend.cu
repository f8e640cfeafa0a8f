/* The CUDA backend: the backend table on an NVIDIA GPU.
 *
 * One device (0, as CUDA_VISIBLE_DEVICES orders them), one compute stream
 * (non-blocking, so nothing else in the process serialises with it), one
 * cuBLAS and one cuBLASLt handle sharing one workspace. Every op is issued
 * on that stream and returns without waiting, except download, sync and
 * timer_elapsed_ms, which exist to wait. The element-wise kernels live in
 * cuda_elementwise.cu, the GEMMs in cuda_gemm.cu, the error messages in
 * cuda_errors.cu, graph capture and the profiler's range in
 * cuda_graphs.cu, the allocators and what the device held at most in
 * cuda_memory.cu. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"
#include "cuda_check.h"
#include "cublas_load.h"
#include "cuda_internal.h"
#include "cuda_device_index.h"
#include "cuda_peak.h"

struct bk_timer {
    cudaEvent_t event;
};

/* ------------------------------------------------------- transfers */

/* The source may be reused as soon as this returns. A small upload (the
 * optimizer's per-step numbers) is copied into a pinned slot and sent from
 * there, so it never waits for the stream: a copy straight from pageable
 * memory may synchronise with the stream, a hidden host sync inside every
 * step. A slot is reused CUDA_UPLOAD_SLOTS uploads later, once its event
 * says its copy is done (long since, in practice). Large uploads are set-up
 * work and go straight from pageable memory; the driver stages them before
 * cudaMemcpyAsync returns. A copy inside a graph capture would bake this
 * call's host address into the graph, so it is refused there (the harness
 * uploads before each replay). */
static int cu_upload(backend *b, void *dst, const void *src, size_t bytes)
{
    cuda_impl *c = cuda_of(b);
    cudaStreamCaptureStatus capture;
    CUDA_CHECK(b, cudaStreamIsCapturing(c->stream, &capture));
    if (capture != cudaStreamCaptureStatusNone) {
        snprintf(b->error, sizeof b->error,
                 "upload inside a graph capture: upload before the replay instead");
        return BK_UNSUPPORTED;
    }
    int rc;
    if (bytes > CUDA_UPLOAD_SLOT_BYTES) {
        /* A copy from pageable memory syncs the stream before it starts:
         * where a poll is set (a peer rank may never arrive), the stream
         * is waited for by polling first, as cu_download does. */
        if (c->wait_poll && (rc = cuda_wait_for(b, NULL)))
            return rc;
        CUDA_CHECK(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream));
        return BK_OK;
    }
    int i = c->upload_next;
    c->upload_next = (i + 1) % CUDA_UPLOAD_SLOTS;
    unsigned char *slot = c->upload_ring + (size_t)i * CUDA_UPLOAD_SLOT_BYTES;
    /* the slot's last copy done (polled where a poll is set) */
    if ((rc = cuda_wait_for(b, c->upload_done[i])))
        return rc;
    memcpy(slot, src, bytes);
    CUDA_CHECK(b, cudaMemcpyAsync(dst, slot, bytes, cudaMemcpyHostToDevice, c->stream));
    CUDA_CHECK(b, cudaEventRecord(c->upload_done[i], c->stream));
    return BK_OK;
}

static int cu_download(backend *b, void *dst, const void *src, size_t bytes)
{
    cuda_impl *c = cuda_of(b);
    /* A copy into pageable memory returns only once the stream has
     * reached it: where a poll is set (a peer rank may never arrive), the
     * stream is waited for by polling first, so the copy cannot block. */
    if (c->wait_poll) {
        int rc = cuda_wait_for(b, NULL);
        if (rc)
            return rc;
    }
    CUDA_CHECK(b, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream));
    return cuda_wait_for(b, NULL);
}

static int cu_zero(backend *b, void *dst, size_t bytes)
{
    CUDA_CHECK(b, cudaMemsetAsync(dst, 0, bytes, cuda_of(b)->stream));
    return BK_OK;
}

/* ------------------------------------------------------------- timers */

static int cu_timer_create(backend *b, bk_timer **out)
{
    bk_timer *t = (bk_timer *)calloc(1, sizeof *t);
    *out = NULL;
    if (!t) {
        snprintf(b->error, sizeof b->error, "out of host memory for a timer");
        return BK_OOM;
    }
    cudaError_t e = cudaEventCreate(&t->event);
    if (e != cudaSuccess) {
        free(t);
        return cuda_fail(b, __FILE__, __LINE__, "cudaEventCreate(&t->event)", e);
    }
    *out = t;
    return BK_OK;
}

static void cu_timer_destroy(backend *b, bk_timer *t)
{
    (void)b;
    if (!t)
        return;
    (void)cudaEventDestroy(t->event);
    free(t);
}

static int cu_timer_record(backend *b, bk_timer *t)
{
    CUDA_CHECK(b, cudaEventRecord(t->event, cuda_of(b)->stream));
    return BK_OK;
}

static int cu_timer_elapsed(backend *b, bk_timer *start, bk_timer *end, double *ms)
{
    float f = 0.0f;
    int rc = cuda_wait_for(b, end->event);
    if (rc)
        return rc;
    CUDA_CHECK(b, cudaEventElapsedTime(&f, start->event, end->event));
    *ms = (double)f;
    return BK_OK;
}

static int cu_sync(backend *b)
{
    return cuda_wait_for(b, NULL);
}

/* ------------------------------------------------------- create/destroy */

/* Frees whatever the backend holds; safe on a half-built one. */
static void cu_destroy(backend *b)
{
    if (!b)
        return;
    cuda_impl *c = cuda_of(b);
    if (c) {
        if (c->stream) {
            /* A capture left open by an error path would keep the stream
             * unusable: end it and drop what it caught. */
            cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
            if (cudaStreamIsCapturing(c->stream, &capture) == cudaSuccess &&
                capture != cudaStreamCaptureStatusNone) {
                cudaGraph_t g = NULL;
                (void)cudaStreamEndCapture(c->stream, &g);
                if (g)
                    (void)cudaGraphDestroy(g);
            }
            (void)cudaStreamSynchronize(c->stream);
        }
        cuda_gemm_destroy(b);
        if (c->lt)
            (void)cublasLtDestroy(c->lt);
        if (c->blas)
            (void)cublasDestroy(c->blas);
        if (c->workspace)
            (void)cudaFree(c->workspace);
        if (c->reduce_scratch)
            (void)cudaFree(c->reduce_scratch);
        for (int i = 0; i < CUDA_UPLOAD_SLOTS; i++)
            if (c->upload_done[i])
                (void)cudaEventDestroy(c->upload_done[i]);
        if (c->upload_ring)
            (void)cudaFreeHost(c->upload_ring);
        if (c->stream)
            (void)cudaStreamDestroy(c->stream);
        if (c->mempools)
            (void)cuda_trim_pool(c);
        (void)cudaGetLastError();
        free(c);
    }
    free(b);
}

/* Filled by name (C++17 has no designated initializers): the order of
 * backend_ops may change without this table going wrong. `fused`: with
 * the fused attention (cuda_flash_attention.cu); without it the model runs
 * the permutes, strided-batched GEMMs and causal softmax. */
static backend_ops cuda_ops_table(int fused)
{
    backend_ops o;
    memset(&o, 0, sizeof o);
    o.destroy = cu_destroy;
    o.use_dtype = cuda_use_dtype;
    o.alloc = cuda_alloc;
    o.free = cuda_free;
    o.alloc_transient = cuda_alloc_transient;
    o.free_transient = cuda_free_transient;
    o.upload = cu_upload;
    o.download = cu_download;
    o.zero = cu_zero;
    o.held_reset = cuda_memory_held_reset;
    o.held_peak = cuda_memory_held_peak;
    o.gemm = cuda_gemm;
    o.bias_gelu_forward = cuda_bias_gelu_forward;
    o.gelu_forward = cuda_gelu_forward;
    o.gelu_backward = cuda_gelu_backward;
    o.bias_grad_accumulate = cuda_bias_grad;
    o.softmax_xent = cuda_softmax_xent;
    o.layernorm_forward = cuda_layernorm_forward;
    o.layernorm_backward = cuda_layernorm_backward;
    o.causal_softmax_forward = cuda_causal_softmax_forward;
    o.causal_softmax_backward = cuda_causal_softmax_backward;
    o.embedding_forward = cuda_embedding_forward;
    o.embedding_backward = cuda_embedding_backward;
    o.add = cuda_add;
    o.permute_heads = cuda_permute_heads;
    if (fused) {
        o.attention_forward = cuda_attention_forward;
        o.attention_backward = cuda_attention_backward;
    }
    o.rmsnorm_forward = cuda_rmsnorm_forward;
    o.rmsnorm_backward = cuda_rmsnorm_backward;
    o.swiglu_forward = cuda_swiglu_forward;
    o.swiglu_backward = cuda_swiglu_backward;
    o.rotary_forward = cuda_rotary_forward;
    o.rotary_backward = cuda_rotary_backward;
    o.repeat_kv_forward = cuda_repeat_kv_forward;
    o.repeat_kv_backward = cuda_repeat_kv_backward;
    o.adamw = cuda_adamw;
    o.sgd = cuda_sgd;
    o.convert = cuda_convert;
    o.to_f32 = cuda_to_f32;
    o.sum_squares = cuda_sum_squares;
    o.axpy = cuda_axpy;
    o.round_bf16 = cuda_round_bf16;
    o.timer_create = cu_timer_create;
    o.timer_destroy = cu_timer_destroy;
    o.timer_record = cu_timer_record;
    o.timer_elapsed_ms = cu_timer_elapsed;
    o.sync = cu_sync;
    o.graph_begin = cuda_graph_begin;
    o.graph_end = cuda_graph_end;
    o.graph_launch = cuda_graph_launch;
    o.graph_destroy = cuda_graph_destroy;
    o.profiler_start = cuda_profiler_start;
    o.profiler_stop = cuda_profiler_stop;
    return o;
}

static const backend_ops cuda_ops_fused = cuda_ops_table(1);
static const backend_ops cuda_ops_unfused = cuda_ops_table(0);

/* The ops table CUDA_ATTENTION_ENV asks for (cuda_backend.h), or NULL
 * with the one-line reason (when why is not NULL) where it names no
 * arrangement. */
static const backend_ops *ops_for_attention(char *why, size_t why_len)
{
    attention_kind k;
    if (attention_from_env(CUDA_ATTENTION_ENV, CUDA_ATTENTION_DEFAULT, &k, why, why_len))
        return NULL;
    return k == ATTENTION_FUSED ? &cuda_ops_fused : &cuda_ops_unfused;
}

/* Whether the failure means there is no GPU here at all rather than one
 * that does not work: no device, or a runtime that finds no driver where
 * no NVIDIA kernel driver is loaded. */
static int no_gpu_present(cudaError_t e)
{
    return e == cudaErrorNoDevice ||
           (e == cudaErrorInsufficientDriver && access("/proc/driver/nvidia/version", F_OK) != 0);
}

/* The device this process uses (cuda_device_index.h). */
static int chosen_device;

/* Whether the chosen device can run this build at all; BK_OK, BK_NO_DEVICE
 * (no GPU here) or BK_UNSUPPORTED with the reason (no driver, no device, no
 * kernel image for its architecture). */
static int device_usable(dtype dt, char *why, size_t why_len)
{
    int count = 0;
    const char *call = "cudaGetDeviceCount";
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count == 0)
        e = cudaErrorNoDevice;
    if (e == cudaSuccess &&
        cuda_device_for_index(getenv("ACCUBENCH_DEVICE_INDEX"), count, &chosen_device, why,
                              why_len))
        return BK_UNSUPPORTED;
    if (e == cudaSuccess) {
        call = "cudaSetDevice";
        e = cudaSetDevice(chosen_device);
    }
    if (e == cudaSuccess) {
        call = "cudaFree(0)"; /* creates the context now, so its failure shows here */
        e = cudaFree(0);
    }
    if (e != cudaSuccess && no_gpu_present(e)) {
        /* The runtime's words for "no driver" ("driver version is
         * insufficient") send a person to upgrade what is not there. */
        snprintf(why, why_len, "no usable CUDA device: no NVIDIA driver or GPU was found on this "
                 "machine (%s)", e == cudaErrorNoDevice ? "the driver sees no GPU"
                                                        : "no NVIDIA kernel driver is loaded");
        (void)cudaGetLastError();
        return BK_NO_DEVICE;
    }
    if (e != cudaSuccess) {
        snprintf(why, why_len, "no usable CUDA device: %s: %s", call, cudaGetErrorString(e));
        (void)cudaGetLastError();
        return BK_UNSUPPORTED;
    }
    e = cuda_elementwise_loadable();
    if (e != cudaSuccess) {
        int major = 0, minor = 0;
        (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, chosen_device);
        (void)cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, chosen_device);
        snprintf(why, why_len,
                 "no usable CUDA device: this build has no code for sm_%d%d (%s); rebuild "
                 "with NVCC_GENCODE naming it",
                 major, minor, cudaGetErrorString(e));
        (void)cudaGetLastError();
        return BK_UNSUPPORTED;
    }
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, chosen_device) ==
            cudaSuccess &&
        dt == DTYPE_BF16 && major < 8) {
        snprintf(why, why_len, "bf16 GEMMs need compute capability 8.0 or newer");
        return BK_UNSUPPORTED;
    }
    return BK_OK;
}

/* The stream, the scratch and upload buffers, and the cuBLAS and cuBLASLt
 * handles the backend's ops use, then the GEMM plan cache. */
static int cu_create_handles(backend *b, cuda_impl *c)
{
    CUDA_CHECK(b, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CUDA_CHECK(b, cudaMalloc(&c->workspace, CUDA_GEMM_WORKSPACE_BYTES));
    CUDA_CHECK(b, cudaMalloc((void **)&c->reduce_scratch,
                             CUDA_REDUCE_SCRATCH_FLOATS * sizeof(float)));
    CUDA_CHECK(b, cudaHostAlloc((void **)&c->upload_ring,
                                CUDA_UPLOAD_SLOTS * CUDA_UPLOAD_SLOT_BYTES,
                                cudaHostAllocDefault));
    for (int i = 0; i < CUDA_UPLOAD_SLOTS; i++)
        CUDA_CHECK(b, cudaEventCreateWithFlags(&c->upload_done[i], cudaEventDisableTiming));
    if (cublas_load(b->error, sizeof b->error))
        return BK_ERROR;
    CUBLAS_CHECK(b, cublasCreate(&c->blas));
    CUBLAS_CHECK(b, cublasSetStream(c->blas, c->stream));
    /* With its workspace given, cuBLAS allocates nothing while a graph is
     * being captured. */
    CUBLAS_CHECK(b, cublasSetWorkspace(c->blas, c->workspace, CUDA_GEMM_WORKSPACE_BYTES));
    CUBLASLT_CHECK(b, cublasLtCreate(&c->lt));
    return cuda_gemm_create(b);
}

/* Where the device has memory pools, keeps freed blocks in the default
 * pool instead of handing them back at every sync: how frameworks use the
 * stream-ordered allocator. */
static int cu_keep_pool_blocks(backend *b, cuda_impl *c)
{
    int pools = 0;
    CUDA_CHECK(b, cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, c->device));
    if (pools) {
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        CUDA_CHECK(b, cudaDeviceGetDefaultMemPool(&pool, c->device));
        CUDA_CHECK(b, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
        c->mempools = 1;
    }
    return BK_OK;
}

/* What the CSV says of the device and its libraries (b->device has no
 * commas, so that it is one CSV field), its memory and its peak. */
static int cu_describe(backend *b, cuda_impl *c, const cudaDeviceProp *p)
{
    int blas_version = 0, runtime = 0, driver = 0;
    CUBLAS_CHECK(b, cublasGetVersion(c->blas, &blas_version));
    CUDA_CHECK(b, cudaRuntimeGetVersion(&runtime));
    CUDA_CHECK(b, cudaDriverGetVersion(&driver));
    snprintf(b->device, sizeof b->device, "%.80s (sm_%d%d %d SMs %.0f GB)", p->name, p->major,
             p->minor, p->multiProcessorCount, (double)p->totalGlobalMem / 1e9);
    for (char *s = b->device; *s; s++)
        if (*s == ',')
            *s = ' ';
    snprintf(b->library, sizeof b->library,
             "cuBLAS %d.%d.%d + cuBLASLt %zu; CUDA runtime %d.%d; driver %d.%d",
             blas_version / 10000, blas_version / 100 % 100, blas_version % 100,
             cublasLtGetVersion(), runtime / 1000, runtime % 1000 / 10, driver / 1000,
             driver % 1000 / 10);
    b->mem_total = p->totalGlobalMem;
    b->peak_gemm_n = cuda_peak_gemm_n(p->totalGlobalMem);
    snprintf(c->device_name, sizeof c->device_name, "%s", p->name);
    c->cc_major = p->major;
    return cuda_use_dtype(b, b->dtype, b->error, sizeof b->error); /* its datasheet peak */
}

/* Everything the backend holds, built in order; on failure the reason is in
 * b->error and cu_destroy frees what was built. */
static int cu_init(backend *b)
{
    cuda_impl *c = cuda_of(b);
    cudaDeviceProp p;
    CUDA_CHECK(b, cudaGetDeviceProperties(&p, c->device));
    /* for NVML's clocks beside each config (harness/util/gpu_clocks.h) */
    CUDA_CHECK(b, cudaDeviceGetPCIBusId(b->pci_bus_id, (int)sizeof b->pci_bus_id, c->device));
    c->sm_count = p.multiProcessorCount;

    int rc = cu_create_handles(b, c);
    if (rc == BK_OK && b->ops->attention_forward)
        rc = cuda_flash_attention_prepare(b);
    if (rc == BK_OK)
        rc = cu_keep_pool_blocks(b, c);
    if (rc == BK_OK)
        rc = cu_describe(b, c, &p);
    return rc;
}

extern "C" void *cuda_backend_stream(backend *b)
{
    return cuda_of(b)->stream;
}

extern "C" int cuda_backend_refuses(char *why, size_t why_len)
{
    return ops_for_attention(why, why_len) ? 0 : -1;
}

/* The ops table is the one CUDA_ATTENTION_ENV names, so that a plan
 * for a GPU that is not here charges the arrangement a run would take
 * (unfused: the scores; fused: the log-sum-exps). A value naming neither
 * never gets here: cuda_backend_create refuses it first, device or not. */
extern "C" void cuda_backend_outline(dtype dt, backend *out)
{
    memset(out, 0, sizeof *out);
    const backend_ops *ops = ops_for_attention(NULL, 0);
    out->ops = ops ? ops : &cuda_ops_unfused;
    out->name = "cuda";
    out->caps = 0; /* kernels run after their launch returns, in device memory */
    out->dtype = dt;
    out->compute_storage = dtype_storage(dt);
    out->head_chunk_bytes = CUDA_HEAD_CHUNK_BYTES; /* the memory need follows it */
}

extern "C" int cuda_backend_create(dtype dt, backend **out, char *why, size_t why_len)
{
    *out = NULL;
    /* Bad input first, so that it is said whether a device is here or not
     * (and plan does not answer for a GPU from the arithmetic instead). */
    if (!ops_for_attention(why, why_len))
        return BK_ERROR;
    int rc = device_usable(dt, why, why_len);
    if (rc != BK_OK)
        return rc;
    backend *b = (backend *)calloc(1, sizeof *b);
    cuda_impl *c = (cuda_impl *)calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        snprintf(why, why_len, "out of host memory");
        return BK_OOM;
    }
    cuda_backend_outline(dt, b);
    b->impl = c;
    c->device = chosen_device;
    rc = cu_init(b);
    if (rc != BK_OK) {
        snprintf(why, why_len, "%s", b->error);
        cu_destroy(b);
        return rc;
    }
    *out = b;
    return BK_OK;
}
