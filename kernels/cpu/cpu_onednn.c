#include "cpu_onednn.h"

#include <pthread.h>
#include <stdio.h>

#ifdef ACCUBENCH_HAVE_ONEDNN
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

/* dnnl_gemm_bf16bf16f32: exported by libdnnl (2.x) beside dnnl_sgemm but
 * not declared in its public header, so declared here as the library
 * defines it: row-major like dnnl_sgemm, bf16 A and B as raw bits, fp32 C. */
typedef dnnl_status_t gemm_bf16_fn(char transa, char transb, dnnl_dim_t m, dnnl_dim_t n,
                                   dnnl_dim_t k, float alpha, const unsigned short *a,
                                   dnnl_dim_t lda, const unsigned short *b, dnnl_dim_t ldb,
                                   float beta, float *c, dnnl_dim_t ldc);

/* Why oneDNN's sgemm and not only OpenBLAS's: on the GPT's products (short
 * and wide, k of 128 to 2048) its AVX-512 kernels ran 15-45% faster than
 * OpenBLAS 0.3.21's SkylakeX kernels on one core, and a gpt-cpu or model S
 * step 7-12% faster (docs/cpu-backend.md). */
static struct {
    __typeof__(dnnl_sgemm) *sgemm; /* NULL until loaded: `error` says why */
    __typeof__(dnnl_get_effective_cpu_isa) *isa;
    /* Its bf16 GEMM, or NULL where the library has none or its kernels
     * refuse this host (oneDNN 2.6 answers "unimplemented" below
     * AVX-512). */
    gemm_bf16_fn *gemm_bf16;
    const dnnl_version_t *version;
    /* oneDNN's OpenMP (libgomp's), or NULL under a sequential runtime. */
    void (*omp_set_num_threads)(int);
    char error[256];
} dnnl;
static pthread_once_t dnnl_once = PTHREAD_ONCE_INIT;

/* Sets the calling thread's OpenMP team to one, once: see cpu_onednn_sgemm. */
static void hold_one_thread(void)
{
    static _Thread_local int held;
    if (!held && dnnl.omp_set_num_threads) {
        dnnl.omp_set_num_threads(1);
        held = 1;
    }
}

/* The bf16 GEMM at p where it computes here: a 2 x 2 product, 1 2 / 3 4
 * times the identity, must come back exact. */
static gemm_bf16_fn *gemm_bf16_works(void *p)
{
    union { void *p; gemm_bf16_fn *f; } fn = {p};
    if (!fn.p)
        return NULL;
    hold_one_thread();
    const unsigned short a[4] = {0x3f80, 0x4040, 0x4000, 0x4080}, eye[4] = {0x3f80, 0, 0, 0x3f80};
    float c[4] = {0};
    if (fn.f('N', 'N', 2, 2, 2, 1.0f, a, 2, eye, 2, 0.0f, c, 2) != dnnl_success)
        return NULL;
    return c[0] == 1.0f && c[1] == 3.0f && c[2] == 2.0f && c[3] == 4.0f ? fn.f : NULL;
}

static void load(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* With oneDNN loaded, LeakSanitizer's thread tracer crashed ("Tracer
     * caught signal 11") at the exit of 13 of 32 sanitized e2e tests and
     * one unit test in one make test; the sanitized build checks
     * OpenBLAS's path. */
    snprintf(dnnl.error, sizeof dnnl.error, "oneDNN is not loaded under AddressSanitizer");
    return;
#endif
    /* The soname of the header's major version: the prototypes above are
     * the ones the loaded library was built with. */
    char name[32];
    snprintf(name, sizeof name, "libdnnl.so.%d", DNNL_VERSION_MAJOR);
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(dnnl.error, sizeof dnnl.error, "oneDNN could not be loaded: %s", dlerror());
        return;
    }
    /* Through unions: ISO C has no cast from void * to a function pointer. */
    union { void *p; __typeof__(dnnl_sgemm) *f; } sgemm = {dlsym(h, "dnnl_sgemm")};
    union { void *p; __typeof__(dnnl_version) *f; } version = {dlsym(h, "dnnl_version")};
    union { void *p; __typeof__(dnnl_get_effective_cpu_isa) *f; } isa = {
        dlsym(h, "dnnl_get_effective_cpu_isa")};
    /* dlsym on the handle searches its dependencies too: libgomp. */
    union { void *p; void (*f)(int); } omp = {dlsym(h, "omp_set_num_threads")};
    const char *lacks = !sgemm.p ? "dnnl_sgemm" : !version.p ? "dnnl_version"
                        : !isa.p ? "dnnl_get_effective_cpu_isa" : NULL;
    unsigned runtime = version.p ? version.f()->cpu_runtime : 0;
    if (!lacks && runtime == DNNL_RUNTIME_OMP && !omp.p)
        lacks = "omp_set_num_threads (its OpenMP runtime)";
    if (lacks) {
        snprintf(dnnl.error, sizeof dnnl.error, "oneDNN (%s) lacks %s", name, lacks);
        dlclose(h);
        return;
    }
    /* A threadpool or TBB runtime would run each block's product on
     * threads of its own, against the pool's. */
    if (runtime != DNNL_RUNTIME_OMP && runtime != DNNL_RUNTIME_SEQ) {
        snprintf(dnnl.error, sizeof dnnl.error, "oneDNN's CPU runtime (%u) is neither OpenMP "
                 "nor sequential: its threads cannot be held to one a call", runtime);
        dlclose(h);
        return;
    }
    dnnl.version = version.f();
    dnnl.isa = isa.f;
    dnnl.omp_set_num_threads = runtime == DNNL_RUNTIME_OMP ? omp.f : NULL;
    dnnl.gemm_bf16 = gemm_bf16_works(dlsym(h, "dnnl_gemm_bf16bf16f32"));
    dnnl.sgemm = sgemm.f; /* last: non-NULL means every entry is set */
}

const char *cpu_onednn_load(void)
{
    pthread_once(&dnnl_once, load);
    return dnnl.sgemm ? NULL : dnnl.error;
}

int cpu_onednn_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                     const float *a, int lda, const float *b, int ldb, float beta, float *c,
                     int ldc)
{
    /* OpenMP's thread count is each thread's own: set once on every
     * thread that calls, the caller's and the pool's, so that oneDNN never
     * starts a team of its own inside a block. */
    /* k = 0 is C = beta C, which oneDNN 2.6 skips (C comes back as it
     * was): declined, so that the caller's portable GEMM scales it. */
    if (k == 0)
        return -1;
    hold_one_thread();
    /* oneDNN is row-major: column-major C = op(A) op(B) is row-major
     * C^T = op(B)^T op(A)^T, the same memory with the operands swapped. */
    dnnl_status_t rc = dnnl.sgemm(trans_b ? 'T' : 'N', trans_a ? 'T' : 'N', n, m, k, alpha, b,
                                  ldb, a, lda, beta, c, ldc);
    return rc == dnnl_success ? 0 : -1;
}

int cpu_onednn_has_gemm_bf16(void)
{
    return !cpu_onednn_load() && dnnl.gemm_bf16;
}

int cpu_onednn_gemm_bf16(int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const unsigned short *a, int lda, const unsigned short *b, int ldb,
                         float beta, float *c, int ldc)
{
    if (!cpu_onednn_has_gemm_bf16() || k == 0) /* k = 0: as cpu_onednn_sgemm */
        return -1;
    hold_one_thread();
    /* Row-major, as dnnl_sgemm: the operands swapped (cpu_onednn_sgemm). */
    dnnl_status_t rc = dnnl.gemm_bf16(trans_b ? 'T' : 'N', trans_a ? 'T' : 'N', n, m, k, alpha,
                                      b, ldb, a, lda, beta, c, ldc);
    return rc == dnnl_success ? 0 : -1;
}

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
    }
}

void cpu_onednn_describe(char *text, size_t len)
{
    if (cpu_onednn_load()) {
        snprintf(text, len, "%s", dnnl.error);
        return;
    }
    snprintf(text, len, "oneDNN %d.%d.%d core %s", dnnl.version->major, dnnl.version->minor,
             dnnl.version->patch, isa_name(dnnl.isa()));
}
#else
const char *cpu_onednn_load(void)
{
    return "built without oneDNN (its headers were not found)";
}

int cpu_onednn_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                     const float *a, int lda, const float *b, int ldb, float beta, float *c,
                     int ldc)
{
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
    return -1;
}

void cpu_onednn_describe(char *text, size_t len)
{
    snprintf(text, len, "%s", cpu_onednn_load());
}

int cpu_onednn_has_gemm_bf16(void)
{
    return 0;
}

int cpu_onednn_gemm_bf16(int trans_a, int trans_b, int m, int n, int k, float alpha,
                         const unsigned short *a, int lda, const unsigned short *b, int ldb,
                         float beta, float *c, int ldc)
{
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
    return -1;
}
#endif
