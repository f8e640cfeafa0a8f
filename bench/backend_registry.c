/* The backend table and `auto` (see backend_registry.h). Adding a backend:
 * its folder under kernels/ with a constructor, and a row below. */
#include "backend_registry.h"

#include <stdio.h>
#include <string.h>

#include "cpu_backend.h"
#include "name_list.h"
#include "nearest.h"
/* Its attention setting is in every build; its functions only in one
 * with CUDA. */
#include "cuda_backend.h"
#ifdef ACCUBENCH_HAVE_CUDA
#include "cupti_collector.h"
#define CUDA_CREATE cuda_backend_create
#define CUDA_OUTLINE cuda_backend_outline
#define CUDA_REFUSES cuda_backend_refuses
#define CUDA_ABSENT NULL
#define CUDA_COLLECTOR cupti_collector_create
#else
#define CUDA_CREATE NULL
#define CUDA_OUTLINE NULL
#define CUDA_REFUSES NULL
#define CUDA_ABSENT                                                                           \
    "this accubench was built without the CUDA backend (nvcc was not found at build time)"
#define CUDA_COLLECTOR NULL
#endif

#ifdef ACCUBENCH_HAVE_MPI
#include "mpi_comm.h"
#define MPI_WORLD mpi_comm_world
#define MPI_ABSENT NULL
#else
#define MPI_WORLD NULL
#define MPI_ABSENT "this accubench was built without MPI (mpicc was not found at build time)"
#endif
#ifdef ACCUBENCH_HAVE_NCCL
#include "nccl_comm.h"
#define NCCL_SOLO nccl_comm_solo
#ifdef ACCUBENCH_HAVE_MPI
#define NCCL_WORLD nccl_comm_world
#define NCCL_ABSENT NULL
#else
#define NCCL_WORLD NULL
#define NCCL_ABSENT                                                                           \
    "this accubench was built without MPI (mpicc was not found at build time): NCCL runs "   \
    "one rank, started without mpirun"
#endif
#else
#define NCCL_SOLO NULL
#define NCCL_WORLD NULL
#define NCCL_ABSENT                                                                           \
    "this accubench was built without NCCL (it needs CUDA and nccl.h at build time)"
#endif

const backend_entry backend_table[] = {
    {.name = "cpu", .label = "the CPU backend",
     .description = "the host's cores (oneDNN, OpenBLAS or the portable GEMM), fp32 or bf16; "
                    "the reference",
     .gpu = 0, .auto_dtype = DTYPE_FP32,
     /* bf16 halves the activations but runs its GEMMs natively only where
      * oneDNN has bf16 kernels (AVX-512 and later): elsewhere each product
      * is the fp32 one plus conversions. */
     .auto_dtype_why = "the CPU backend is the fp32 reference (--dtype bf16 for bf16 storage)",
     .create = cpu_backend_create,
     .absent = NULL, .collector = NULL, .collector_records = NULL,
     .comm_world = MPI_WORLD, .comm_absent = MPI_ABSENT, .comm_solo = NULL,
     .auto_optimizer_at = OPT_AT_BACKWARD,
     .auto_optimizer_at_why = "each layer's update then reads its gradient and weights from "
                              "cache, not from memory",
     .attention_env = CPU_ATTENTION_ENV, .attention_default = CPU_ATTENTION_DEFAULT},
    {.name = "cuda", .label = "CUDA",
     .description = "an NVIDIA GPU: cuBLASLt GEMMs, CUDA kernels, CUPTI activity records",
     .gpu = 1, .auto_dtype = DTYPE_BF16,
     .auto_dtype_why = "bf16 runs on the GPU's tensor cores, where fp32 would leave them idle",
     .create = CUDA_CREATE, .absent = CUDA_ABSENT, .refuses = CUDA_REFUSES,
     .outline = CUDA_OUTLINE,
     .collector = CUDA_COLLECTOR,
     .collector_records = "CUPTI activity records", .comm_world = NCCL_WORLD,
     .comm_absent = NCCL_ABSENT, .comm_solo = NCCL_SOLO, .auto_optimizer_at = OPT_AT_STEP,
     .auto_optimizer_at_why = "one update kernel a step, not one per layer",
     .attention_env = CUDA_ATTENTION_ENV, .attention_default = CUDA_ATTENTION_DEFAULT},
};
const size_t backend_table_count = sizeof backend_table / sizeof backend_table[0];

const backend_entry *backend_find(const char *name)
{
    for (size_t i = 0; i < backend_table_count; i++)
        if (strcmp(backend_table[i].name, name) == 0)
            return &backend_table[i];
    return NULL;
}

const backend_entry *backend_first(int gpu)
{
    for (size_t i = 0; i < backend_table_count; i++)
        if (!backend_table[i].gpu == !gpu)
            return &backend_table[i];
    return NULL;
}

static const char *name_at(int i) { return backend_table[i].name; }
/* "auto" first, then the table's rows. */
static const char *name_at_with_auto(int i) { return i ? backend_table[i - 1].name : "auto"; }

void backend_names(char *out, size_t len, const char *sep, int with_auto)
{
    int n = (int)backend_table_count;
    if (with_auto)
        name_list(out, len, n + 1, name_at_with_auto, sep);
    else
        name_list(out, len, n, name_at, sep);
}

int backend_check_name(const char *name, char *why, size_t why_len)
{
    if (strcmp(name, "auto") == 0 || backend_find(name))
        return 0;
    char known[256];
    backend_names(known, sizeof known, ", ", 1);
    snprintf(why, why_len, "unknown backend '%s' (known: %s)", name, known);
    nearest_suggest(why, why_len, name, known);
    return -1;
}

int backend_create(const backend_entry *e, dtype dt, backend **out, char *why,
                   size_t why_len)
{
    *out = NULL;
    if (!e->create) {
        snprintf(why, why_len, "%s", e->absent);
        return BK_UNSUPPORTED;
    }
    return e->create(dt == DTYPE_AUTO ? e->auto_dtype : dt, out, why, why_len);
}

/* auto: the GPU rows in table order, the first that answers; else the
 * first other row, with every GPU row's reason in the note. */
static int open_auto(dtype dt, backend **out, const backend_entry **entry, char *note,
                     size_t note_len, char *why, size_t why_len)
{
    char reasons[640] = "";
    size_t used = 0;
    int gpu_present = 0; /* a GPU row found a device that would not run */
    int gpu_built = 0;   /* a GPU row is built into this program */
    for (size_t i = 0; i < backend_table_count; i++) {
        const backend_entry *e = &backend_table[i];
        if (!e->gpu)
            continue;
        char reason[320];
        /* A typo in a GPU backend's settings is said, not run past on
         * another backend. */
        if (e->refuses && e->refuses(why, why_len))
            return BK_ERROR;
        int rc = backend_create(e, dt, out, reason, sizeof reason);
        if (rc == BK_OK) {
            *entry = e;
            snprintf(note, note_len, "backend auto: a GPU answered, running on %s", e->label);
            return BK_OK;
        }
        /* Built in, and a device there that failed: that reason matters. */
        gpu_present |= e->create && rc != BK_NO_DEVICE;
        gpu_built |= e->create != NULL;
        if (used < sizeof reasons)
            used += (size_t)snprintf(reasons + used, sizeof reasons - used, "%s%s",
                                     used ? "; " : "", reason);
    }
    const backend_entry *fallback = backend_first(0);
    if (!fallback) {
        snprintf(why, why_len, "backend auto: no GPU (%s) and no other backend", reasons);
        return BK_UNSUPPORTED;
    }
    *entry = fallback;
    /* No GPU at all is the plain case; a GPU that failed is worth its
     * reason. */
    if (gpu_present || !gpu_built)
        snprintf(note, note_len, "backend auto: no usable GPU (%s); running on %s", reasons,
                 fallback->label);
    else
        snprintf(note, note_len, "backend auto: running on %s because no GPU is present",
                 fallback->label);
    return backend_create(fallback, dt, out, why, why_len);
}

int backend_open(const char *name, dtype dt, backend **out, const backend_entry **entry,
                 char *note, size_t note_len, char *why, size_t why_len)
{
    note[0] = '\0';
    *out = NULL;
    if (strcmp(name, "auto") == 0)
        return open_auto(dt, out, entry, note, note_len, why, why_len);
    const backend_entry *e = backend_find(name);
    if (!e) {
        backend_check_name(name, why, why_len);
        return BK_UNSUPPORTED;
    }
    *entry = e;
    return backend_create(e, dt, out, why, why_len);
}

int backend_open_first(const char *name, const dtype *dts, int n, int *at, backend **out,
                       const backend_entry **entry, char *note, size_t note_len, char *why,
                       size_t why_len)
{
    char later[600];
    int first = BK_UNSUPPORTED;
    for (int i = 0; i < n; i++) {
        int rc = backend_open(name, dts[i], out, entry, note, note_len, i ? later : why,
                              i ? sizeof later : why_len);
        if (rc == BK_OK) {
            *at = i;
            return BK_OK;
        }
        first = i ? first : rc;
    }
    return first;
}

collector *backend_open_collector(const backend_entry *entry, const backend *b, char *source,
                                  size_t source_len)
{
    if (!entry->collector) {
        if (b->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK)
            snprintf(source, source_len, "the %s backend records its own dispatches", b->name);
        else
            snprintf(source, source_len, "the %s backend has no activity collector", b->name);
        return NULL;
    }
    collector *c = NULL;
    if (entry->collector(&c, source, source_len) != BK_OK)
        return NULL;
    snprintf(source, source_len, "%s", entry->collector_records);
    return c;
}
