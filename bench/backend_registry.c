#include "backend_registry.h"

#include <stdio.h>
#include <string.h>

#include "cpu_backend.h"
#ifdef ACCUBENCH_HAVE_CUDA
#include "cuda_backend.h"
#include "cupti_collector.h"
#endif

int backend_have_cuda(void)
{
#ifdef ACCUBENCH_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

static int open_cuda(dtype dt, backend **out, char *why, size_t why_len)
{
#ifdef ACCUBENCH_HAVE_CUDA
    return cuda_backend_create(dt, out, why, why_len);
#else
    (void)dt;
    *out = NULL;
    snprintf(why, why_len, "this accubench was built without the CUDA backend (nvcc was "
                           "not found at build time)");
    return BK_UNSUPPORTED;
#endif
}

int backend_open(const char *which, dtype dt, backend **out, char *note, size_t note_len,
                 char *why, size_t why_len)
{
    note[0] = '\0';
    if (strcmp(which, "cpu") == 0)
        return cpu_backend_create(dt, out, why, why_len);
    if (strcmp(which, "cuda") == 0)
        return open_cuda(dt, out, why, why_len);
    char cuda_why[320];
    if (open_cuda(dt, out, cuda_why, sizeof cuda_why) == BK_OK) {
        snprintf(note, note_len, "backend auto: a GPU answered, running on CUDA");
        return BK_OK;
    }
    snprintf(note, note_len, "backend auto: no GPU (%s); running on the CPU backend",
             cuda_why);
    return cpu_backend_create(dt, out, why, why_len);
}

collector *backend_collector(backend *b, char *why, size_t why_len)
{
#ifdef ACCUBENCH_HAVE_CUDA
    if (strcmp(b->name, "cuda") == 0) {
        collector *c = NULL;
        if (cupti_collector_create(&c, why, why_len) == BK_OK)
            return c;
        return NULL;
    }
#endif
    snprintf(why, why_len, "the %s backend records its own dispatches", b->name);
    return NULL;
}
