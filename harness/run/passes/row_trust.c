#include "row_trust.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "csv_writer.h"
#include "plural.h"
#include "row_flags.h"
#include "split_text.h"
#include "stats.h"

static int access_proc(void)
{
    cpu_sample c;
    return cpu_sample_now(&c) == 0;
}


static void flag_add(result_row *r, const char *flag)
{
    if (flags_have(r->flags, flag))
        return;
    size_t used = strlen(r->flags);
    snprintf(r->flags + used, sizeof r->flags - used, "%s%s", used ? " " : "", flag);
}

static void fill_probes(result_row *r, const watch_mark *a, const watch_mark *b)
{
    r->probe_tflops_before = a->probe_tflops;
    r->probe_tflops_after = b->probe_tflops;
    double hi = fmax(a->probe_tflops, b->probe_tflops); /* fmax skips a NAN */
    if (hi > 0) {
        /* against the higher probe: a probe slowed by something else
         * would flatter the row */
        r->mfu_pct = 100.0 * r->tflops / hi;
        if (!isnan(a->probe_tflops) && !isnan(b->probe_tflops))
            r->probe_drift_pct = 100.0 * fabs(a->probe_tflops - b->probe_tflops) / hi;
    }
    r->probe_noise_pct = fmax(a->probe_noise_pct, b->probe_noise_pct); /* NAN when neither */
}

static void fill_disturbance(result_row *r, const watch_mark *a, const watch_mark *b)
{
    double other, steal;
    if (a->cpu_ok && b->cpu_ok && cpu_sample_between(&a->cpu, &b->cpu, &other, &steal) == 0) {
        r->other_cpu_pct = other;
        r->steal_pct = steal;
    }
    if (a->gpu.ok && b->gpu.ok) {
        r->sm_clock_mhz = a->gpu.sm_mhz < b->gpu.sm_mhz ? a->gpu.sm_mhz : b->gpu.sm_mhz;
        gpu_events_text(a->gpu.events | b->gpu.events, r->clock_events, sizeof r->clock_events);
    }
}

void row_fill_trust(result_row *r, const step_timing *t, const watch_mark *before,
                    const watch_mark *after, const trust_limits *lim)
{
    r->step_ms_ci_lo = t->step.ci_lo;
    r->step_ms_ci_hi = t->step.ci_hi;
    fill_probes(r, before, after);
    fill_disturbance(r, before, after);
    row_classify(r, lim);
}

/* Too few samples or too much noise: the stop note of a config timed
 * alone by the adaptive loop has the figures; a fixed --steps run and a
 * row timed in interleaved rounds (whose stop note names only the rounds
 * and why they ended) get them here, so no noisy flag goes unexplained. */
static void classify_noise(result_row *r, const trust_limits *lim)
{
    if (lim->adaptive && !lim->rounds && r->samples >= 0 && r->samples < lim->min_samples)
        flag_add(r, FLAG_NOISY);
    if (r->step_noise_pct > lim->max_noise_pct) {
        flag_add(r, FLAG_NOISY);
        if (!lim->adaptive || lim->rounds)
            row_note(r, "noisy: noise %.3g%% over --max-noise %g%%", r->step_noise_pct,
                     lim->max_noise_pct);
    }
}

static void classify_probes(result_row *r)
{
    if (r->mfu_pct > TRUST_MAX_MFU_PCT) {
        flag_add(r, FLAG_DISTURBED);
        row_note(r, "disturbed: MFU %.3g%% of the peak probed beside it (%.3g TFLOP/s before "
                    "and %.3g after) is impossible",
                 r->mfu_pct, r->probe_tflops_before, r->probe_tflops_after);
    }
    if (r->mfu_datasheet_pct > TRUST_MAX_MFU_PCT) {
        flag_add(r, FLAG_DISTURBED);
        row_note(r, "disturbed: MFU %.3g%% of the device's datasheet rate is impossible "
                    "(%.3g TFLOP/s achieved)",
                 r->mfu_datasheet_pct, r->tflops);
    }
    /* A drift within the probes' own spread is their noise, not a change
     * of the machine between them. */
    if (r->probe_drift_pct > TRUST_MAX_DRIFT_PCT && !(r->probe_drift_pct <= r->probe_noise_pct)) {
        flag_add(r, FLAG_DISTURBED);
        row_note(r, "disturbed: the peak probes drifted %.3g%% (%.3g TFLOP/s before and %.3g "
                    "after: over %g%% and over the probes' own spread of %.3g%%)",
                 r->probe_drift_pct, r->probe_tflops_before, r->probe_tflops_after,
                 TRUST_MAX_DRIFT_PCT, r->probe_noise_pct);
    }
}

static void classify_machine(result_row *r, const trust_limits *lim)
{
    if (r->other_cpu_pct > TRUST_MAX_OTHER_CPU_PCT || r->steal_pct > TRUST_MAX_STEAL_PCT) {
        flag_add(r, FLAG_DISTURBED);
        row_note(r, "disturbed: other processes used %.3g%% of the CPUs' time and steal %.3g%% "
                    "(over %g%% / %g%%)",
                 r->other_cpu_pct, r->steal_pct, TRUST_MAX_OTHER_CPU_PCT, TRUST_MAX_STEAL_PCT);
    }
    if (r->clock_events[0] && strcmp(r->clock_events, "none")) {
        /* the names are NVML's; only the slowing ones count */
        static const char *const slowing[] = {"sw_power_cap", "hw_slowdown", "sw_thermal",
                                              "hw_thermal", "hw_power_brake"};
        for (size_t i = 0; i < sizeof slowing / sizeof *slowing; i++)
            if (flags_have(r->clock_events, slowing[i])) {
                flag_add(r, FLAG_DISTURBED);
                row_note(r, "disturbed: GPU clocks held down (%s at SM clock %.0f MHz)",
                         r->clock_events, r->sm_clock_mhz);
                break;
            }
    }
    double naive = split_naive_ms((long long)r->micro_batch, (long long)r->accum_steps,
                                  (long long)r->last_micro_batch, r->pass_ms);
    if (lim->passes_serial && naive > 0 && r->step_ms_median < (1 - TRUST_NAIVE_SLACK) * naive) {
        flag_add(r, FLAG_DISTURBED);
        row_note(r, "disturbed: the step (%.4g ms) is shorter than its %lld %s (%lld x "
                    "%.4g ms) that run one after another here",
                 r->step_ms_median, (long long)r->accum_steps,
                 plural((long long)r->accum_steps, "pass", "passes"), (long long)r->accum_steps,
                 r->pass_ms);
    }
}

void row_classify(result_row *r, const trust_limits *lim)
{
    r->flags[0] = '\0';
    if (isnan(r->step_ms_median))
        return;
    classify_noise(r, lim);
    classify_probes(r);
    classify_machine(r, lim);
}

trust_limits trust_limits_of(const measure_options *mo, const backend *b)
{
    return (trust_limits){.adaptive = !mo->steps, .min_samples = mo->min_samples,
                          .max_noise_pct = mo->max_noise_pct,
                          .passes_serial = (b->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK) != 0};
}

void trust_meta(struct csv_writer *csv, const config_watch *w)
{
    if (w && w->n)
        csv_writer_meta(csv, "peak_probe", "%dx%dx%d GEMM, the fastest of %d after one untimed, just "
                        "before and just after each config's timed steps; mfu_pct is against "
                        "the higher; probe_noise_pct the reps' median over their fastest", w->n, w->n, w->n, PROBE_REPS);
    else
        csv_writer_meta(csv, "peak_probe", "none: mfu_pct is against the start-up peak");
    csv_writer_meta(csv, "step_ms_ci", "%.0f%% interval of the median, distribution-free "
                    "(order statistics of the binomial sign test)", MEDIAN_CI_LEVEL * 100);
    csv_writer_meta(csv, "cpu_disturbance", "%s", access_proc() ? "/proc/stat less /proc/self/stat"
                    : "not measured: no /proc");
    csv_writer_meta(csv, "gpu_clocks", "%s", w && w->gpu ? "NVML" : w ? w->gpu_why : "not measured");
    csv_writer_meta(csv, "trust_thresholds", "disturbed: probe drift over %g%% and over the "
                    "probes' own spread, MFU over %g%% of "
                    "a probe, other processes over %g%% or steal over %g%% of the CPUs, a slowing "
                    "clock event%s; noisy: under min-samples or over max-noise",
                    TRUST_MAX_DRIFT_PCT, TRUST_MAX_MFU_PCT, TRUST_MAX_OTHER_CPU_PCT,
                    TRUST_MAX_STEAL_PCT, ", a step shorter than its passes where they run serially");
}
