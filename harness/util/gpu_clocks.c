#include "gpu_clocks.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gpu_events_text(uint64_t mask, char *out, size_t len)
{
    static const char *const names[] = {"idle",        "app_clocks", "sw_power_cap",
                                        "hw_slowdown", "sync_boost", "sw_thermal",
                                        "hw_thermal",  "hw_power_brake", "display_clocks"};
    enum { N = sizeof names / sizeof names[0] };
    size_t used = 0;
    out[0] = '\0';
    if (!mask) {
        snprintf(out, len, "none");
        return;
    }
    for (int i = 0; i < N && used < len; i++)
        if (mask & (1ull << i))
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? " " : "", names[i]);
    uint64_t unknown = mask & ~((1ull << N) - 1);
    if (unknown && used < len)
        snprintf(out + used, len - used, "%s0x%llx", used ? " " : "", (unsigned long long)unknown);
}

/* NVML's C interface, the few calls used: every one returns 0 on success. */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(const char *bus_id, void **device);
typedef int (*nvml_clock_fn)(void *device, int type, unsigned *mhz);
typedef int (*nvml_events_fn)(void *device, unsigned long long *reasons);
#define NVML_CLOCK_SM 1

struct gpu_clocks {
    void *lib, *device;
    nvml_clock_fn clock;
    nvml_events_fn events;
    nvml_init_fn shutdown;
};

gpu_clocks *gpu_clocks_open(const char *bus_id, char *why, size_t why_len)
{
    if (!bus_id || !*bus_id) {
        snprintf(why, why_len, "not measured: no GPU");
        return NULL;
    }
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, why_len, "not measured: no NVML (libnvidia-ml.so.1 not found)");
        return NULL;
    }
    nvml_init_fn init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
    nvml_handle_fn handle = (nvml_handle_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    gpu_clocks g = {.lib = lib, .shutdown = (nvml_init_fn)dlsym(lib, "nvmlShutdown"),
                    .clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo")};
    /* the newer name first; drivers before 535 have only the older */
    g.events = (nvml_events_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!g.events)
        g.events = (nvml_events_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    int rc = -1, inited = 0;
    if (!init || !handle || !g.clock || !g.events || !g.shutdown)
        snprintf(why, why_len, "not measured: NVML lacks the calls needed");
    else if ((rc = init()) != 0)
        snprintf(why, why_len, "not measured: nvmlInit failed (%d)", rc);
    else if ((inited = 1, rc = handle(bus_id, &g.device)) != 0)
        snprintf(why, why_len, "not measured: NVML has no device %s (%d)", bus_id, rc);
    gpu_clocks *out = rc == 0 ? malloc(sizeof *out) : NULL;
    if (!out) {
        if (rc == 0)
            snprintf(why, why_len, "not measured: out of memory");
        if (inited)
            g.shutdown();
        dlclose(lib);
        return NULL;
    }
    *out = g;
    return out;
}

void gpu_clocks_close(gpu_clocks *g)
{
    if (!g)
        return;
    g->shutdown();
    dlclose(g->lib);
    free(g);
}

void gpu_clocks_sample(gpu_clocks *g, gpu_clock_sample *s)
{
    memset(s, 0, sizeof *s);
    unsigned long long reasons = 0;
    if (g && g->clock(g->device, NVML_CLOCK_SM, &s->sm_mhz) == 0 &&
        g->events(g->device, &reasons) == 0) {
        s->events = reasons;
        s->ok = 1;
    }
}
