/* The CUDA backend's waits for its stream: blocking, or, where an
 * all-reduce engine set a poll (cuda_backend_set_wait_poll), by querying,
 * so that the poll can end a wait that would never end (a dead or stopped
 * peer rank). */
#include <unistd.h>

#include "cuda_backend.h"
#include "cuda_check.h"
#include "cuda_internal.h"
extern "C" {
#include "trace.h" /* trace_now_ns: C, without guards of its own */
}

/* Waits for an event, or for the stream when ev is NULL: blocking, or,
 * with a poll set (cuda_backend_set_wait_poll), by querying, so that the
 * poll can end a wait that would never end. */
extern "C" int cuda_wait_for(backend *b, cudaEvent_t ev)
{
    cuda_impl *c = cuda_of(b);
    if (!c->wait_poll) {
        CUDA_CHECK(b, ev ? cudaEventSynchronize(ev) : cudaStreamSynchronize(c->stream));
        return BK_OK;
    }
    uint64_t t0 = trace_now_ns();
    for (long spins = 0;; spins++) {
        cudaError_t e = ev ? cudaEventQuery(ev) : cudaStreamQuery(c->stream);
        if (e == cudaSuccess)
            return BK_OK;
        if (e != cudaErrorNotReady)
            CUDA_CHECK(b, e);
        (void)cudaGetLastError(); /* "not ready" is no failure: not the next launch's */
        double waited_s = (double)(trace_now_ns() - t0) * 1e-9;
        if (spins >= 100 && c->wait_poll(c->wait_poll_ctx, waited_s))
            return BK_ERROR;
        if (spins >= 100)
            usleep(100);
        else
            usleep(10);
    }
}

extern "C" void cuda_backend_set_wait_poll(backend *b, int (*poll)(void *ctx, double waited_s),
                                           void *ctx)
{
    cuda_of(b)->wait_poll = poll;
    cuda_of(b)->wait_poll_ctx = ctx;
}
