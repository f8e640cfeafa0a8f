/* What the CUPTI collector makes of a runtime or driver API call's name
 * (cuptiGetCallbackName's): the name without CUPTI's version suffix, and
 * whether the call launches device work (a TRACE_LAUNCH, which the trace
 * analysis counts as a launch and times a launch's latency from).
 *
 * Plain C with no CUPTI header, so that the unit tests check it on a
 * machine without a GPU (tests/trace/test_cupti_names.c), against the
 * toolkit's own lists of calls where it is installed. */
#ifndef ACCUBENCH_CUPTI_NAMES_H
#define ACCUBENCH_CUPTI_NAMES_H

#include <string.h>

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the last "_v" and the
 * digits that end the name are cut ("cudaStreamGetCaptureInfo_v2_v11030"
 * keeps its own "_v2"). */
static inline void cupti_name_trim(char *name)
{
    char *cut = NULL;
    for (char *v = strstr(name, "_v"); v; v = strstr(v + 2, "_v"))
        if (v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2))
            cut = v;
    if (cut)
        *cut = '\0';
}

/* Whether the call (its name trimmed or not) launches device work: the
 * kernel launches of the runtime and the driver and the graph launches;
 * a host function launches none. CUDA 13's compiler launches a <<<...>>>
 * through __cudaLaunchKernel (crt/host_runtime.h), a runtime entry of its
 * own (CUPTI's __cudaLaunchKernel_v13000): the leading underscores are the
 * call's, not another kind of call. */
static inline int cupti_is_launch(const char *name)
{
    while (*name == '_')
        name++;
    if (strncmp(name, "cudaLaunchHostFunc", 18) == 0 ||
        strncmp(name, "cuLaunchHostFunc", 16) == 0)
        return 0;
    return strncmp(name, "cudaLaunch", 10) == 0 || strncmp(name, "cuLaunch", 8) == 0 ||
           strncmp(name, "cudaGraphLaunch", 15) == 0 || strncmp(name, "cuGraphLaunch", 13) == 0;
}

#endif
