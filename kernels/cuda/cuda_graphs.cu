/* CUDA graphs (the `graph` execution mode) and the profiler's measured
 * range (Nsight Systems' --capture-range=cudaProfilerApi), on the backend's
 * one stream: ops of the CUDA backend's table (cuda_backend.cu). */
#include <cuda_profiler_api.h>

#include "cuda_check.h"
#include "cuda_internal.h"

/* ------------------------------------------------------------- graphs */

/* Thread-local capture: calls that are illegal during a capture fail only
 * on this thread, and a collector thread (CUPTI) is left alone. A kernel
 * first launched inside the capture (SGD's update: the eager window before
 * it runs no optimizer step) is loaded there under lazy loading; drivers
 * of CUDA 12.3 and later load kernels during a capture, and CUDA 13's
 * runtime runs on no older driver, so nothing is loaded ahead. gpu-check
 * captures the graph mode with SGD, which a GPU box confirms. */
int cuda_graph_begin(backend *b)
{
    CUDA_CHECK(b, cudaStreamBeginCapture(cuda_of(b)->stream,
                                         cudaStreamCaptureModeThreadLocal));
    return BK_OK;
}

/* Ends the capture (always, so the stream is usable after a failed one),
 * instantiates the graph and uploads it, so that the first replay costs no
 * more than the others. *graph is a cudaGraphExec_t. */
int cuda_graph_end(backend *b, void **graph)
{
    cuda_impl *c = cuda_of(b);
    cudaGraph_t g = NULL;
    cudaGraphExec_t exec = NULL;
    *graph = NULL;
    cudaError_t e = cudaStreamEndCapture(c->stream, &g);
    if (e != cudaSuccess) {
        if (g)
            (void)cudaGraphDestroy(g);
        return cuda_fail(b, __FILE__, __LINE__, "cudaStreamEndCapture(c->stream, &g)", e);
    }
    e = cudaGraphInstantiate(&exec, g, 0);
    (void)cudaGraphDestroy(g);
    if (e != cudaSuccess)
        return cuda_fail(b, __FILE__, __LINE__, "cudaGraphInstantiate(&exec, g, 0)", e);
    e = cudaGraphUpload(exec, c->stream);
    if (e != cudaSuccess) {
        (void)cudaGraphExecDestroy(exec);
        return cuda_fail(b, __FILE__, __LINE__, "cudaGraphUpload(exec, c->stream)", e);
    }
    *graph = (void *)exec;
    return BK_OK;
}

int cuda_graph_launch(backend *b, void *graph)
{
    CUDA_CHECK(b, cudaGraphLaunch((cudaGraphExec_t)graph, cuda_of(b)->stream));
    return BK_OK;
}

void cuda_graph_destroy(backend *b, void *graph)
{
    (void)b;
    if (graph)
        (void)cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

/* ----------------------------------------------------------- profiler */

/* The measured region for Nsight Systems' --capture-range=cudaProfilerApi.
 * Outside a profiler these do nothing; a failure is only worth a note. */
void cuda_profiler_start(backend *b)
{
    cudaError_t e = cudaProfilerStart();
    if (e != cudaSuccess)
        cuda_fail(b, __FILE__, __LINE__, "cudaProfilerStart()", e);
}

void cuda_profiler_stop(backend *b)
{
    cudaError_t e = cudaProfilerStop();
    if (e != cudaSuccess)
        cuda_fail(b, __FILE__, __LINE__, "cudaProfilerStop()", e);
}
