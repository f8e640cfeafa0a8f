/* The trace analysis on synthetic records, with every expected number worked
 * out by hand in the comments (times in microseconds). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_analysis.h"
#include "trace_records.h"

/* Deterministic shuffle: the analysis must not depend on record order. */
static void shuffle(trace_record *r, size_t n, unsigned seed)
{
    for (size_t i = n; i > 1; i--) {
        seed = seed * 1103515245u + 12345u;
        size_t j = (seed >> 8) % i;
        trace_record t = r[i - 1];
        r[i - 1] = r[j];
        r[j] = t;
    }
}

#define TOL 1e-9
#define US_NS(x) ((uint64_t)((x) * 1000.0 + 0.5))

static void test_no_records(void)
{
    trace_summary s;
    CHECK(trace_analyse(NULL, 0, NULL, &s) == 0);
    CHECK(s.steps == 0);
    CHECK(isnan(s.kernels_per_step));
    CHECK(isnan(s.busy_pct));
    CHECK(isnan(s.wall_ms));
    CHECK(isnan(s.launch_latency_us_median));

    /* Device work but no step range: nothing to attribute it to. */
    trace_record r[] = {rec(TRACE_KERNEL, "k", 1, 2, 0, 0, -1)};
    CHECK(trace_analyse(r, N(r), NULL, &s) == 0);
    CHECK(s.steps == 0);
    CHECK(isnan(s.busy_ms));

    /* A step with no device work at all: all idle, nothing launched. */
    trace_record e[] = {rec(TRACE_RANGE, "step", 0, 10, 0, 0, 0)};
    CHECK(trace_analyse(e, N(e), NULL, &s) == 0);
    CHECK(s.steps == 1);
    CHECK_NEAR(s.kernels_per_step, 0, TOL);
    CHECK_NEAR(s.launches_per_step, 0, TOL);
    CHECK_NEAR(s.busy_pct, 0, TOL);
    CHECK_NEAR(s.idle_other_pct, 100, TOL);
    CHECK_NEAR(s.idle_ms, 0.010, TOL);
    CHECK(isnan(s.launch_latency_us_median));
}

/* The CPU backend: dispatches only (no launch records), touching intervals,
 * host gaps between them, the phase ranges, records shuffled.
 *
 *   step      [0, 100]       sync [90, 105]  -> window [0, 105], wall 105
 *   forward   [5, 45]   backward [45, 85]   optimizer [85, 100]
 *   kernels   [10,30] [40,50] [50,60] (touching) [86,90]
 *   busy      20 + 20 + 4 = 44
 *   idle      [0,10) [30,40) [60,86): the next dispatch was not issued yet
 *             (a dispatch is issued when it starts) -> host wait 10+10+26 = 46
 *             [90,105): nothing after it -> other 15
 *   phases    forward [10,30]+[40,50] = 30, backward [50,60] = 10,
 *             optimizer [86,90] = 4 */
static void test_cpu_dispatches(void)
{
    trace_record r[] = {
        rec(TRACE_RANGE, "step", 0, 100, 0, 0, 0),
        rec(TRACE_RANGE, "forward", 5, 45, 0, 0, 0),
        rec(TRACE_RANGE, "backward", 45, 85, 0, 0, 0),
        rec(TRACE_RANGE, "optimizer", 85, 100, 0, 0, 0),
        rec(TRACE_KERNEL, "gemm", 10, 30, 0, 0, 0),
        rec(TRACE_KERNEL, "bias_gelu", 40, 50, 0, 0, 0),
        rec(TRACE_KERNEL, "gemm", 50, 60, 0, 0, 0),
        rec(TRACE_KERNEL, "adamw", 86, 90, 0, 0, 0),
        rec(TRACE_SYNC, "sync", 90, 105, 0, 0, 0),
    };
    for (unsigned seed = 1; seed <= 4; seed++) {
        trace_summary s;
        shuffle(r, N(r), seed);
        CHECK(trace_analyse(r, N(r), NULL, &s) == 0);
        CHECK(s.steps == 1);
        CHECK(!s.has_launches);
        CHECK_NEAR(s.kernels_per_step, 4, TOL);
        CHECK_NEAR(s.launches_per_step, 4, TOL); /* the dispatch count */
        CHECK_NEAR(s.wall_ms, 0.105, TOL);
        CHECK_NEAR(s.busy_ms, 0.044, TOL);
        CHECK_NEAR(s.busy_pct, 100.0 * 44 / 105, 1e-9);
        CHECK_NEAR(s.idle_host_wait_pct, 100.0 * 46 / 105, 1e-9);
        CHECK_NEAR(s.idle_gap_pct, 0, TOL);
        CHECK_NEAR(s.idle_other_pct, 100.0 * 15 / 105, 1e-9);
        CHECK_NEAR(s.idle_ms, 0.061, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_FORWARD], 0.030, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_BACKWARD], 0.010, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OPTIMIZER], 0.004, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OTHER], 0, TOL);
        /* Each dispatch is its own launch: latency 0 by definition. */
        CHECK(s.latency_samples == 4);
        CHECK_NEAR(s.launch_latency_us_median, 0, TOL);
        CHECK_NEAR(s.launch_latency_us_p90, 0, TOL);
        CHECK(s.step[0].start_ns == 0 && s.step[0].end_ns == US_NS(105));
        CHECK(s.step[0].syncs == 1);
    }
}

/* The optimizer in the backward: "optimizer" ranges nested in the
 * "backward" one, with backward work between and after them, and a gap
 * after the backward that belongs to no phase.
 *
 *   step [0, 100]; forward [0, 10]; backward [10, 80] with optimizer
 *   [30, 40] and [60, 70] inside; kernels gemm [12,28] (backward), adamw
 *   [31,39] (optimizer), gemm [42,58] (backward, after an optimizer range
 *   ended), adamw [61,69], gemm [72,78] (backward), zero [85, 95] (no phase)
 *   phases: backward 16 + 16 + 6 = 38, optimizer 8 + 8 = 16, other 10 */
static void test_nested_optimizer(void)
{
    trace_record r[] = {
        rec(TRACE_RANGE, "step", 0, 100, 0, 0, 0),
        rec(TRACE_RANGE, "forward", 0, 10, 0, 0, 0),
        rec(TRACE_RANGE, "backward", 10, 80, 0, 0, 0),
        rec(TRACE_RANGE, "optimizer", 30, 40, 0, 0, 0),
        rec(TRACE_RANGE, "optimizer", 60, 70, 0, 0, 0),
        rec(TRACE_KERNEL, "gemm", 12, 28, 0, 0, 0),
        rec(TRACE_KERNEL, "adamw", 31, 39, 0, 0, 0),
        rec(TRACE_KERNEL, "gemm", 42, 58, 0, 0, 0),
        rec(TRACE_KERNEL, "adamw", 61, 69, 0, 0, 0),
        rec(TRACE_KERNEL, "gemm", 72, 78, 0, 0, 0),
        rec(TRACE_KERNEL, "zero", 85, 95, 0, 0, 0),
    };
    for (unsigned seed = 1; seed <= 4; seed++) {
        trace_summary s;
        shuffle(r, N(r), seed);
        CHECK(trace_analyse(r, N(r), NULL, &s) == 0);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_FORWARD], 0, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_BACKWARD], 0.038, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OPTIMIZER], 0.016, TOL);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OTHER], 0.010, TOL);
    }
}

/* A GPU step: launches correlated to kernels on two streams that overlap,
 * a kernel nested in another, a memset from a runtime call, a driver launch
 * inside a runtime launch, a short gap and a long wait.
 *
 *   step [0, 50], host thread 100; sync [40, 60] -> window [0, 60], wall 60
 *   launches (thread 100): L1 [1,3] c1, L2 [4,6] c2 with a driver launch D
 *     [4.5,5.5] c9 inside it, L3 [7,9] c3, L4 [30,32] c4; thread 101:
 *     L5 [33,34] c6. Runtime call R [10,11] c5 (a memset).
 *   device: K1 c1 s7 [5,20], K2 c2 s8 [10,25], M c5 s9 [12,13],
 *     K3 c3 s7 [27,28], K4 c4 s7 [33,40], K5 c6 s8 [35,38] (inside K4)
 *   busy = [5,25] + [27,28] + [33,40] = 20 + 1 + 7 = 28
 *   idle [0,5): K1 issued at 1 -> host wait 1, then 4 in flight but no work
 *          before it -> other 4
 *        [25,27): K3 issued at 7 already -> gap 2 (< 10)
 *        [28,33): K4 issued at 30 -> host wait 2, then gap 3
 *        [40,60): nothing after -> other 20
 *   host wait 3, gap 5, other 24: 28 + 3 + 5 + 24 = 60
 *   launches: L1..L5 = 5 (D is inside L2); latencies K-start minus L-start:
 *     4, 6, 20, 3, 2 -> sorted 2 3 4 6 20: median 4, p90 = 6 + 0.6 * 14 = 14.4
 *   phases: forward [0,8], backward [8,29.5], optimizer [29.5,45]; by issue
 *     time K1 K2 K3 forward, M backward, K4 K5 optimizer:
 *     [5,12) forward 7, [12,13) forward+backward 0.5 each, [13,25) forward
 *     12, [27,28) forward 1, [33,40) optimizer 7 -> 20.5, 0.5, 7 */
static size_t gpu_records(trace_record *r)
{
    size_t n = 0;
    r[n++] = rec(TRACE_RANGE, "step", 0, 50, 100, 0, 0);
    r[n++] = rec(TRACE_RANGE, "forward", 0, 8, 100, 0, 0);
    r[n++] = rec(TRACE_RANGE, "backward", 8, 29.5, 100, 0, 0);
    r[n++] = rec(TRACE_RANGE, "optimizer", 29.5, 45, 100, 0, 0);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 1, 3, 100, 1, 0);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 4, 6, 100, 2, 0);
    r[n++] = rec(TRACE_LAUNCH, "cuLaunchKernel", 4.5, 5.5, 100, 9, 0);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 7, 9, 100, 3, 0);
    r[n++] = rec(TRACE_RUNTIME, "cudaMemsetAsync", 10, 11, 100, 5, 0);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 30, 32, 100, 4, 0);
    r[n++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 33, 34, 101, 6, 0);
    r[n++] = rec(TRACE_SYNC, "cudaDeviceSynchronize", 40, 60, 100, 0, 0);
    /* CUPTI records arrive after the pass, unstamped (step -1). */
    r[n++] = rec(TRACE_KERNEL, "k1", 5, 20, 7, 1, -1);
    r[n++] = rec(TRACE_KERNEL, "k2", 10, 25, 8, 2, -1);
    r[n++] = rec(TRACE_MEMSET, "memset", 12, 13, 9, 5, -1);
    r[n++] = rec(TRACE_KERNEL, "k3", 27, 28, 7, 3, -1);
    r[n++] = rec(TRACE_KERNEL, "k4", 33, 40, 7, 4, -1);
    r[n++] = rec(TRACE_KERNEL, "k5", 35, 38, 8, 6, -1);
    return n;
}

static void test_gpu_step(void)
{
    trace_record r[32];
    size_t n = gpu_records(r);
    for (unsigned seed = 1; seed <= 4; seed++) {
        trace_summary s;
        shuffle(r, n, seed);
        CHECK(trace_analyse(r, n, NULL, &s) == 0);
        CHECK(s.steps == 1);
        CHECK(s.has_launches);
        CHECK_NEAR(s.kernels_per_step, 5, TOL);
        CHECK_NEAR(s.memsets_per_step, 1, TOL);
        CHECK_NEAR(s.memcpys_per_step, 0, TOL);
        CHECK_NEAR(s.launches_per_step, 5, TOL);
        CHECK(s.step[0].runtime_calls == 1);
        CHECK_NEAR(s.wall_ms, 0.060, TOL);
        CHECK_NEAR(s.busy_ms, 0.028, TOL);
        CHECK_NEAR(s.busy_pct, 100.0 * 28 / 60, 1e-9);
        CHECK_NEAR(s.idle_host_wait_pct, 100.0 * 3 / 60, 1e-9);
        CHECK_NEAR(s.idle_gap_pct, 100.0 * 5 / 60, 1e-9);
        CHECK_NEAR(s.idle_other_pct, 100.0 * 24 / 60, 1e-9);
        CHECK(s.latency_samples == 5);
        CHECK_NEAR(s.launch_latency_us_median, 4.0, 1e-9);
        CHECK_NEAR(s.launch_latency_us_p90, 14.4, 1e-9);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_FORWARD], 0.0205, 1e-12);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_BACKWARD], 0.0005, 1e-12);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OPTIMIZER], 0.007, 1e-12);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OTHER], 0, 1e-12);
    }

    /* A driver launch inside a runtime launch, both with the same
     * correlation id (CUPTI may report both for one launch): one launch,
     * timed from the outer call. Add L6 [41,44] and D6 [42,43] on thread
     * 100, both c7, and kernel K6 c7 [46,47]:
     *   busy 28 + 1 = 29; the old tail [40,60) other 20 becomes
     *   [40,41) host wait 1 (L6 not called yet), [41,46) gap 5 (issued,
     *   after device work, < 10), [47,60) other 13
     *   -> host wait 4, gap 10, other 4 + 13 = 17; 29 + 4 + 10 + 17 = 60.
     *   Launches 6 (D6 inside L6); latency of L6 = 46 - 41 = 5. */
    {
        trace_record r2[40];
        size_t n2 = gpu_records(r2);
        r2[n2++] = rec(TRACE_LAUNCH, "cuLaunchKernel", 42, 43, 100, 7, -1);
        r2[n2++] = rec(TRACE_LAUNCH, "cudaLaunchKernel", 41, 44, 100, 7, -1);
        r2[n2++] = rec(TRACE_KERNEL, "k6", 46, 47, 7, 7, -1);
        trace_summary s;
        CHECK(trace_analyse(r2, n2, NULL, &s) == 0);
        CHECK_NEAR(s.launches_per_step, 6, TOL);
        CHECK_NEAR(s.kernels_per_step, 6, TOL);
        CHECK_NEAR(s.busy_ms, 0.029, TOL);
        CHECK_NEAR(s.idle_host_wait_pct, 100.0 * 4 / 60, 1e-9);
        CHECK_NEAR(s.idle_gap_pct, 100.0 * 10 / 60, 1e-9);
        CHECK_NEAR(s.idle_other_pct, 100.0 * 17 / 60, 1e-9);
        CHECK(s.latency_samples == 6); /* one per launch with a kernel */
        /* 2 3 4 5 6 20: median 4.5, p90 = 6 + 0.5 * 14 = 13 */
        CHECK_NEAR(s.launch_latency_us_median, 4.5, 1e-9);
        CHECK_NEAR(s.launch_latency_us_p90, 13.0, 1e-9);
    }

    /* A threshold of 2.5 us: the 2 us stretch stays a gap, the 3 us one
     * becomes other. */
    trace_analysis_options opt = {.gap_threshold_ns = 2500};
    trace_summary s;
    CHECK(trace_analyse(r, n, &opt, &s) == 0);
    CHECK_NEAR(s.idle_gap_pct, 100.0 * 2 / 60, 1e-9);
    CHECK_NEAR(s.idle_other_pct, 100.0 * 27 / 60, 1e-9);
    CHECK_NEAR(s.idle_host_wait_pct, 100.0 * 3 / 60, 1e-9);
}

/* Several steps: device work found by correlation even when it runs late,
 * by step stamp, by time; work before the first step ignored.
 *
 *   before: launch [50,51] c10 -> kernel [52,53]: no step
 *   step 0 [100,110] stamp 0: launch [101,102] c11 -> kernel [150,160];
 *     sync [102,161]. Window [100,161], wall 61, busy 10,
 *     idle [100,150): issued at 101 -> host wait 1, other 49 (no work
 *     before it); [160,161) other 1.
 *   step 1 [200,210] stamp 1: launch [201,202] c12 -> kernel [203,204];
 *     an uncorrelated kernel stamped 1 [205,206]; an unstamped one [207,208];
 *     sync [202,209]. Window [200,210], wall 10, busy 3,
 *     idle [200,203): host wait 1, other 2; [204,205) and [206,207):
 *     host wait 1 each (own launches); [208,210) other 2.
 *   Means: kernels 2, launches 1, wall 35.5, busy 6.5;
 *   of 71 us of wall: busy 13, host wait 4, other 54.
 *   latencies 49 and 2 (not the 2 before the first step): median 25.5,
 *   p90 2 + 0.9 * 47 = 44.3. */
static void test_steps(void)
{
    trace_record r[] = {
        rec(TRACE_LAUNCH, "cudaLaunchKernel", 50, 51, 1, 10, -1),
        rec(TRACE_KERNEL, "early", 52, 53, 7, 10, -1),
        rec(TRACE_RANGE, "step", 100, 110, 1, 0, 0),
        rec(TRACE_LAUNCH, "cudaLaunchKernel", 101, 102, 1, 11, -1),
        rec(TRACE_SYNC, "sync", 102, 161, 1, 0, -1),
        rec(TRACE_KERNEL, "late", 150, 160, 7, 11, -1),
        rec(TRACE_RANGE, "step", 200, 210, 1, 0, 1),
        rec(TRACE_LAUNCH, "cudaLaunchKernel", 201, 202, 1, 12, -1),
        rec(TRACE_SYNC, "sync", 202, 209, 1, 0, -1),
        rec(TRACE_KERNEL, "a", 203, 204, 7, 12, -1),
        rec(TRACE_KERNEL, "stamped", 205, 206, 7, 0, 1),
        rec(TRACE_KERNEL, "unstamped", 207, 208, 7, 0, -1),
    };
    int32_t step_of[N(r)];
    ptrdiff_t host_of[N(r)];
    int steps = 0;
    CHECK(trace_assign_steps(r, N(r), step_of, host_of, &steps) == 0);
    CHECK(steps == 2);
    int32_t expect[N(r)] = {-1, -1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
    ptrdiff_t expect_host[N(r)] = {-1, 0, -1, -1, -1, 3, -1, -1, -1, 7, -1, -1};
    for (size_t i = 0; i < N(r); i++) {
        CHECK(step_of[i] == expect[i]);
        CHECK(host_of[i] == expect_host[i]);
    }

    for (unsigned seed = 1; seed <= 4; seed++) {
        trace_summary s;
        shuffle(r, N(r), seed);
        CHECK(trace_analyse(r, N(r), NULL, &s) == 0);
        CHECK(s.steps == 2);
        CHECK_NEAR(s.kernels_per_step, 2, TOL);
        CHECK_NEAR(s.launches_per_step, 1, TOL);
        CHECK_NEAR(s.wall_ms, 0.0355, TOL);
        CHECK_NEAR(s.busy_ms, 0.0065, TOL);
        CHECK_NEAR(s.busy_pct, 100.0 * 13 / 71, 1e-9);
        CHECK_NEAR(s.idle_host_wait_pct, 100.0 * 4 / 71, 1e-9);
        CHECK_NEAR(s.idle_gap_pct, 0, TOL);
        CHECK_NEAR(s.idle_other_pct, 100.0 * 54 / 71, 1e-9);
        CHECK_NEAR(s.launch_latency_us_median, 25.5, 1e-9);
        CHECK_NEAR(s.launch_latency_us_p90, 44.3, 1e-9);
        CHECK(s.step[0].end_ns == US_NS(161) && s.step[1].end_ns == US_NS(210));
        CHECK(s.step[0].kernels == 1 && s.step[1].kernels == 3);
        CHECK_NEAR(s.phase_ms[TRACE_PHASE_OTHER], 0.0065, TOL);
    }
}

/* Nested, identical and touching intervals on one stream, and a zero-length
 * one: the union counts each instant once.
 *   step [0,10]; kernels [2,8], [3,5] (inside), [3,5] (the same again),
 *   [8,9] (touching), [8,8] (empty) -> busy 7; idle [0,2) host wait 2,
 *   [9,10) other 1. */
static void test_nested_touching(void)
{
    trace_record r[] = {
        rec(TRACE_RANGE, "step", 0, 10, 0, 0, 0),
        rec(TRACE_KERNEL, "outer", 2, 8, 0, 0, 0),
        rec(TRACE_KERNEL, "inner", 3, 5, 0, 0, 0),
        rec(TRACE_KERNEL, "inner", 3, 5, 0, 0, 0),
        rec(TRACE_KERNEL, "touch", 8, 9, 0, 0, 0),
        rec(TRACE_KERNEL, "empty", 8, 8, 0, 0, 0),
    };
    trace_summary s;
    CHECK(trace_analyse(r, N(r), NULL, &s) == 0);
    CHECK_NEAR(s.kernels_per_step, 5, TOL);
    CHECK_NEAR(s.busy_ms, 0.007, TOL);
    CHECK_NEAR(s.busy_pct, 70, 1e-9);
    CHECK_NEAR(s.idle_host_wait_pct, 20, 1e-9);
    CHECK_NEAR(s.idle_other_pct, 10, 1e-9);
    CHECK_NEAR(s.phase_ms[TRACE_PHASE_OTHER], 0.007, TOL);
}

/* Overlap on two streams is counted once, never summed: two 10 us kernels
 * at [0,10] and [5,15] in a [0,20] step are 15 us busy, not 20. */
static void test_overlap_two_streams(void)
{
    trace_record r[] = {
        rec(TRACE_RANGE, "step", 0, 20, 0, 0, 0),
        rec(TRACE_KERNEL, "a", 0, 10, 1, 0, 0),
        rec(TRACE_KERNEL, "b", 5, 15, 2, 0, 0),
    };
    trace_summary s;
    CHECK(trace_analyse(r, N(r), NULL, &s) == 0);
    CHECK_NEAR(s.busy_ms, 0.015, TOL);
    CHECK_NEAR(s.busy_pct, 75, 1e-9);
    CHECK_NEAR(s.idle_other_pct, 25, 1e-9);
    CHECK_NEAR(s.idle_host_wait_pct, 0, 1e-9);
}

int main(void)
{
    test_no_records();
    test_cpu_dispatches();
    test_nested_optimizer();
    test_gpu_step();
    test_steps();
    test_nested_touching();
    test_overlap_two_streams();
    return check_finish("test_trace_analysis");
}
