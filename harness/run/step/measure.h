/* The timed pass: whole optimizer steps back to back on the device
 * timeline, warm-up first, until the noise is low enough or the budget is
 * spent. */
#ifndef ACCUBENCH_MEASURE_H
#define ACCUBENCH_MEASURE_H

#include "result_row.h"
#include "stats.h"
#include "step.h"

typedef struct measure_options {
    int warmup;
    int steps;        /* fixed count; 0 = adaptive */
    int min_samples, max_samples;
    double budget_s;
    double max_noise_pct;
    const volatile int *stop; /* set asynchronously (SIGINT): stop soon */
    double *keep;             /* non-NULL: each timed step's ms, in order (room for
                               * `steps`, or max_samples when adaptive) */
    /* Non-NULL, with a communicator: each timed step's communication, in
     * the same order and room as keep (wait: NAN where the engine does not
     * tell it), so that a caller pooling steps takes the medians of the
     * same steps as the step time's, never a mean that one stalled step
     * dominates. */
    double *keep_comm_ms, *keep_comm_exposed_ms, *keep_comm_wait_ms;
    double *keep_host_ms; /* non-NULL: each timed step's host enqueue time, the same way */
} measure_options;

/* What ended the timed loop: the row's note names it. */
typedef enum measure_stop {
    MEASURE_STOP_STEPS = 0,    /* --steps: the fixed count was timed */
    MEASURE_STOP_NOISE,        /* the noise target was met */
    MEASURE_STOP_SAMPLE_CAP,   /* max-samples were taken */
    MEASURE_STOP_BUDGET,       /* --budget-s ran out */
    MEASURE_STOP_INTERRUPTED,  /* the stop flag was set */
    MEASURE_STOP_PEER,         /* data parallel: another rank's condition */
    MEASURE_STOP_DECIDED,      /* interleaved rounds: the comparison was decided */
} measure_stop;

typedef struct step_timing {
    timing_stats step;            /* device time per step, ms */
    double host_enqueue_ms;       /* median host time to issue one step */
    double dispatches_per_step;
    double pass_ms;               /* median single forward+backward, ms */
    size_t timed;                 /* steps timed (the samples in `step`) */
    int noise_met;                /* adaptive: the noise target holds for
                                   * exactly the samples in `step` */
    measure_stop stopped_by;
    /* Data parallel (the runner has a communicator), per timed step: */
    double allreduce_calls, allreduce_bytes;
    double rs_calls, rs_bytes, ag_calls, ag_bytes; /* sharded: reduce-scatters, all-gathers */
    double comm_ms, comm_exposed_ms; /* comm.h's busy and exposed times */
    double comm_wait_ms;             /* its arrival wait; NAN: not told */
} step_timing;

/* Runs the timed pass; BK_* status (reason in the backend's error). With a
 * communicator every rank takes the same decisions (the warm-up's end, the
 * adaptive stop), so that they step together. */
int measure_steps(step_runner *s, const measure_options *o, step_timing *out);

/* Times `reps` single micro-batch passes, one by one; median in ms. */
int measure_single_pass(step_runner *s, int reps, double *median_ms);

/* The peak GEMM is timed after the device sat idle (clocks down, caches
 * cold): one warm-up GEMM is a few ms, too short to bring the clocks up.
 * It is warmed up for a tenth of a config's budget first, between these. */
#define PEAK_GEMM_WARMUP_MS 200
#define PEAK_GEMM_MIN_WARMUP_MS 50

/* Every measuring GEMM (the start-up peak's and the probes beside each
 * config: config_watch.h) is sized to take a hundredth of a config's
 * budget at the rate found, between these, so that a config's two probes
 * (twelve GEMMs) take about a tenth of its time, however short its
 * budget; from PEAK_GEMM_MIN_N up to the backend's peak_gemm_n. */
#define PEAK_GEMM_MS 20.0
#define PEAK_GEMM_MIN_MS 1.0
#define PEAK_GEMM_MIN_N 512

/* The time one measuring GEMM is sized for, and the start-up warm-up, for
 * a config budget of budget_s seconds (see above). */
double measure_gemm_ms(double budget_s);
int measure_warmup_ms(double budget_s);

/* Times a square GEMM in the backend's compute storage, after the warm-up
 * at the smallest size, grown to about measure_gemm_ms(budget_s) a GEMM
 * (at most peak_gemm_n); the median of several, in TFLOP/s. Outside
 * b->mem_cap: the cap budgets the model, and a cap under the three
 * matrices must not leave the run without its peak (and MFU). */
int measure_peak_gemm(backend *b, double budget_s, double *tflops, int *n_used);

/* The square GEMM size, in steps of 64, that takes about `ms` at `tflops`:
 * at least min_n, at most the backend's peak_gemm_n. */
int measure_gemm_size(const backend *b, double tflops, double ms, int min_n);

#endif
