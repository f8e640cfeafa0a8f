/* What the device did during each step, computed from activity records
 * (trace.h) alone: plain C, no CUDA header, the same for CUPTI records and
 * for the CPU backend's per-dispatch records.
 *
 * Definitions (every number below is per step, then averaged over steps):
 *
 *  step       One TRACE_RANGE named "step", in start-time order. Its window
 *             starts at the range's start and ends at the latest end of any
 *             record that belongs to the step (the range itself, its device
 *             work, the host sync after it): the step's wall-clock.
 *  belongs    A host record (range, launch, runtime call, sync) belongs to
 *             step s when it starts in [start of step s, start of step s+1).
 *             A device record (kernel, memcpy, memset) belongs to the step of
 *             the host call with the same correlation id; without one, to
 *             the step whose range carries the same `step` stamp; without
 *             that, by its own start time like a host record. Records before
 *             the first step belong to none and are ignored.
 *  device work  TRACE_KERNEL, TRACE_MEMCPY and TRACE_MEMSET records: the
 *             copy and memset engines keep the device as busy as a kernel.
 *  busy       The length of the union of the step's device-work intervals
 *             across all streams, clipped to the window: never their sum.
 *             utilisation = busy / wall.
 *  issue time Of a device record: the start of its correlated launch or
 *             runtime call; a record without one (the CPU backend, where a
 *             dispatch runs inside the call that issues it) is its own
 *             launch, issued at its own start.
 *  idle       The window minus busy, as maximal idle intervals [a, b). If
 *             device work starts at b, let L be the earliest issue time among
 *             the records that start at b:
 *               host wait = [a, min(b, L)): the next launch was not issued;
 *               the rest [max(a, L), b), the launch already in flight, is a
 *               gap when shorter than gap_threshold_ns and follows device
 *               work (back-to-back kernels), otherwise other.
 *             Idle with no device work after it (the tail of the window,
 *             the host syncing) is other.
 *             busy + host wait + gap + other = wall, exactly.
 *  launches   TRACE_LAUNCH records of the step, not counting one that lies
 *             inside another launch record of the same thread (a driver
 *             call made by a runtime launch). Without any TRACE_LAUNCH record
 *             in the whole trace (the CPU backend), the dispatch count, i.e.
 *             the device-work record count, stands in for it.
 *  latency    Per launch call with device work: the first correlated device
 *             record's start minus the call's start (graph launches: the
 *             first kernel of the graph); median and p90 interpolated
 *             between closest ranks (stats.h). The CPU backend has none: each
 *             dispatch is its own launch, latency 0 by definition.
 *  phases     Device work is attributed to the forward, backward or
 *             optimizer range that contains its issue time (where the host
 *             was when it launched it, as Nsight Systems projects ranges onto
 *             the GPU); anything else is "other". Where work of several
 *             phases overlaps in time, the overlap is split evenly between
 *             them, so forward + backward + optimizer + other = busy. */
#ifndef ACCUBENCH_TRACE_ANALYSIS_H
#define ACCUBENCH_TRACE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Default threshold between a gap and "other" idle time. */
#define TRACE_GAP_THRESHOLD_NS 10000ull

/* Per-step details kept for the first TRACE_MAX_STEPS steps (all steps count
 * in the means). */
#define TRACE_MAX_STEPS 64

typedef enum trace_phase {
    TRACE_PHASE_FORWARD = 0,
    TRACE_PHASE_BACKWARD = 1,
    TRACE_PHASE_OPTIMIZER = 2,
    TRACE_PHASE_OTHER = 3,
    TRACE_PHASE_COUNT
} trace_phase;

typedef struct trace_step_stats {
    uint64_t start_ns, end_ns; /* the window */
    uint32_t kernels, launches, memcpys, memsets, runtime_calls, syncs;
    uint64_t busy_ns;
    uint64_t idle_host_wait_ns, idle_gap_ns, idle_other_ns;
    double phase_ns[TRACE_PHASE_COUNT]; /* split of busy_ns */
} trace_step_stats;

typedef struct trace_summary {
    int steps;          /* step ranges found */
    int has_launches;   /* TRACE_LAUNCH records present (a GPU trace) */
    /* Means per step (NAN when there is no step). */
    double kernels_per_step, launches_per_step, memcpys_per_step,
           memsets_per_step;
    double wall_ms, busy_ms, busy_pct;
    double idle_host_wait_pct, idle_gap_pct, idle_other_pct; /* of wall */
    double phase_ms[TRACE_PHASE_COUNT];
    double idle_ms;
    /* Over all launch calls of all steps; NAN when there is none, 0 on the
     * CPU backend (each dispatch is its own launch). */
    size_t latency_samples;
    double launch_latency_us_median, launch_latency_us_p90;
    trace_step_stats step[TRACE_MAX_STEPS];
} trace_summary;

typedef struct trace_analysis_options {
    uint64_t gap_threshold_ns; /* 0: TRACE_GAP_THRESHOLD_NS */
} trace_analysis_options;

/* The step each record belongs to (-1: none), as defined above, into
 * step_of[n]; when host_of is not NULL, the index of the host call each
 * device record is correlated with (-1: none) into host_of[n]; the number
 * of steps into *n_steps. Returns 0, or -1 when out of memory. */
int trace_assign_steps(const trace_record *recs, size_t n, int32_t *step_of,
                       ptrdiff_t *host_of, int *n_steps);

/* Analyses recs[0..n) (any order) into *out. opt may be NULL. Returns 0, or
 * -1 when out of memory. With no step range, out->steps is 0 and every mean
 * is NAN. */
int trace_analyse(const trace_record *recs, size_t n,
                  const trace_analysis_options *opt, trace_summary *out);

#endif
