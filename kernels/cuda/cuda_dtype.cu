/* The CUDA backend's switch between dtypes (backend_ops.use_dtype): one
 * open device serves every dtype of a run. The GEMMs read b->dtype as they
 * run (their compute type, and their plans are cached per dtype), so the
 * switch is the fields, the datasheet peak the device is sold at in that
 * dtype, and the check that the device computes in it at all. */
#include <stdio.h>

#include "cuda_internal.h"
#include "cuda_peak.h"

extern "C" int cuda_use_dtype(backend *b, dtype dt, char *why, size_t why_len)
{
    cuda_impl *c = cuda_of(b);
    if (dt != DTYPE_FP32 && dt != DTYPE_TF32 && dt != DTYPE_BF16) {
        snprintf(why, why_len, "the cuda backend has no dtype %s", dtype_name(dt));
        return BK_UNSUPPORTED;
    }
    if (dt == DTYPE_BF16 && c->cc_major < 8) {
        snprintf(why, why_len, "bf16 GEMMs need compute capability 8.0 or newer");
        return BK_UNSUPPORTED;
    }
    b->dtype = dt;
    b->compute_storage = dtype_storage(dt);
    b->datasheet_tflops = cuda_datasheet_tflops(c->device_name, dt);
    return BK_OK;
}
