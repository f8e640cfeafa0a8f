/* The CPU backend: the embedded default and the reference GPU results are
 * checked against. fp32, or bf16 storage of the activations and the
 * weights' compute copy (fp32 math, fp32 master weights, gradients and
 * optimizer state: docs/cpu-backend.md); the per-element math comes from
 * elementwise.h, the GEMM from cpu_gemm.c and cpu_gemm_bf16.c. Every op runs to completion
 * before it returns, so sync() has nothing to wait for. */
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cpu_backend.h"
#include "cpu_bf16.h"
#include "cpu_gemm.h"
#include "cpu_gemm_bf16.h"
#include "cpu_internal.h"
#include "cpu_parallel.h"
#include "elementwise.h"
#include "resident_peak.h"
#include "trace.h"

struct bk_timer {
    uint64_t ns;
};

static void cpu_destroy(backend *b)
{
    free(b);
}

static int cpu_alloc(backend *b, size_t bytes, void **out)
{
    /* Linux overcommits: a huge malloc succeeds and the first touch kills
     * the process. Refuse what physical memory cannot hold instead. */
    if (b->mem_total && b->mem_in_use + bytes > b->mem_total) {
        *out = NULL;
        snprintf(b->error, sizeof b->error, "%zu bytes more would pass the host's %zu bytes",
                 bytes, b->mem_total);
        return BK_OOM;
    }
    /* Page-aligned, not just 64 bytes: a buffer's place in its page is the
     * same in every runner, where the heap's offsets gave an A/A pair a bias
     * of up to 8% that no paired interval sees (docs/measuring.md). */
    size_t rounded = (bytes + 4095) & ~(size_t)4095;
    *out = aligned_alloc(4096, rounded ? rounded : 4096);
    if (!*out) {
        snprintf(b->error, sizeof b->error, "out of host memory allocating %zu bytes", bytes);
        return BK_OOM;
    }
    return BK_OK;
}

static void cpu_free(backend *b, void *p)
{
    (void)b;
    free(p);
}

/* The host has one allocator: both transient kinds are plain allocations. */
static int cpu_alloc_transient(backend *b, bk_allocator from, size_t bytes, void **out)
{
    (void)from;
    return cpu_alloc(b, bytes, out);
}

static void cpu_free_transient(backend *b, bk_allocator from, void *p)
{
    (void)from;
    cpu_free(b, p);
}

static int cpu_copy(backend *b, void *dst, const void *src, size_t bytes)
{
    (void)b;
    memcpy(dst, src, bytes);
    return BK_OK;
}

static int cpu_zero(backend *b, void *dst, size_t bytes)
{
    (void)b;
    memset(dst, 0, bytes);
    return BK_OK;
}

/* On the CPU the device is the process: its resident high-water mark.
 * The C library's free memory goes back to the system first, so that the
 * window starts from what is live, not from what the checks before it
 * (their host copies in double) once took. */
static int cpu_held_reset(backend *b)
{
    (void)b;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    return resident_peak_reset() ? BK_UNSUPPORTED : BK_OK;
}

static int cpu_held_peak(backend *b, size_t *bytes)
{
    (void)b;
    return resident_peak_bytes(bytes) ? BK_UNSUPPORTED : BK_OK;
}

int cpu_f32_only(backend *b, storage s)
{
    if (s == STORAGE_F32)
        return BK_OK;
    snprintf(b->error, sizeof b->error,
             "the cpu backend's fused attention computes in fp32 only (a bf16 run takes the "
             "unfused path)");
    return BK_UNSUPPORTED;
}

/* fp32 products through cpu_gemm.c; bf16 operands through
 * cpu_gemm_bf16.c, which sums in fp32 and rounds C once where C is bf16. */
static int cpu_gemm(backend *b, const gemm_desc *g)
{
    if (g->ab_storage == STORAGE_BF16) {
        if (!cpu_gemm_bf16(g))
            return BK_OK;
        snprintf(b->error, sizeof b->error, "out of host memory for the bf16 GEMM's panels");
        return BK_OOM;
    }
    if (g->c_storage != STORAGE_F32) {
        snprintf(b->error, sizeof b->error, "gemm: fp32 operands into a bf16 C");
        return BK_UNSUPPORTED;
    }
    cpu_sgemm_batched(g->trans_a, g->trans_b, g->m, g->n, g->k, g->alpha, g->a, g->lda,
                      g->stride_a, g->b, g->ldb, g->stride_b, g->beta, g->c, g->ldc,
                      g->stride_c, g->batch);
    return BK_OK;
}

typedef struct bias_gelu_args {
    void *z, *h;
    const float *bias;
    int rows, gelu;
} bias_gelu_args;

/* Two loops a column, as before bf16: with the bias add, the GELU and
 * both stores in one loop gcc left it scalar (a gpt-cpu 16x1 step's
 * bias_gelu took 23.8 ms against 3.6). GELU reads the pre-activation as
 * stored (in bf16, rounded): the value the backward reads, as on the GPU. */
BF16_INLINE void bias_gelu_body(void *ctx, storage s, size_t first, size_t last)
{
    const bias_gelu_args *a = ctx;
    void *z = a->z, *h = a->h;
    const float *bias = a->bias;
    size_t rows = (size_t)a->rows;
    for (size_t j = first; j < last; j++) {
        size_t col = j * rows;
        for (size_t i = 0; i < rows; i++)
            store_from_f32(z, s, col + i, load_as_f32(z, s, col + i) + bias[i]);
        if (a->gelu)
            for (size_t i = 0; i < rows; i++)
                store_from_f32(h, s, col + i, ew_gelu(load_as_f32(z, s, col + i)));
    }
}
CPU_STORAGE_LOOPS(bias_gelu_columns, bias_gelu_body)

static int cpu_bias_gelu_forward(backend *b, storage s, void *z, const float *bias,
                                 void *h, int rows, int cols, int gelu)
{
    (void)b;
    bias_gelu_args a = {z, h, bias, rows, gelu};
    cpu_parallel_for((size_t)cols, (gelu ? PARALLEL_MIN_EXP_ELEMS : PARALLEL_MIN_ELEMS) /
                     (size_t)rows + 1, bias_gelu_columns(s), &a);
    return BK_OK;
}

typedef struct gelu_args {
    const void *z, *dh;
    void *out;
} gelu_args;

BF16_INLINE void gelu_forward_body(void *ctx, storage s, size_t first, size_t last)
{
    const gelu_args *a = ctx;
    for (size_t i = first; i < last; i++)
        store_from_f32(a->out, s, i, ew_gelu(load_as_f32(a->z, s, i)));
}
CPU_STORAGE_LOOPS(gelu_forward_range, gelu_forward_body)

static int cpu_gelu_forward(backend *b, storage s, const void *z, void *h, size_t n)
{
    (void)b;
    gelu_args a = {z, NULL, h};
    cpu_parallel_for(n, PARALLEL_MIN_EXP_ELEMS, gelu_forward_range(s), &a);
    return BK_OK;
}

/* dz may alias dh: each element is read before it is written. */
BF16_INLINE void gelu_backward_body(void *ctx, storage s, size_t first, size_t last)
{
    const gelu_args *a = ctx;
    for (size_t i = first; i < last; i++)
        store_from_f32(a->out, s, i,
                       load_as_f32(a->dh, s, i) * ew_gelu_grad(load_as_f32(a->z, s, i)));
}
CPU_STORAGE_LOOPS(gelu_backward_range, gelu_backward_body)

static int cpu_gelu_backward(backend *b, storage s, const void *z, const void *dh,
                             void *dz, size_t n)
{
    (void)b;
    gelu_args a = {z, dh, dz};
    cpu_parallel_for(n, PARALLEL_MIN_EXP_ELEMS, gelu_backward_range(s), &a);
    return BK_OK;
}

typedef struct bias_grad_args {
    const void *dz;
    float *db;
    int rows, cols;
} bias_grad_args;

/* One thread, columns in order, the sum in fp32 (the bias gradient). */
BF16_INLINE void bias_grad_body(void *ctx, storage s, size_t first, size_t last)
{
    const bias_grad_args *a = ctx;
    size_t rows = (size_t)a->rows;
    for (size_t j = first; j < last; j++)
        for (size_t i = 0; i < rows; i++)
            a->db[i] += load_as_f32(a->dz, s, j * rows + i);
}
CPU_STORAGE_LOOPS(bias_grad_columns, bias_grad_body)

static int cpu_bias_grad(backend *b, storage s, const void *dz, float *db, int rows, int cols)
{
    (void)b;
    bias_grad_args a = {dz, db, rows, cols};
    bias_grad_columns(s)(&a, 0, cols > 0 ? (size_t)cols : 0);
    return BK_OK;
}

typedef struct softmax_xent_args {
    const void *logits;
    void *dlogits;
    float *losses;
    const int *labels, *valid;
    float scale;
    int classes;
    int out_of_memory; /* set by a bf16 chunk that could not get its column */
} softmax_xent_args;

CPU_HOT static void softmax_xent_columns(void *ctx, size_t first, size_t last)
{
    const softmax_xent_args *a = ctx;
    size_t classes = (size_t)a->classes;
    for (size_t j = first; j < last; j++)
        a->losses[j] = cpu_softmax_xent_column((const float *)a->logits + j * classes,
                                               (float *)a->dlogits + j * classes, a->classes,
                                               a->labels[j], a->valid[j], a->scale);
}

/* bf16: each example's logits converted into fp32 beside the chunk, the
 * fp32 column's math, its gradient rounded once. */
CPU_HOT static void softmax_xent_columns_bf16(void *ctx, size_t first, size_t last)
{
    softmax_xent_args *a = ctx;
    size_t classes = (size_t)a->classes;
    float *col = malloc(2 * classes * sizeof *col);
    if (!col) {
        __atomic_store_n(&a->out_of_memory, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t j = first; j < last; j++) {
        bf16_to_f32((const bf16_bits *)a->logits + j * classes, col, classes);
        a->losses[j] = cpu_softmax_xent_column(col, col + classes, a->classes, a->labels[j],
                                               a->valid[j], a->scale);
        f32_to_bf16(col + classes, (bf16_bits *)a->dlogits + j * classes, classes);
    }
    free(col);
}

static int cpu_softmax_xent(backend *b, storage s, const void *logits, void *dlogits,
                            const int *labels, const int *valid, const float *scale,
                            float *loss_sum, int classes, int batch)
{
    float *losses = malloc((size_t)batch * sizeof *losses);
    if (!losses) {
        snprintf(b->error, sizeof b->error, "out of host memory for %d losses", batch);
        return BK_OOM;
    }
    softmax_xent_args a = {logits, dlogits, losses, labels, valid, *scale, classes, 0};
    cpu_parallel_for((size_t)batch, PARALLEL_MIN_ELEMS / ((size_t)classes * 4) + 1,
                     s == STORAGE_BF16 ? softmax_xent_columns_bf16 : softmax_xent_columns, &a);
    if (a.out_of_memory) {
        free(losses);
        snprintf(b->error, sizeof b->error, "out of host memory for a column of %d logits",
                 classes);
        return BK_OOM;
    }
    /* The examples' losses added in order, whatever the threads: the sum
     * does not depend on how the examples were cut. */
    float sum = 0.0f;
    for (int j = 0; j < batch; j++)
        sum += losses[j];
    free(losses);
    *loss_sum += sum;
    return BK_OK;
}

typedef struct adamw_args {
    float *w, *m, *v;
    const float *g;
    adamw_hparams h;
} adamw_args;

CPU_HOT static void adamw_range(void *ctx, size_t first, size_t last)
{
    adamw_args *a = ctx;
    const adamw_hparams h = a->h;
    float *restrict w = a->w, *restrict m = a->m, *restrict v = a->v;
    const float *restrict g = a->g;
    for (size_t i = first; i < last; i++)
        ew_adamw(&w[i], g[i], &m[i], &v[i], &h);
}

static int cpu_adamw(backend *b, float *w, const float *g, float *m, float *v, size_t n,
                     const adamw_hparams *h)
{
    (void)b;
    adamw_args a = {w, m, v, g, *h};
    cpu_parallel_for(n, PARALLEL_MIN_ELEMS, adamw_range, &a);
    return BK_OK;
}

CPU_HOT static int cpu_sgd(backend *b, float *w, const float *g, size_t n, float lr,
                   float weight_decay)
{
    (void)b;
    for (size_t i = 0; i < n; i++)
        ew_sgd(&w[i], g[i], lr, weight_decay);
    return BK_OK;
}

typedef struct convert_args {
    const void *src;
    void *dst;
} convert_args;

CPU_HOT static void to_bf16_range(void *ctx, size_t first, size_t last)
{
    const convert_args *a = ctx;
    f32_to_bf16((const float *)a->src + first, (bf16_bits *)a->dst + first, last - first);
}

CPU_HOT static void from_bf16_range(void *ctx, size_t first, size_t last)
{
    const convert_args *a = ctx;
    bf16_to_f32((const bf16_bits *)a->src + first, (float *)a->dst + first, last - first);
}

/* fp32 to fp32 is a copy (none in place). */
static int cpu_convert(backend *b, const float *src, void *dst, storage s, size_t n)
{
    (void)b;
    convert_args a = {src, dst};
    if (s == STORAGE_BF16)
        cpu_parallel_for(n, PARALLEL_MIN_ELEMS, to_bf16_range, &a);
    else if (dst != src)
        memcpy(dst, src, n * sizeof(float));
    return BK_OK;
}

static int cpu_to_f32(backend *b, const void *src, storage s, float *dst, size_t n)
{
    (void)b;
    convert_args a = {src, dst};
    if (s == STORAGE_BF16)
        cpu_parallel_for(n, PARALLEL_MIN_ELEMS, from_bf16_range, &a);
    else if ((const void *)dst != src)
        memcpy(dst, src, n * sizeof(float));
    return BK_OK;
}

static int cpu_timer_create(backend *b, bk_timer **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) {
        snprintf(b->error, sizeof b->error, "out of host memory for a timer");
        return BK_OOM;
    }
    return BK_OK;
}

static void cpu_timer_destroy(backend *b, bk_timer *t)
{
    (void)b;
    free(t);
}

static int cpu_timer_record(backend *b, bk_timer *t)
{
    (void)b;
    t->ns = trace_now_ns();
    return BK_OK;
}

static int cpu_timer_elapsed(backend *b, bk_timer *start, bk_timer *end, double *ms)
{
    (void)b;
    *ms = (double)(end->ns - start->ns) / 1e6;
    return BK_OK;
}

static int cpu_sync(backend *b)
{
    (void)b;
    return BK_OK;
}

static int cpu_use_dtype(backend *b, dtype dt, char *why, size_t why_len);

/* Every op, the fused attention's among them; which table a backend runs
 * is cpu_attention_choice.c's. */
const backend_ops cpu_ops_all = {
    .use_dtype = cpu_use_dtype,
    .destroy = cpu_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .alloc_transient = cpu_alloc_transient,
    .free_transient = cpu_free_transient,
    .upload = cpu_copy,
    .download = cpu_copy,
    .zero = cpu_zero,
    .held_reset = cpu_held_reset,
    .held_peak = cpu_held_peak,
    .gemm = cpu_gemm,
    .bias_gelu_forward = cpu_bias_gelu_forward,
    .gelu_forward = cpu_gelu_forward,
    .gelu_backward = cpu_gelu_backward,
    .bias_grad_accumulate = cpu_bias_grad,
    .softmax_xent = cpu_softmax_xent,
    .layernorm_forward = cpu_layernorm_forward,
    .layernorm_backward = cpu_layernorm_backward,
    .causal_softmax_forward = cpu_causal_softmax_forward,
    .causal_softmax_backward = cpu_causal_softmax_backward,
    .embedding_forward = cpu_embedding_forward,
    .embedding_backward = cpu_embedding_backward,
    .add = cpu_add,
    .permute_heads = cpu_permute_heads,
    .attention_forward = cpu_attention_forward,
    .attention_backward = cpu_attention_backward,
    .rmsnorm_forward = cpu_rmsnorm_forward,
    .rmsnorm_backward = cpu_rmsnorm_backward,
    .swiglu_forward = cpu_swiglu_forward,
    .swiglu_backward = cpu_swiglu_backward,
    .rotary_forward = cpu_rotary_forward,
    .rotary_backward = cpu_rotary_backward,
    .repeat_kv_forward = cpu_repeat_kv_forward,
    .repeat_kv_backward = cpu_repeat_kv_backward,
    .adamw = cpu_adamw,
    .sgd = cpu_sgd,
    .convert = cpu_convert,
    .to_f32 = cpu_to_f32,
    .sum_squares = cpu_sum_squares,
    .axpy = cpu_axpy,
    .round_bf16 = cpu_round_bf16,
    .timer_create = cpu_timer_create,
    .timer_destroy = cpu_timer_destroy,
    .timer_record = cpu_timer_record,
    .timer_elapsed_ms = cpu_timer_elapsed,
    .sync = cpu_sync,
    /* No graphs, no external profiler bracket on the CPU. */
};

static void cpu_device_name(char *out, size_t len)
{
    char model[96] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        }
        fclose(f);
    }
    snprintf(out, len, "%s (%ld cores)", model, sysconf(_SC_NPROCESSORS_ONLN));
}

size_t cpu_host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

/* Switches b to dt (backend_ops.use_dtype): its ops table (bf16 runs
 * attention unfused) and its library's words, which name the bf16 GEMM's
 * kernels beside the fp32 library's. */
static int cpu_use_dtype(backend *b, dtype dt, char *why, size_t why_len)
{
    if (dt != DTYPE_FP32 && dt != DTYPE_BF16) {
        snprintf(why, why_len,
                 "the cpu backend computes in fp32 or bf16; --dtype %s needs --backend cuda",
                 dtype_name(dt));
        return BK_UNSUPPORTED;
    }
    const backend_ops *ops = cpu_ops_for(dt, why, why_len);
    if (!ops)
        return BK_ERROR;
    b->ops = ops;
    b->dtype = dt;
    b->compute_storage = dtype_storage(dt);
    /* After the fp32 library's words, so that its core stays the word
     * after "core " (the CSV's blas_core). */
    if (dt == DTYPE_BF16)
        snprintf(b->library, sizeof b->library, "%s (%s)", cpu_blas_description(),
                 cpu_gemm_bf16_description());
    else
        snprintf(b->library, sizeof b->library, "%s", cpu_blas_description());
    return BK_OK;
}

int cpu_backend_create(dtype dt, backend **out, char *why, size_t why_len)
{
    *out = NULL;
    backend probe = {0};
    int rc = cpu_use_dtype(&probe, dt, why, why_len);
    if (rc)
        return rc;
    if (cpu_parallel_threads_check(why, why_len) || cpu_gemm_choice_check(why, why_len))
        return BK_ERROR;
    backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(why, why_len, "out of host memory");
        return BK_OOM;
    }
    b->name = "cpu";
    b->caps = BK_CAP_DISPATCH_IS_DEVICE_WORK | BK_CAP_SHARES_HOST_MEMORY;
    b->peak_gemm_n = 2048;
    b->head_chunk_bytes = 0; /* the head's default: sized for a core's L2 (gpt_head.c) */
    cpu_device_name(b->device, sizeof b->device);
    for (char *c = b->device; *c; c++)
        if (*c == ',')
            *c = ' ';
    cpu_blas_threads_from_env();
    cpu_use_dtype(b, dt, why, why_len); /* as the probe above: it cannot fail now */
    b->mem_total = cpu_host_memory_bytes();
    *out = b;
    return BK_OK;
}
