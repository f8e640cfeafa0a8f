#include "cpu_openblas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
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

static cpu_openblas blas;
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

const cpu_openblas *cpu_openblas_get(void)
{
    pthread_once(&blas_once, load);
    return &blas;
}
