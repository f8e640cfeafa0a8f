/* What the machine was doing beside each config: a short peak-GEMM probe
 * just before and just after its timed steps, and what else ran on the CPUs
 * (/proc) and the GPU's clocks (NVML) over the same span. The start-up peak
 * says what the device can do once; the probes say what it could do while
 * this config was measured, so a row's MFU is against them and a drop
 * between them is seen. */
#ifndef ACCUBENCH_CONFIG_WATCH_H
#define ACCUBENCH_CONFIG_WATCH_H

#include <stdint.h>

#include "backend.h"
#include "cpu_sample.h"
#include "gpu_clocks.h"

/* Timed GEMMs per probe, after one untimed. The probe's rate is the
 * fastest of them: what the device could still do at that moment (a
 * GEMM can be slowed by something else, never sped up), which on a shared
 * 2-core VM holds to a few % where a median of 3 wandered 16-44% between
 * two probes of an idle machine. Their spread is the probe's own noise. */
#define PROBE_REPS 5

typedef struct config_watch {
    backend *b;
    int n;         /* the probe GEMM's size (n x n x n); 0: no probe */
    float *host;   /* its input values, made once */
    gpu_clocks *gpu; /* NULL: the clocks are not measured */
    char gpu_why[160];
} config_watch;

/* One look at the machine: the probe's rate and the counters. */
typedef struct watch_mark {
    double probe_tflops; /* the fastest rep's; NAN: failed or no probe */
    double probe_noise_pct; /* (median - fastest) / median of the reps' times */
    int cpu_ok;
    cpu_sample cpu;
    gpu_clock_sample gpu;
} watch_mark;

/* Sizes the probe from the start-up peak (NAN: a small default), one GEMM
 * taking measure_gemm_ms(budget_s) at that rate (measure.h), and opens
 * NVML for b's GPU when it has one. Returns 0, or -1 when out of memory
 * (the watch then probes nothing). */
int config_watch_init(config_watch *w, backend *b, double startup_tflops, double budget_s);
void config_watch_free(config_watch *w);

/* Probes and samples now. Outside the memory cap and the row's memory
 * peak: the probe is ours, not the config's. NULL w: an empty mark. */
void config_watch_mark(config_watch *w, watch_mark *m);

#endif
