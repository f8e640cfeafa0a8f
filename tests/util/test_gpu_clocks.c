/* The NVML sampler (gpu_clocks.h): the reasons' names, and "not measured"
 * said cleanly where there is no GPU or no driver. */
#include <string.h>

#include "check.h"
#include "gpu_clocks.h"

static void test_names(void)
{
    char t[128];
    gpu_events_text(0, t, sizeof t);
    CHECK(!strcmp(t, "none"));
    gpu_events_text(GPU_EVENT_SW_POWER_CAP | GPU_EVENT_HW_THERMAL, t, sizeof t);
    CHECK(!strcmp(t, "sw_power_cap hw_thermal"));
    gpu_events_text(GPU_EVENT_IDLE | (1ull << 40), t, sizeof t);
    CHECK(!strcmp(t, "idle 0x10000000000"));
    /* idle and sync boost slow nothing down; a power cap does */
    CHECK(!(GPU_EVENT_IDLE & GPU_EVENTS_DISTURBING));
    CHECK(!(GPU_EVENT_SYNC_BOOST & GPU_EVENTS_DISTURBING));
    CHECK(GPU_EVENT_SW_POWER_CAP & GPU_EVENTS_DISTURBING);
    gpu_events_text(~0ull, t, 8); /* cut to fit, still a string */
    CHECK(strlen(t) < 8);
}

static void test_absent(void)
{
    char why[160] = "";
    CHECK(gpu_clocks_open("", why, sizeof why) == NULL);
    CHECK(!strncmp(why, "not measured", 12));
    /* a bus id no machine has: no NVML here, or NVML without that device */
    gpu_clocks *g = gpu_clocks_open("ffff:ff:1f.7", why, sizeof why);
    CHECK(g == NULL && !strncmp(why, "not measured", 12));
    gpu_clock_sample s = {.ok = 1};
    gpu_clocks_sample(NULL, &s);
    CHECK(s.ok == 0);
    gpu_clocks_close(NULL);
}

int main(void)
{
    test_names();
    test_absent();
    return check_finish("test_gpu_clocks");
}
