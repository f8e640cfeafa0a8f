#include "cpu_openblas.h"

#include <pthread.h>
#include <stdio.h>

#ifdef ACCUBENCH_HAVE_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* CPUs on which OpenBLAS's own choice of kernels is slower than another of
 * its cores, measured, and the core to use there instead (unless the user
 * set OPENBLAS_CORETYPE). AMD family 19h: on a Zen 4, OpenBLAS 0.3.21 picks
 * its Intel AVX-512 (Cooperlake) kernels; its Zen (AVX2) kernels ran a
 * 2048^3 GEMM about 5% faster and model S's step 5% (256x1) to 30% (8x8)
 * faster, on one core. (On a Zen 3 it picks Zen already.) */
static const struct core_override {
    const char *vendor;
    unsigned family;
    const char *core;
} CORE_OVERRIDES[] = {
    {"AuthenticAMD", 0x19, "ZEN"},
};

/* An Intel CPU with AVX-512 (F, DQ, BW, VL) gets OpenBLAS's SkylakeX
 * kernels. OpenBLAS 0.3.21 picks by family and model, and a model it does
 * not know (a VM's "Intel(R) Xeon(R) Processor" with AVX-512, seen here)
 * falls back to its generic Prescott kernels: on that 2-core VM the
 * 2048^3 peak GEMM ran at 0.031 TFLOP/s against 0.172 with SkylakeX, and
 * model S's A/B/C steps 2.2x (8x8) to 3.4x (64x1) slower, for the same
 * gradients. The Intel cores it does know with AVX-512 (SkylakeX,
 * Cooperlake, Sapphire Rapids) run the same fp32 GEMM kernels. */
static int intel_avx512(const char *vendor)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (strcmp(vendor, "GenuineIntel") || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    const unsigned need = 1u << 16 | 1u << 17 | 1u << 30 | 1u << 31; /* F, DQ, BW, VL */
    return (b & need) == need;
#else
    (void)vendor;
    return 0;
#endif
}

static struct {
    /* NULL until loaded: `error` says why. */
    __typeof__(cblas_sgemm) *sgemm;
    char *(*corename)(void);
    char *(*config)(void);
    int (*num_threads)(void);
    void (*set_num_threads)(int);
    char error[256];
} blas;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

/* The CPU's vendor string and family (base + extended), or 0. */
static unsigned cpu_family(char vendor[13])
{
    memset(vendor, 0, 13);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    unsigned family = (a >> 8) & 0xf;
    return family == 0xf ? family + ((a >> 20) & 0xff) : family;
#else
    return 0;
#endif
}

static void choose_core(void)
{
    char vendor[13];
    unsigned family = cpu_family(vendor);
    for (size_t i = 0; i < sizeof CORE_OVERRIDES / sizeof *CORE_OVERRIDES; i++)
        if (!strcmp(vendor, CORE_OVERRIDES[i].vendor) && family == CORE_OVERRIDES[i].family)
            setenv("OPENBLAS_CORETYPE", CORE_OVERRIDES[i].core, 0); /* the user's wins */
    if (intel_avx512(vendor))
        setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 0);
}

static void load(void)
{
    choose_core();
    static const char *const NAMES[] = {"libopenblas.so.0", "libopenblas.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES && !h; i++)
        h = dlopen(NAMES[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(blas.error, sizeof blas.error, "OpenBLAS could not be loaded: %s", dlerror());
        return;
    }
    /* Through a union: ISO C has no cast from void * to a function pointer. */
    union { void *p; __typeof__(cblas_sgemm) *f; } sgemm = {dlsym(h, "cblas_sgemm")};
    union { void *p; char *(*f)(void); } core = {dlsym(h, "openblas_get_corename")},
                                         config = {dlsym(h, "openblas_get_config")};
    union { void *p; int (*f)(void); } threads = {dlsym(h, "openblas_get_num_threads")};
    union { void *p; void (*f)(int); } set_threads = {dlsym(h, "openblas_set_num_threads")};
    if (!sgemm.p || !core.p || !config.p || !threads.p || !set_threads.p) {
        snprintf(blas.error, sizeof blas.error, "OpenBLAS lacks %s",
                 !sgemm.p ? "cblas_sgemm" : !core.p ? "openblas_get_corename"
                 : !config.p ? "openblas_get_config"
                 : !threads.p ? "openblas_get_num_threads" : "openblas_set_num_threads");
        dlclose(h);
        return;
    }
    blas.corename = core.f;
    blas.config = config.f;
    blas.num_threads = threads.f;
    blas.set_num_threads = set_threads.f;
    blas.sgemm = sgemm.f; /* last: non-NULL means every entry is set */
}

const char *cpu_openblas_load(void)
{
    pthread_once(&blas_once, load);
    return blas.sgemm ? NULL : blas.error;
}

/* OpenBLAS meets beta = 0 with a pass of its own that zeroes C with plain
 * stores (each line read for ownership first) before the kernel adds into
 * it. memset zeroes at the write bandwidth, and just before the kernel, so
 * C is still in cache when it is read: the same sums (0 + x is x) for less
 * memory traffic. */
static void zero_for_beta0(int m, int n, float *beta, float *c, int ldc)
{
    if (*beta != 0.0f || m <= 0)
        return;
    if (ldc == m)
        memset(c, 0, (size_t)m * n * sizeof *c);
    else
        for (int j = 0; j < n; j++)
            memset(c + (size_t)j * ldc, 0, (size_t)m * sizeof *c);
    *beta = 1.0f;
}

void cpu_openblas_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta,
                        float *c, int ldc)
{
    zero_for_beta0(m, n, &beta, c, ldc);
    blas.sgemm(CblasColMajor, trans_a ? CblasTrans : CblasNoTrans,
               trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c,
               ldc);
}

int cpu_openblas_threads(void)
{
    return blas.num_threads();
}

void cpu_openblas_set_threads(int threads)
{
    blas.set_num_threads(threads);
}

void cpu_openblas_describe(char *text, size_t len)
{
    if (cpu_openblas_load()) {
        snprintf(text, len, "%s", blas.error);
        return;
    }
    /* openblas_get_config() reads e.g. "OpenBLAS 0.3.21 NO_LAPACKE ...". */
    char name[32] = "OpenBLAS", version[32] = "";
    sscanf(blas.config(), "%31s %31s", name, version);
    snprintf(text, len, "%s %s core %s threads %d", name, version, blas.corename(),
             blas.num_threads());
}
#else
const char *cpu_openblas_load(void)
{
    return "built without OpenBLAS (its headers were not found)";
}

void cpu_openblas_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                        const float *a, int lda, const float *b, int ldb, float beta,
                        float *c, int ldc)
{
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
}

int cpu_openblas_threads(void)
{
    return 1;
}

void cpu_openblas_set_threads(int threads)
{
    (void)threads;
}

void cpu_openblas_describe(char *text, size_t len)
{
    snprintf(text, len, "%s", cpu_openblas_load());
}
#endif
