#include "config_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_check.h"
#include "dump.h"
#include "gradcheck.h"
#include "measure.h"
#include "noise_row.h"
#include "progress.h"
#include "ranges.h"
#include "trace_pass.h"
#include "train_curves.h"

void row_set_status(result_row *r, const char *status, const char *note)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    snprintf(r->note, sizeof r->note, "%s", note);
}

/* The row's status for a failed backend call. */
void row_status_from(result_row *r, int rc, const backend *b)
{
    row_set_status(r, rc == BK_OOM ? STATUS_OOM : rc == BK_UNSUPPORTED ? STATUS_SKIPPED : STATUS_ERROR,
               b->error);
}

/* Appends to the row's note ("; " between remarks). */
static void add_note(result_row *row, const char *fmt, ...)
{
    size_t used = strlen(row->note);
    if (used && used + 2 < sizeof row->note) {
        memcpy(row->note + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note + used, sizeof row->note - used, fmt, ap);
    va_end(ap);
}

/* Names what ended an adaptive timed loop, and where the noise ended up
 * against its target: a row over the target always says so. */
static void note_stop(result_row *r, const step_timing *t, const measure_options *mo)
{
    char noise[160];
    size_t n = t->step.samples;
    if (n < (size_t)mo->min_samples)
        snprintf(noise, sizeof noise, "%zu samples, fewer than min-samples %d", n,
                 mo->min_samples);
    else
        snprintf(noise, sizeof noise, "noise %.3g%% %s the %g%% target after %zu samples",
                 t->step.noise_pct, t->noise_met ? "within" : "over", mo->max_noise_pct, n);
    switch (t->stopped_by) {
    case MEASURE_STOP_NOISE:
        add_note(r, "stopped at the noise target: %s", noise);
        break;
    case MEASURE_STOP_SAMPLE_CAP:
        add_note(r, "stopped when max-samples %d was reached: %s", mo->max_samples,
                 noise);
        break;
    case MEASURE_STOP_BUDGET:
        add_note(r, "stopped when the %gs budget ran out: %s", mo->budget_s, noise);
        break;
    case MEASURE_STOP_INTERRUPTED:
        add_note(r, "stopped by an interrupt: %s", noise);
        break;
    case MEASURE_STOP_STEPS:
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
    if (!mo->steps)
        note_stop(r, t, mo);
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
            add_note(r, "no forward/backward/optimizer split (work not issued inside "
                        "those ranges, e.g. a graph replay)");
        }
        if (p->dropped)
            add_note(r, "trace pass lost %llu activity records", (unsigned long long)p->dropped);
    }
    if (p->note[0])
        add_note(r, "%s", p->note);
}

/* --dump: the window the gradient check just accumulated, from the starting
 * weights, written once, for the first config that runs. A dump that
 * cannot be written fails the run but not the measurements. */
static void dump_first(sweep *s, model *m, dataset *d, const split *sp, reduction red,
                       double loss, const float *grad)
{
    char why[400];
    s->dump_done = 1;
    dump_window w = {.m = m, .d = d, .sp = sp, .dtype = s->o->dtype, .reduction = red,
                     .optimizer = s->o->optimizer.kind, .seed = s->o->seed, .loss_sum = loss,
                     .grad = grad};
    if (!grad) {
        snprintf(why, sizeof why, "out of host memory for the gradient");
    } else if (dump_write(s->o->dump_dir, &w, why, sizeof why) == 0) {
        if (!s->o->quiet)
            printf("window dump: %s\n", s->o->dump_dir);
        return;
    }
    fprintf(stderr, "accubench: --dump: %s\n", why);
    s->failures++;
}

void config_run(sweep *s, model *m, dataset *d, const split *sp, exec_mode mode,
                       reduction red, sync_mode sync, result_row *r)
{
    comm *c = s->comm; /* data parallel: this config's ranks; NULL: one process */
    backend *b = s->b;
    const run_options *o = s->o;
    char name[160];
    snprintf(name, sizeof name, "config %s %s %dx%d %s %s", m->spec.name,
             dtype_name(o->dtype), sp->micro, sp->accum, mode_name(mode), reduction_name(red));
    range_push(name);
    b->mem_peak = b->mem_in_use;
    step_runner run;
    int rc = model_reset(m);
    if (!rc)
        rc = step_runner_init_dp(&run, m, d, sp, mode, red, c, sync);
    if (c) {
        /* Ranks that could not set the config up (all alike, or the first
         * failing rank's status for all) skip it together. */
        int worst = dp_agree_status(c, rc);
        if (!rc && worst) {
            step_runner_free(&run);
            snprintf(b->error, sizeof b->error, "another rank could not set this config up");
        }
        rc = worst;
    }
    if (rc) {
        row_status_from(r, rc, b);
        range_pop();
        return;
    }

    /* A config whose step would take longer than --max-step-s (micro-batch 1
     * of a large model on a CPU: minutes a step) is skipped, judged from one
     * measured pass before anything long runs. */
    double one_pass_ms = 0;
    progress_phase(s->progress, "timing one pass to judge --max-step-s");
    rc = measure_single_pass(&run, 3, &one_pass_ms); /* median: the first is cold */
    if (c && !rc)
        one_pass_ms = dp_agree_max(c, one_pass_ms); /* every rank skips it, or none */
    if (!rc && sp->accum * one_pass_ms > o->max_step_s * 1e3) {
        char why[RESULT_TEXT_LEN];
        snprintf(why, sizeof why, "one step would take about %.1f s (%d x a %.0f ms pass); "
                 "over --max-step-s %g", sp->accum * one_pass_ms / 1e3, sp->accum,
                 one_pass_ms, o->max_step_s);
        row_set_status(r, STATUS_SKIPPED, why);
        step_runner_free(&run);
        range_pop();
        return;
    }

    /* Correctness first, from the starting weights. */
    progress_phase(s->progress, "gradient check against the full batch");
    int dump = !rc && !c && o->dump_dir[0] && !s->dump_done; /* one process: dp_launch */
    float *window = dump ? malloc(m->n_params * sizeof(float)) : NULL;
    if (!rc)
        rc = grad_check(&run, &r->grad_rel_err, &r->loss, window, NULL);
    if (!rc && dump)
        dump_first(s, m, d, sp, red, r->loss, window);
    free(window);
    if (c && !rc) {
        /* Each rank's all-reduced gradient against the full batch, in one
         * process, of the same examples: the worst rank counts. The loss is
         * the window's, every rank's part. Then one step: the weights must
         * be the same on every rank. */
        r->grad_rel_err = dp_agree_max(c, r->grad_rel_err);
        r->loss = dp_agree_sum(c, r->loss);
        if ((rc = model_reset(m)) == BK_OK)
            rc = dp_weights_check(&run, &r->rank_weight_diff);
    }
    if (!rc) { /* the gradient noise scale, from the starting weights */
        progress_phase(s->progress, "gradient noise scale");
        rc = noise_row_fill(m, sp, o, c, r);
    }
    if (!rc && o->train_steps > 0) /* --train-steps: the loss curves */
        rc = train_curves_config(s, m, sp, mode, red, sync, r);
    if (!rc)
        rc = model_reset(m);

    measure_options mo = {
        .warmup = o->warmup, .steps = o->steps, .min_samples = o->min_samples,
        .max_samples = o->max_samples, .budget_s = o->budget_s,
        .max_noise_pct = o->max_noise_pct, .stop = (const volatile int *)s->stop,
    };
    step_timing t;
    progress_phase(s->progress, "warm-up and timed steps");
    if (!rc)
        rc = measure_steps(&run, &mo, &t);
    progress_phase(s->progress, "timing single passes");
    if (!rc)
        rc = measure_single_pass(&run, 5, &t.pass_ms);
    if (!rc) {
        row_fill_timing(r, &t, s->peak_tflops, &mo);
        r->mem_peak_bytes = (int64_t)b->mem_peak;
        if (c)
            dp_fill_row(c, &t, r);
        if (c && sync_info_of(sync)->buckets_in_backward && !m->spec.kind->reports_grad_ready)
            add_note(r, "model %s reports no gradient ranges: one bucket after its backward, "
                     "nothing overlapped", m->spec.kind->name);
    }
    if (!rc && o->trace_steps > 0 && !*s->stop) {
        /* The first config whose trace pass succeeds writes --trace. */
        const char *trace_file = o->trace_path[0] && !s->trace_written && s->writer
                                     ? o->trace_path : NULL;
        /* The trace pass keeps to the time budget too: fewer steps (one at
         * least) when a step is slow. */
        int steps = o->trace_steps;
        if (steps > 1 && t.step.median * steps > o->budget_s * 1e3)
            steps = t.step.median >= o->budget_s * 1e3 ? 1 : (int)(o->budget_s * 1e3 / t.step.median);
        if (c)
            steps = dp_agree_root_int(c, steps); /* the ranks step together */
        char label[RESULT_TEXT_LEN * 2];
        snprintf(label, sizeof label, "%s %s %s %lldx%lld %s %s", r->backend, r->model,
                 r->dtype, (long long)r->micro_batch, (long long)r->accum_steps, r->mode,
                 r->reduction);
        trace_pass_options to = {.steps = steps, .collector = s->col, .trace_file = trace_file,
                                 .trace_label = label, .file_written = &s->trace_written};
        trace_pass_summary tp;
        progress_phase(s->progress, "trace pass");
        rc = trace_pass_run(&run, &to, &tp);
        if (!rc)
            row_fill_trace(r, &tp);
    }
    if (!rc)
        rc = b->ops->sync(b);

    if (rc && c && c->size > 1) {
        /* The other ranks may be waiting in an all-reduce for this one. */
        char what[RESULT_TEXT_LEN * 2];
        snprintf(what, sizeof what, "config %s %s %lldx%lld %s sync %s", r->model, r->dtype,
                 (long long)r->micro_batch, (long long)r->accum_steps, r->mode, r->sync);
        dp_fail(c, what, b->error);
    }
    if (rc) {
        row_status_from(r, rc, b);
    } else if (red == REDUCTION_SUM &&
               !(r->grad_rel_err <= dtype_info_of(o->dtype)->grad_tolerance)) {
        char why[RESULT_TEXT_LEN];
        snprintf(why, sizeof why, "gradient check failed: relative error %.3g over %.0e",
                 r->grad_rel_err, dtype_info_of(o->dtype)->grad_tolerance);
        row_set_status(r, STATUS_ERROR, why);
    } else if (c && !(r->rank_weight_diff == 0)) {
        char why[RESULT_TEXT_LEN];
        snprintf(why, sizeof why, "the ranks' weights differ after a step by up to %.3g",
                 r->rank_weight_diff);
        row_set_status(r, STATUS_ERROR, why);
    } else {
        snprintf(r->status, sizeof r->status, "%s", STATUS_OK);
        if (red != REDUCTION_SUM)
            add_note(r, "known-wrong reduction kept as a demonstration");
    }
    step_runner_free(&run);
    range_pop();
}

