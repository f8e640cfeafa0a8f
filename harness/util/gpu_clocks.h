/* The GPU's SM clock and its clock-event (throttle) reasons, from NVML,
 * loaded at run time (dlopen of libnvidia-ml.so.1): nothing links against
 * it, and where there is no driver the sampler says "not measured" and the
 * columns stay empty. nvbench discards samples taken while the clocks were
 * held down; llm.c prints them beside its MFU. */
#ifndef ACCUBENCH_GPU_CLOCKS_H
#define ACCUBENCH_GPU_CLOCKS_H

#include <stddef.h>
#include <stdint.h>

/* NVML's clocks-event reason bits (nvml.h, nvmlClocksEventReason*). */
#define GPU_EVENT_IDLE 0x1ull
#define GPU_EVENT_APP_CLOCKS 0x2ull
#define GPU_EVENT_SW_POWER_CAP 0x4ull
#define GPU_EVENT_HW_SLOWDOWN 0x8ull
#define GPU_EVENT_SYNC_BOOST 0x10ull
#define GPU_EVENT_SW_THERMAL 0x20ull
#define GPU_EVENT_HW_THERMAL 0x40ull
#define GPU_EVENT_HW_POWER_BRAKE 0x80ull
#define GPU_EVENT_DISPLAY_CLOCKS 0x100ull

/* The reasons that slow the work down (power, heat, the hardware's brake):
 * a config timed under one of them is disturbed. Idle, the application
 * clocks setting, sync boost and the display clock are not. */
#define GPU_EVENTS_DISTURBING                                                  \
    (GPU_EVENT_SW_POWER_CAP | GPU_EVENT_HW_SLOWDOWN | GPU_EVENT_SW_THERMAL |    \
     GPU_EVENT_HW_THERMAL | GPU_EVENT_HW_POWER_BRAKE)

/* "sw_power_cap hw_thermal" (space-separated, in bit order), "none" for 0;
 * unknown bits as "0x...". */
void gpu_events_text(uint64_t mask, char *out, size_t len);

typedef struct gpu_clocks gpu_clocks;

typedef struct gpu_clock_sample {
    int ok;          /* 0: not measured */
    unsigned sm_mhz; /* the SM clock now */
    uint64_t events; /* the clock-event reasons now */
} gpu_clock_sample;

/* Opens NVML for the device with this PCI bus id ("0000:3B:00.0", what
 * CUDA reports). NULL with the reason in `why` where there is no NVML
 * library, no driver, or no such device; an empty bus id is "not a GPU". */
gpu_clocks *gpu_clocks_open(const char *pci_bus_id, char *why, size_t why_len);
void gpu_clocks_close(gpu_clocks *g);

/* One reading; s->ok = 0 when g is NULL or NVML failed. */
void gpu_clocks_sample(gpu_clocks *g, gpu_clock_sample *s);

#endif
