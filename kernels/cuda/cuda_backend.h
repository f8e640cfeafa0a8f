/* The CUDA backend's constructor and its attention setting, for the
 * program's backend table (bench/backend_registry.c). The functions are
 * defined only where the CUDA backend is built (ACCUBENCH_HAVE_CUDA); the
 * setting is known to every build, as the table's row states it. */
#ifndef ACCUBENCH_CUDA_BACKEND_H
#define ACCUBENCH_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* C linkage for the table's types as well as the constructor, as in
 * cuda_check.h (the standard headers first, outside the block). */
#ifdef __cplusplus
extern "C" {
#endif
#include "attention_kind.h"
#include "backend.h"

/* The variable that picks CUDA's attention arrangement (attention_kind.h),
 * and the one it runs unset: unfused, the permutes, strided-batched GEMMs
 * on the tensor cores and the causal softmax. The fused op
 * (cuda_flash_attention.cu) keeps no scores, so more sequences fit, but
 * its products run on the CUDA cores and are predicted slower than the
 * unfused path's tensor-core GEMMs until they move there
 * (docs/cuda-backend.md). */
#define CUDA_ATTENTION_ENV "ACCUBENCH_CUDA_ATTENTION"
#define CUDA_ATTENTION_DEFAULT ATTENTION_UNFUSED

/* BK_OK and a ready backend on device 0, or an error with a one-line reason
 * in `why` (no usable device, a driver too old, ...). */
int cuda_backend_create(dtype dt, backend **out, char *why, size_t why_len);

/* Non-zero, with the one-line reason, where CUDA_ATTENTION_ENV names no
 * arrangement: bad input, device or not. */
int cuda_backend_refuses(char *why, size_t why_len);

/* The backend as the arithmetic sees it, without a device: its ops table,
 * dtype and capabilities (what model_spec_on and the memory need read),
 * no memory, no impl. For answers planned for a GPU that is not here. */
void cuda_backend_outline(dtype dt, backend *out);

/* The backend's one compute stream (a cudaStream_t), for an all-reduce
 * engine that orders its work with the model's (kernels/nccl). */
void *cuda_backend_stream(backend *b);

/* While the backend waits for its stream (sync, a timer, a download), it
 * calls poll(ctx, seconds waited so far) about every 100 us once it has
 * waited 1 ms; a non-zero
 * return ends the wait with BK_ERROR, poll having written the reason into
 * b->error. The all-reduce engine passes its check for NCCL's asynchronous
 * errors, so that a dead peer ends this rank instead of leaving it waiting
 * on an event forever, and a stopped or hung one ends it after the wait
 * limit. NULL: plain blocking waits. */
void cuda_backend_set_wait_poll(backend *b, int (*poll)(void *ctx, double waited_s), void *ctx);

#ifdef __cplusplus
}
#endif

#endif
