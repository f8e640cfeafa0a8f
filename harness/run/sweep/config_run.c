#include "config_run.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_pass.h"
#include "dispatch.h"
#include "dp_check.h"
#include "dump.h"
#include "noise_dump.h"
#include "gradcheck.h"
#include "measure.h"
#include "noise_row.h"
#include "plural.h"
#include "progress.h"
#include "ranges.h"
#include "row_trust.h"
#include "row_label.h"
#include "trace.h"
#include "trace_pass.h"
#include "train_curves.h"

/* The noise pass's windows for the dump, where the row has a noise scale
 * (else `no_noise` is why there are none): drawn again and their gradient
 * taken at the weights the pass ran at. 0, or -1 with the reason in why. */
static int noise_windows_dump(model *m, const config *c, const result_row *r,
                              const noise_row_pass *pass, noise_dump *nd, const char **no_noise,
                              char *why, size_t n)
{
    *no_noise = pass->none;
    if (pass->none[0])
        return 0;
    if (noise_dump_build(m, &c->sp, c->seed, pass->windows_complete, nd)) {
        snprintf(why, n, "the noise pass's windows: %s", m->b->error);
        return -1;
    }
    if (nd->n_windows != r->noise_windows) { /* the rule is shared: never, unless broken */
        snprintf(why, n, "the noise pass's windows drawn again are %d, the estimate's %lld",
                 nd->n_windows, (long long)r->noise_windows);
        noise_dump_free(nd);
        return -1;
    }
    *no_noise = NULL;
    return 0;
}

/* --dump: the window the gradient check accumulated, from the starting
 * weights, and the noise pass's windows, written once, for the first
 * config that runs, after its noise pass (whose figure the noise dump
 * holds). A dump that cannot be written fails the run but not the
 * measurements. */
static void dump_first(sweep *s, model *m, dataset *d, const config *c, const result_row *r,
                       const noise_row_pass *pass, const float *grad)
{
    char why[400];
    s->dump_done = 1;
    dump_window w = {.m = m, .data = d, .n_data = 1, .sp = &c->sp, .dtype = c->dtype,
                     .grad_dtype = c->grad_dtype, .reduction = c->reduction, .optimizer = c->optimizer, .seed = c->seed,
                     .loss_sum = r->loss_sum, .grad = grad};
    noise_dump nd = {0};
    const char *no_noise = NULL;
    if (!grad) {
        snprintf(why, sizeof why, "out of host memory for the gradient");
    } else if (noise_windows_dump(m, c, r, pass, &nd, &no_noise, why, sizeof why) == 0) {
        /* The mean over every valid item of the windows: the exact reduction. */
        dump_noise_fields fields = {.windows = (int)r->noise_windows,
                                    .scale = r->grad_noise_scale,
                                    .scale_err = r->grad_noise_scale_err};
        dump_window nw = w;
        nw.data = nd.windows;
        nw.n_data = nd.n_windows;
        nw.reduction = REDUCTION_SUM;
        nw.grad_dtype = GRAD_DTYPE_FP32; /* the pass sums fp32 gradients */
        nw.loss_sum = nd.loss_sum;
        nw.grad = nd.grad;
        nw.noise = &fields;
        int rc = dump_write(s->dump_dir, &w, no_noise ? NULL : &nw, no_noise, why, sizeof why);
        noise_dump_free(&nd);
        /* mid-config, the terminal's status line is up: a line written now
         * would be glued to its end (as before a table row, sweep_row.c) */
        progress_clear(s->progress);
        if (rc == 0) {
            if (!s->quiet)
                printf("window dump: %s\n", s->dump_dir);
            return;
        }
    }
    progress_clear(s->progress);
    fprintf(stderr, "accubench: --dump: %s\n", why);
    s->failures++;
}

/* The step runner of the config, on every rank of s->comm alike: ranks
 * that could not set it up (all, or the first failing rank's status for
 * all) skip it together. BK_* status. */
static int setup_runner(sweep *s, model *m, dataset *d, const config *c, step_runner *run,
                        int rc)
{
    comm *ranks = s->comm;
    if (!rc)
        rc = step_runner_init_dp(run, m, d, &c->sp, c->mode, c->reduction, ranks, c->sync);
    if (!rc)
        run->shard = c->shard;
    if (!ranks)
        return rc;
    int worst = dp_agree_status(ranks, rc);
    if (!rc && worst) {
        step_runner_free(run);
        snprintf(s->b->error, sizeof s->b->error, "another rank could not set this config up");
    }
    return worst;
}

/* The config from the starting weights: the model reset (with ranks,
 * shard_state reset it), then its runner. */
static int setup(sweep *s, model *m, dataset *d, const config *c, step_runner *run, int rc)
{
    if (!rc && !s->comm)
        rc = model_reset(m);
    return setup_runner(s, m, d, c, run, rc);
}

int config_runner_setup(sweep *s, model *m, dataset *d, const config *c, step_runner *run)
{
    /* The weights as the rounds left them: a step's time does not depend
     * on their values, and a reset is a copy of the whole state. */
    return setup_runner(s, m, d, c, run, BK_OK);
}

/* A config whose step would take longer than --max-step-s (micro-batch 1
 * of a large model on a CPU: minutes a step) is skipped, judged from one
 * measured pass before anything long runs. 1 when r says it was; BK_*
 * in *rc. */
static int too_slow(sweep *s, step_runner *run, const config *c, result_row *r, int *rc)
{
    double one_pass_ms = 0;
    progress_phase(s->progress, "timing one pass to judge --max-step-s");
    *rc = measure_single_pass(run, 3, &one_pass_ms); /* median: the first is cold */
    if (s->comm && !*rc)
        one_pass_ms = dp_agree_max(s->comm, one_pass_ms); /* every rank skips it, or none */
    if (!*rc)
        progress_config_pass(s->progress, one_pass_ms); /* the ETA's first cost */
    if (*rc || !(c->sp.accum * one_pass_ms > c->budget.max_step_s * 1e3))
        return 0;
    char why[RESULT_TEXT_LEN];
    /* a pass of microseconds times a million passes is a skip too: its
     * digits shown, not "a 0 ms pass" */
    int digits = one_pass_ms >= 10 ? 0 : one_pass_ms >= 1 ? 1 : 3;
    snprintf(why, sizeof why, "one step would take about %.1f s (%d x a %.*f ms pass); "
             "over --max-step-s %g", c->sp.accum * one_pass_ms / 1e3, c->sp.accum, digits,
             one_pass_ms, c->budget.max_step_s);
    row_set_status(r, STATUS_SKIPPED, why);
    return 1;
}

/* Correctness first, from the starting weights: the window's gradient
 * against the full batch (and --dump of it); with ranks, the worst rank's
 * error, the window's loss over every rank, and one step after which the
 * weights must be the same on every rank. BK_* status. */
static int check_gradient(sweep *s, model *m, dataset *d, const config *c,
                          step_runner *run, result_row *r)
{
    comm *ranks = s->comm;
    progress_phase(s->progress, "gradient check against the full batch");
    int dump = !ranks && s->dump_dir[0] && !s->dump_done; /* one process: dp_launch */
    float *window = dump ? malloc(m->n_params * sizeof(float)) : NULL;
    int rc = grad_check(run, &r->grad_rel_err, &r->loss_sum, window, NULL);
    dump = dump && !rc;
    if (ranks && !rc) {
        r->grad_rel_err = dp_agree_max(ranks, r->grad_rel_err);
        r->loss_sum = dp_agree_sum(ranks, r->loss_sum);
        if ((rc = model_reset(m)) == BK_OK)
            rc = dp_weights_check(run, &r->rank_weight_diff);
    }
    if (!rc) {
        /* The window's loss as the manifest of --dump gives it: the sum over
         * the valid items of the whole window (every rank's), over their
         * count. */
        int valid = dataset_valid_count(d, 0, 0, d->effective_batch);
        r->loss = valid ? r->loss_sum / valid : NAN;
    }
    noise_row_pass pass = {0}; /* read by the dump, which a failed check skips */
    if (!rc) { /* the gradient noise scale, from the starting weights (the
                * weights check above took a step) */
        progress_phase(s->progress, "gradient noise scale");
        uint64_t t0 = trace_now_ns();
        rc = model_reset(m);
        if (!rc) /* ZeRO-2: it reads each small batch's gradient whole */
            rc = model_grads_whole(m);
        if (!rc)
            rc = noise_row_fill(m, c, ranks, r, &pass);
        /* A check that does not fit is skipped, the row still measured; with
         * ranks, the others are inside the pass's collectives, which this one
         * would leave: the failure stops every rank (verdict) instead */
        if (rc == BK_OOM && !ranks) {
            snprintf(pass.none, sizeof pass.none,
                     "no noise scale: out of memory for its pass (%s)", s->b->error);
            row_note(r, "%s", pass.none);
            rc = model_reset(m);
        } else if (rc) {
            snprintf(pass.none, sizeof pass.none, "no noise scale: its pass failed (%s)",
                     s->b->error);
        }
        progress_config_noise(s->progress, (double)(trace_now_ns() - t0) / 1e9, pass.windows_run); /* the ETA's */
    }
    /* After the pass: the noise dump is of its windows and holds its figure,
     * drawn at the weights it ran at. */
    if (dump)
        dump_first(s, m, d, c, r, &pass, window);
    free(window);
    /* --train-steps: the loss curves; a config's second arm (an A/A
     * check) would train its first's curve again, the same weights, the
     * same examples: it times the step, and trains none */
    if (!rc && c->train_steps > 0 && !RESULT_SECOND_ARM(c)) {
        rc = train_curves_config(s, m, c, r, pass.windows_complete);
        if (rc == BK_OOM && !ranks) { /* a device too full for the curves: as the noise pass */
            row_note(r, "no loss curve: out of memory for its pass (%s)", s->b->error);
            rc = model_reset(m);
        }
    }
    model_grads_sliced(m); /* ZeRO-2: the checks' whole gradient is theirs, not the step's */
    return rc ? rc : model_reset(m);
}

measure_options config_timing_options(const sweep *s, const config *c)
{
    const config_budget *g = &c->budget;
    return (measure_options){.warmup = g->warmup, .steps = g->steps,
                             .min_samples = g->min_samples, .max_samples = g->max_samples,
                             .budget_s = g->budget_s, .max_noise_pct = g->max_noise_pct,
                             .stop = (const volatile int *)s->stop};
}

/* The timed figures of r from t (measured alone or in rounds): the
 * single-pass timing first where the rounds did not time it beside the
 * steps (the runner alone on the device, right after its steps), then the
 * row's timing, trust and data-parallel columns; `peak` the step's memory
 * peak. BK_* status. */
int config_fill_timed(sweep *s, model *m, const dataset *d, const config *c, step_runner *run,
                      result_row *r, step_timing *t, const watch_mark *before,
                      const watch_mark *after, const step_memory *mem)
{
    measure_options mo = config_timing_options(s, c);
    if (!(t->pass_ms > 0)) {
        progress_phase(s->progress, "timing single passes");
        int rc = measure_single_pass(run, 5, &t->pass_ms);
        if (rc)
            return rc;
    }
    row_fill_timing(r, t, s->peak_tflops[c->dtype], &mo);
    /* Both ways: the measured peak says what this machine reaches now, the
     * datasheet what the part is sold at; the trust pass flags either
     * above 100% (row_trust.c). */
    if (s->b->datasheet_tflops > 0)
        r->mfu_datasheet_pct = 100.0 * r->tflops / s->b->datasheet_tflops;
    if (d->input.kind == INPUT_TOKENS) /* every position of a sequence, padding too */
        r->tokens_per_s = r->samples_per_s * d->input.width;
    trust_limits lim = trust_limits_of(&mo, s->b);
    lim.rounds = r->rounds > 0;
    row_fill_trust(r, t, before, after, &lim);
    r->mem_peak_bytes = mem->peak;
    r->mem_held_bytes = mem->held;
    if (s->comm)
        dp_fill_row(s->comm, t, r);
    if (s->comm && sync_info_of(c->sync)->buckets_in_backward &&
        !m->spec.kind->reports_grad_ready)
        row_note(r, "model %s reports no gradient ranges: one bucket after its backward, "
                 "nothing overlapped", m->spec.kind->name);
    return BK_OK;
}

void step_memory_open(backend *b)
{
    b->mem_peak = b->mem_in_use;
    bk_held_reset(b);
}

void step_memory_close(backend *b, size_t others, step_memory *m)
{
    /* Both the step's own: less what other runners kept between rounds hold
     * (their allocations, to the byte; the process around them stays in). */
    int64_t peak = (int64_t)(b->mem_peak - others), held = bk_held_peak(b);
    if (held >= 0)
        held -= (int64_t)others;
    if (peak > m->peak)
        m->peak = peak;
    if (held > m->held)
        m->held = held;
}

/* The timed pass of a config timed alone, into r. The memory peak is the
 * training step's: counted from here, after the checks let theirs go.
 * BK_* status. */
static int timed_pass(sweep *s, model *m, const dataset *d, const config *c, step_runner *run,
                      result_row *r, step_timing *t)
{
    measure_options mo = config_timing_options(s, c);
    progress_phase(s->progress, "warm-up and timed steps");
    watch_mark before, after; /* the peak and the machine beside the timed steps */
    config_watch_mark(s->watch, &before);
    step_memory mem = {-1, -1};
    step_memory_open(s->b);
    int rc = measure_steps(run, &mo, t);
    if (rc)
        return rc;
    step_memory_close(s->b, sweep_held_apart(s, c->dtype), &mem);
    config_watch_mark(s->watch, &after);
    return config_fill_timed(s, m, d, c, run, r, t, &before, &after, &mem);
}

/* The trace pass, into r; the first config whose pass succeeds writes
 * --trace. It keeps to the time budget too: fewer steps (one at least)
 * when a step is slow. BK_* status. */
static int traced_pass(sweep *s, const config *c, step_runner *run, result_row *r)
{
    const char *trace_file = s->trace_path[0] && !s->trace_written && s->writer
                                 ? s->trace_path : NULL;
    double budget_ms = c->budget.budget_s * 1e3;
    int steps = c->budget.trace_steps;
    double step_ms = r->step_ms_median;
    if (steps > 1 && step_ms * steps > budget_ms)
        steps = step_ms >= budget_ms ? 1 : (int)(budget_ms / step_ms);
    if (s->comm)
        steps = dp_agree_root_int(s->comm, steps); /* the ranks step together */
    char label[RESULT_TEXT_LEN * 5], config_label[RESULT_TEXT_LEN * 4];
    row_label_of(r, config_label, sizeof config_label);
    snprintf(label, sizeof label, "%s %s", r->backend, config_label);
    trace_pass_options to = {.steps = steps, .collector = s->col, .trace_file = trace_file,
                             .trace_label = label, .file_written = &s->trace_written};
    trace_pass_summary tp;
    progress_phase(s->progress, "trace pass");
    int rc = trace_pass_run(run, &to, &tp);
    if (!rc)
        row_fill_trace(r, &tp);
    return rc;
}

/* The counting pass, into r: two steps (one when a step is over half the
 * budget), one process only (ranks would have to step it together). */
static int counted_pass(sweep *s, const config *c, step_runner *run, result_row *r)
{
    if (s->comm)
        return BK_OK;
    progress_phase(s->progress, "counting GEMMs by shape and host syncs");
    count_result cr;
    int steps = r->step_ms_median * 2 > c->budget.budget_s * 1e3 ? 1 : 2;
    int rc = count_pass_run(run, steps, &cr);
    if (!rc)
        count_fill_row(r, &cr, fmax(r->probe_tflops_before, r->probe_tflops_after));
    return rc;
}

/* The gradient check's tolerance for the row: its dtype's, plus its
 * accumulator's (grad_dtype.h). */
static double check_tolerance(const config *c)
{
    return grad_dtype_tolerance(dtype_info_of(c->dtype), c->grad_dtype);
}

/* A row whose accumulator's error past its tolerance is the measurement
 * (grad_dtype.h: over_is_measured) and is past it: the row stays ok. Not a
 * non-finite error, and not a reduction known wrong (its error is the
 * reduction's). */
static int over_and_measured(const config *c, const result_row *r)
{
    return grad_dtype_info_of(c->grad_dtype)->over_is_measured &&
           reduction_info_of(c->reduction)->exact && isfinite(r->grad_rel_err) &&
           r->grad_rel_err > check_tolerance(c);
}

/* What the row's accumulator is, and whether its error is over the
 * tolerance, said right after the check: ahead of the timing's notes, so
 * that a note cut at its length keeps them. */
static void note_grad_dtype(const config *c, result_row *r)
{
    const grad_dtype_info *g = grad_dtype_info_of(c->grad_dtype);
    if (!g->rounds_bf16)
        return;
    row_note(r, "gradient held in %s: rounded after each micro-batch and emulated on fp32 "
             "storage (memory need fp32's)%s", g->head.name,
             c->dtype == DTYPE_FP32 ? "; fp32 compute: the accumulator alone rounds" : "");
    if (over_and_measured(c, r))
        row_note(r, "grad_rel_err %.3g over the %s accumulator's %.2g: the measurement and "
                 "not a failure", r->grad_rel_err, g->head.name, check_tolerance(c));
}

/* The row's status: the failure (which stops every rank: the others may
 * be waiting in an all-reduce for this one), the gradient check's verdict
 * where the reduction is exact (a measured accumulator's error noted, not
 * failed), the ranks' weights, or ok. */
static void verdict(sweep *s, const config *c, int rc, result_row *r)
{
    double tolerance = check_tolerance(c);
    char why[RESULT_TEXT_LEN * 2];
    if (rc && s->comm && s->comm->size > 1) {
        snprintf(why, sizeof why, "config %s %s %lldx%lld %s sync %s", r->model, r->dtype,
                 (long long)r->micro_batch, (long long)r->accum_steps, r->mode, r->sync);
        dp_fail(s->comm, why, s->b->error);
    }
    if (rc) {
        row_status_from(r, rc, s->b);
    } else if (reduction_info_of(c->reduction)->exact && !(r->grad_rel_err <= tolerance) &&
               !over_and_measured(c, r)) {
        snprintf(why, sizeof why, "gradient check failed: relative error %.3g over %.0e",
                 r->grad_rel_err, tolerance);
        row_set_status(r, STATUS_ERROR, why);
    } else if (s->comm && !(r->rank_weight_diff == 0)) {
        snprintf(why, sizeof why, "the ranks' weights differ after a step by up to %.3g",
                 r->rank_weight_diff);
        row_set_status(r, STATUS_ERROR, why);
    } else {
        snprintf(r->status, sizeof r->status, "%s", STATUS_OK);
        if (!reduction_info_of(c->reduction)->exact)
            row_note(r, "known-wrong reduction kept as a demonstration");
    }
}

/* With ranks: the model's state cut as the config's shard mode keeps it
 * (whole for none), before the config's memory peak starts. BK_* status;
 * setup makes every rank agree on it. */
static int shard_state(sweep *s, model *m, const config *c)
{
    comm *ranks = s->comm;
    if (!ranks)
        return BK_OK;
    const shard_info *si = shard_info_of(c->shard);
    int slices = si->slices_state;
    if (slices && (!ranks->ops->reduce_scatter_start ||
                   (si->gradient_slice && !ranks->ops->reduce_range_start))) {
        snprintf(s->b->error, sizeof s->b->error, "the %s engine has no reduce-scatter",
                 ranks->name);
        return BK_UNSUPPORTED;
    }
    return model_shard_state(m, ranks->rank, slices ? ranks->size : 1, si->gradient_slice);
}

/* Sharded rows say what their sync mode came to. */
static void note_shard(const config *c, int ranks, result_row *r)
{
    const shard_info *si = shard_info_of(c->shard);
    if (!si->slices_state)
        return;
    if (si->gradient_slice && !c->model->kind->reports_grad_ready)
        row_note(r, "model %s reports no gradient ranges: one bucket of the whole gradient, "
                 "reduced after its backward", c->model->kind->name);
    if (ranks < 2)
        row_note(r, "one rank: its slice is the whole state (reduce-scatter and all-gather "
                    "of one rank)");
    else if (si->gradient_slice && sync_info_of(c->sync)->every != 1)
        row_note(r, "the gradient is kept in slices: reduce-scattered after every "
                    "micro-batch whatever --sync %s says", sync_name(c->sync));
    else if (sync_info_of(c->sync)->buckets_in_backward)
        row_note(r, "sharded: one reduce-scatter after the last backward, nothing overlapped "
                    "(it takes every slice at once)");
}

size_t sweep_held_apart(const sweep *s, dtype dt)
{
    size_t apart = 0;
    for (int i = 0; i < DTYPE_COUNT; i++)
        apart += i == (int)dt ? 0 : s->held[i];
    return apart;
}

void config_use(sweep *s, const config *c, model *m)
{
    /* Validated when the sweep began (sweep_run): it cannot fail here. */
    (void)bk_use_dtype(s->b, c->dtype);
    s->b->mem_cap = s->mem_cap ? (size_t)s->mem_cap + sweep_held_apart(s, c->dtype) : 0;
    config_on_model(c, m);
}

/* A second arm's checks are its first's: the same config from the same
 * starting weights on the same examples computes the same gradient, and
 * its noise pass the same small batches' gradients (as many windows as
 * its time share allows), so running them again would only cost time. */
static void take_checks(const result_row *checked, result_row *r)
{
    result_copy_pass(r, checked, "check");
    row_note(r, "checks (gradient and noise scale) those of arm %lld, the same config",
             (long long)checked->arm);
}

int config_prepare(sweep *s, model *m, dataset *d, const config *c, step_runner *run,
                   result_row *r, size_t *runner_bytes, const result_row *checked)
{
    /* The model set for the row: its activations, made below, and the
     * dtype its runner accumulates the gradient in follow it. */
    config_use(s, c, m);
    /* The state, cut again, is what this dtype's model holds from here,
     * while the other dtypes' rows run too: sweep.held follows it, so
     * that what their rows leave out is what it holds under this row's
     * shard mode, not what it held whole. */
    size_t before = s->b->mem_in_use;
    int rc = shard_state(s, m, c);
    s->held[c->dtype] = s->held[c->dtype] + s->b->mem_in_use - before;
    before = s->b->mem_in_use;
    rc = setup(s, m, d, c, run, rc);
    *runner_bytes = !rc && s->b->mem_in_use > before ? s->b->mem_in_use - before : 0;
    if (rc) {
        row_status_from(r, rc, s->b);
        return 0;
    }
    if (too_slow(s, run, c, r, &rc)) {
        step_runner_free(run);
        return 0;
    }
    if (!rc && checked)
        take_checks(checked, r);
    else if (!rc)
        rc = check_gradient(s, m, d, c, run, r);
    if (!rc)
        note_grad_dtype(c, r);
    if (rc) {
        verdict(s, c, rc, r);
        step_runner_free(run);
        return 0;
    }
    return 1;
}

void config_finish(sweep *s, const config *c, step_runner *run, result_row *r, int rc)
{
    if (!rc && !*s->stop)
        rc = counted_pass(s, c, run, r);
    if (!rc && s->comm)
        note_shard(c, s->comm->size, r);
    if (!rc && c->budget.trace_steps > 0 && !*s->stop)
        rc = traced_pass(s, c, run, r);
    if (!rc)
        rc = s->b->ops->sync(s->b);
    verdict(s, c, rc, r);
    step_runner_free(run);
}

void config_range_push(const config *c)
{
    char name[200];
    snprintf(name, sizeof name, "config %s %s %dx%d %s %s%s%s%s%s", c->model->name,
             dtype_name(c->dtype), c->sp.micro, c->sp.accum, mode_name(c->mode),
             reduction_name(c->reduction), c->recompute ? " recompute " : "",
             c->recompute ? recompute_name(c->recompute) : "",
             c->grad_dtype ? " grad " : "", c->grad_dtype ? grad_dtype_name(c->grad_dtype) : "");
    range_push(name);
}

void config_time_prepared(sweep *s, model *m, dataset *d, const config *c, step_runner *run,
                          result_row *r)
{
    step_timing t;
    int rc = timed_pass(s, m, d, c, run, r, &t);
    config_finish(s, c, run, r, rc);
}

void config_run(sweep *s, model *m, dataset *d, const config *c, result_row *r)
{
    config_range_push(c);
    step_runner run;
    size_t runner_bytes;
    if (config_prepare(s, m, d, c, &run, r, &runner_bytes, NULL))
        config_time_prepared(s, m, d, c, &run, r);
    range_pop();
}
