/* The CUPTI collector's reading of API call names (kernels/cuda/cupti_names.h):
 * the version suffix cut, and which calls launch device work. Then, where
 * the toolkit is installed, every call its CUPTI headers name: each one
 * whose name holds "Launch" launches device work, but for the host
 * functions; no other does. CUDA 13's compiler launches every <<<...>>>
 * through __cudaLaunchKernel, which an earlier reading took for a plain
 * runtime call: the backend's own kernels then had no launch records, and
 * a step's launch count and launch latency were cuBLAS's alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cupti_names.h"

static int trimmed_is(const char *name, const char *want)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", name);
    cupti_name_trim(buf);
    return strcmp(buf, want) == 0;
}

static void test_trim(void)
{
    CHECK(trimmed_is("cudaLaunchKernel_v7000", "cudaLaunchKernel"));
    CHECK(trimmed_is("__cudaLaunchKernel_v13000", "__cudaLaunchKernel"));
    CHECK(trimmed_is("__cudaLaunchKernel_ptsz_v13000", "__cudaLaunchKernel_ptsz"));
    CHECK(trimmed_is("cudaStreamGetCaptureInfo_v2_v11030", "cudaStreamGetCaptureInfo_v2"));
    CHECK(trimmed_is("cuLaunchKernel", "cuLaunchKernel"));
    CHECK(trimmed_is("cuMemcpy_v2", "cuMemcpy"));
    CHECK(trimmed_is("cudaFoo_vx", "cudaFoo_vx"));
    CHECK(trimmed_is("cudaFoo_v", "cudaFoo_v"));
}

static void test_launches(void)
{
    /* what nvcc 13 makes of <<<...>>> (crt/host_runtime.h), trimmed or not */
    CHECK(cupti_is_launch("__cudaLaunchKernel"));
    CHECK(cupti_is_launch("__cudaLaunchKernel_ptsz"));
    CHECK(cupti_is_launch("__cudaLaunchKernel_v13000"));
    CHECK(cupti_is_launch("cudaLaunchKernel"));
    CHECK(cupti_is_launch("cudaLaunchKernelExC"));
    CHECK(cupti_is_launch("cuLaunchKernel"));
    CHECK(cupti_is_launch("cuLaunchKernelEx_ptsz")); /* cuBLASLt's */
    CHECK(cupti_is_launch("cudaGraphLaunch"));
    CHECK(cupti_is_launch("cuGraphLaunch"));
    CHECK(!cupti_is_launch("cudaLaunchHostFunc"));
    CHECK(!cupti_is_launch("cuLaunchHostFunc_ptsz"));
    CHECK(!cupti_is_launch("cudaMemsetAsync"));
    CHECK(!cupti_is_launch("cudaEventRecord"));
    CHECK(!cupti_is_launch("cudaStreamSynchronize"));
    CHECK(!cupti_is_launch("__cudaPushCallConfiguration"));
}

/* Every CBID name of one of the toolkit's CUPTI headers classified as its
 * name says; the count of names that hold "Launch", or -1 where the header
 * is not. */
static int scan_header(const char *path, const char *prefix, int *underscored)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int launches = 0;
    size_t plen = strlen(prefix);
    while (fgets(line, sizeof line, f)) {
        char *at = strstr(line, prefix);
        if (!at)
            continue;
        char name[256];
        size_t n = strcspn(at + plen, " \t=,\n");
        if (n == 0 || n >= sizeof name)
            continue;
        memcpy(name, at + plen, n);
        name[n] = '\0';
        if (strcmp(name, "INVALID") == 0 || strcmp(name, "SIZE") == 0 ||
            strcmp(name, "FORCE_INT") == 0)
            continue;
        cupti_name_trim(name);
        int want = strstr(name, "Launch") != NULL && strstr(name, "HostFunc") == NULL;
        if (cupti_is_launch(name) != want) {
            fprintf(stderr, "%s: %s read as %s\n", path, name,
                    want ? "no launch" : "a launch");
            CHECK(cupti_is_launch(name) == want);
        }
        launches += want;
        *underscored += want && name[0] == '_';
    }
    fclose(f);
    return launches;
}

static void test_toolkit_names(void)
{
    const char *home = getenv("CUDA_HOME");
    char runtime[512], driver[512];
    snprintf(runtime, sizeof runtime, "%s/include/cupti_runtime_cbid.h",
             home && *home ? home : "/usr/local/cuda");
    snprintf(driver, sizeof driver, "%s/include/cupti_driver_cbid.h",
             home && *home ? home : "/usr/local/cuda");
    int underscored = 0;
    int r = scan_header(runtime, "CUPTI_RUNTIME_TRACE_CBID_", &underscored);
    int d = scan_header(driver, "CUPTI_DRIVER_TRACE_CBID_", &underscored);
    if (r < 0 && d < 0) {
        printf("test_cupti_names: no CUPTI headers under %s: the toolkit's names skipped\n",
               home && *home ? home : "/usr/local/cuda");
        return;
    }
    CHECK(r > 0 || r < 0);
    CHECK(d > 0 || d < 0);
    printf("test_cupti_names: %d runtime and %d driver launch calls, %d of them "
           "__cudaLaunchKernel's\n", r, d, underscored);
}

int main(void)
{
    test_trim();
    test_launches();
    test_toolkit_names();
    return check_finish("test_cupti_names");
}
