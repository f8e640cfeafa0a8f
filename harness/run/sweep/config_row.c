/* A config's row from what its passes measured: its status from a
 * backend status, the timing columns with their notes (why the timing
 * stopped where it did), and the trace pass's columns (config_run.h). */
#include "config_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"
#include "plural.h"
#include "row_trust.h"
#include "trace.h"
#include "trace_pass.h"

void row_set_status(result_row *r, const char *status, const char *note)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    snprintf(r->note, sizeof r->note, "%s", note);
}

/* The row's status for a failed backend call. */
void row_status_said(result_row *r, int rc, const char *why)
{
    row_set_status(r, rc == BK_OOM ? STATUS_OOM : rc == BK_UNSUPPORTED ? STATUS_SKIPPED : STATUS_ERROR,
                   why);
}

void row_status_from(result_row *r, int rc, const backend *b)
{
    row_status_said(r, rc, b->error);
}


/* Names what ended an adaptive timed loop, and where the noise ended up
 * against its target: a row over the target always says so. */
static void note_stop(result_row *r, const step_timing *t, const measure_options *mo)
{
    char noise[160];
    if (r->rounds > 0) { /* rounds.c says how many and what they dropped */
        static const char *const rounds_why[] = {
            [MEASURE_STOP_STEPS] = "the --rounds asked for were run",
            [MEASURE_STOP_DECIDED] = "every comparison was decided",
            [MEASURE_STOP_SAMPLE_CAP] = "the most rounds a row keeps were run",
            [MEASURE_STOP_BUDGET] = "the comparison's budget ran out",
            [MEASURE_STOP_INTERRUPTED] = "interrupted",
            [MEASURE_STOP_NOISE] = "", [MEASURE_STOP_PEER] = ""};
        long long all = r->rounds + (r->rounds_dropped > 0 ? r->rounds_dropped : 0);
        row_note(r, "timed in %lld interleaved %s (stopped when %s)", all,
                 plural(all, "round", "rounds"), rounds_why[t->stopped_by]);
        return;
    }
    size_t n = t->step.samples;
    if (n < (size_t)mo->min_samples)
        snprintf(noise, sizeof noise, "%zu %s, fewer than min-samples %d", n,
                 plural((long long)n, "sample", "samples"), mo->min_samples);
    else if (isnan(t->step.noise_pct)) /* one sample: no spread to give */
        snprintf(noise, sizeof noise, "no noise from %zu %s", n,
                 plural((long long)n, "sample", "samples"));
    else
        snprintf(noise, sizeof noise, "noise %.3g%% %s the %g%% target after %zu %s",
                 t->step.noise_pct, t->noise_met ? "within" : "over", mo->max_noise_pct, n,
                 plural((long long)n, "sample", "samples"));
    switch (t->stopped_by) {
    case MEASURE_STOP_NOISE:
        row_note(r, "stopped at the noise target: %s", noise);
        break;
    case MEASURE_STOP_SAMPLE_CAP:
        row_note(r, "stopped when max-samples %d was reached: %s", mo->max_samples,
                 noise);
        break;
    case MEASURE_STOP_BUDGET:
        row_note(r, "stopped when the %gs budget ran out: %s", mo->budget_s, noise);
        break;
    case MEASURE_STOP_INTERRUPTED:
        row_note(r, "stopped by an interrupt: %s", noise);
        break;
    case MEASURE_STOP_PEER:
        row_note(r, "stopped when another rank met its stopping condition: %s", noise);
        break;
    case MEASURE_STOP_STEPS:
        row_note(r, "timed the fixed --steps %d", mo->steps);
        break;
    case MEASURE_STOP_DECIDED: /* rounds only: said above */
        break;
    }
}

void row_fill_timing(result_row *r, const step_timing *t, double peak_tflops,
                     const measure_options *mo)
{
    r->step_ms_median = t->step.median;
    r->step_ms_p10 = t->step.p10;
    r->step_ms_p90 = t->step.p90;
    r->step_noise_pct = t->step.noise_pct;
    r->samples = (int64_t)t->step.samples;
    r->host_enqueue_ms = t->host_enqueue_ms;
    r->dispatches_per_step = t->dispatches_per_step;
    r->pass_ms = t->pass_ms;
    r->samples_per_s = (double)r->effective_batch / (t->step.median * 1e-3);
    r->tflops = r->flops_per_step / (t->step.median * 1e-3) / 1e12;
    r->mfu_pct = peak_tflops > 0 ? 100.0 * r->tflops / peak_tflops : NAN;
    note_stop(r, t, mo); /* every row names what stopped its timing */
}

void row_fill_trace(result_row *r, const trace_pass_summary *p)
{
    const trace_summary *t = &p->trace;
    if (p->analysed) {
        r->kernels_per_step = t->kernels_per_step;
        r->launch_calls_per_step = t->launches_per_step;
        r->gpu_busy_ms = t->busy_ms;
        r->gpu_busy_pct = t->busy_pct;
        r->idle_host_wait_pct = t->idle_host_wait_pct;
        r->idle_gap_pct = t->idle_gap_pct;
        r->launch_latency_us_median = t->launch_latency_us_median;
        r->launch_latency_us_p90 = t->launch_latency_us_p90;
        r->cupti_step_ms = t->wall_ms;
        r->cupti_dropped = (int64_t)p->dropped;
        r->idle_ms = t->idle_ms;
        double phased = t->phase_ms[TRACE_PHASE_FORWARD] + t->phase_ms[TRACE_PHASE_BACKWARD] +
                        t->phase_ms[TRACE_PHASE_OPTIMIZER];
        if (phased > 0 || !(t->busy_ms > 0)) {
            r->forward_ms = t->phase_ms[TRACE_PHASE_FORWARD];
            r->backward_ms = t->phase_ms[TRACE_PHASE_BACKWARD];
            r->optimizer_ms = t->phase_ms[TRACE_PHASE_OPTIMIZER];
        } else {
            /* Device work but none issued inside a forward/backward/optimizer
             * range: a graph replay, launched as a whole from the step range.
             * No split rather than a split of zeros. */
            row_note(r, "no forward/backward/optimizer split (work not issued inside "
                        "those ranges, e.g. a graph replay)");
        }
        if (p->dropped)
            row_note(r, "trace pass lost %llu activity records", (unsigned long long)p->dropped);
    }
    if (p->note[0])
        row_note(r, "%s", p->note);
}
