/* "What the numbers show": sentences computed from the rows. Nothing here
 * is canned: every sentence states figures read from the CSV, and says
 * nothing where the figures are missing. Each reads a config once
 * (result_ran_once): a config timed twice, an A/A check, or run again with
 * --append, is neither an extra config in a count or a median nor a
 * second candidate for the fastest, the slowest or the highest MFU (the
 * worst gradient error reads every check). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_caps_meta.h"
#include "dtype_table.h"
#include "grad_dtype.h"
#include "paired.h"
#include "plural.h"
#include "ratio_text.h"
#include "reduction.h"
#include "report_parts.h"
#include "report_trust.h"
#include "row_compare.h"
#include "row_flags.h"
#include "row_index.h"
#include "stats.h"

/* A host enqueue time this close to the step time means the GPU waited for
 * the host: the step is launch-bound. */
#define LAUNCH_BOUND_SHARE 0.9

/* A change in busy % smaller than this many points is not worth a claim. */
#define BUSY_DROP_POINTS 5.0

/* Sentences about one A/B/C table: the range of step times across its splits. */
static void group_findings(const report_input *in, const report_group *g, doc *d)
{
    const csv_row *fast = NULL, *slow = NULL;
    size_t ok = 0;
    for (size_t j = 0; j < g->n; j++) {
        const csv_row *r = &in->rows[g->idx[j]];
        if (!result_ran_once(r))
            continue;
        ok++;
        if (!fast || r->step_ms_median < fast->step_ms_median)
            fast = r;
        if (!slow || r->step_ms_median > slow->step_ms_median)
            slow = r;
    }
    if (ok < 2)
        return;
    /* The ratio the verdict below is drawn from (row_compare.h): paired
     * per round where the two were timed together, which is the figure the
     * run's summary printed, not the ratio of their medians. */
    paired_ratio pr = row_ratio(fast, slow);
    char ratio[128];
    if (pr.lo > 0 && pr.hi >= pr.lo)
        ratio_text(ratio, sizeof ratio, pr.ratio, pr.lo, pr.hi);
    else
        ratio_text(ratio, sizeof ratio, pr.ratio, NAN, NAN);
    /* The fastest and slowest by their medians: where the rule does not
     * separate them, say which way it leaves them (the same within the
     * threshold, or not yet separated), as the ratio's line does. */
    paired_verdict v = row_verdict(fast, slow);
    char rule[200] = "";
    if (paired_not_separated(v))
        snprintf(rule, sizeof rule, "; by the paired rule the two are %s",
                 paired_verdict_words(v, PAIRED_THRESHOLD).s);
    else if (fast->accum_steps > 1 && g->k1)
        snprintf(rule, sizeof rule, " (accumulating beats the single pass here)");
    doc_bullet(d,
               "At effective batch %lld, model %s (%s): the fastest split is %s at %s ms per "
               "step and the slowest is %s at %s ms, %s as long for the same arithmetic%s.",
               (long long)fast->effective_batch, fast->model, rp_series(fast).s,
               rp_split(fast).s,
               rp_num(fast->step_ms_median, 4).s, rp_split(slow).s,
               rp_num(slow->step_ms_median, 4).s, ratio, rule);
    if (!g->k1)
        for (size_t j = 0; j < g->n; j++) {
            const csv_row *r = &in->rows[g->idx[j]];
            if (r->accum_steps == 1)
                doc_bullet(d, "Model %s has no K=1 step time at effective batch %lld (%s: %s), "
                              "so its ratios to the single pass are not shown.",
                           r->model, (long long)r->effective_batch, r->status,
                           *r->note ? r->note : "no reason given");
        }
}

static int host_computes_ops(const report_input *in, const csv_row *r);

/* A median this close to the K x pass estimate (in %) is no claim either
 * way: the comparisons' practical threshold. */
#define NAIVE_CLOSE_PCT (100 * PAIRED_THRESHOLD)

static void naive_finding(const report_input *in, doc *d)
{
    size_t n = in->t->rows, m = 0;
    double *dev = malloc((n ? n : 1) * sizeof *dev);
    if (!dev)
        return;
    const csv_row *worst = NULL;
    size_t ragged = 0; /* timed, but with no estimate: the last pass untimed */
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &in->rows[i];
        ragged += result_ran_once(r) && r->pass_ms > 0 && isnan(rp_naive_ms(r));
        if (!result_ran_once(r) || !(rp_naive_ms(r) > 0) || r->accum_steps < 1)
            continue;
        dev[m++] = (r->step_ms_median / rp_naive_ms(r) - 1) * 100;
        if (!worst || fabs(dev[m - 1]) > fabs(worst->step_ms_median / rp_naive_ms(worst) - 1) * 100)
            worst = r;
    }
    if (!m) {
        doc_bullet(d, ragged ? "Every split that ran is ragged (its last pass smaller, and "
                               "not timed alone), so there is no naive K x pass prediction "
                               "to compare with."
                             : "The one-pass time (pass_ms) was not measured, so there is no "
                               "naive K x pass prediction to compare with.");
        free(dev);
        return;
    }
    qsort(dev, m, sizeof *dev, stats_compare_doubles);
    double med = m % 2 ? dev[m / 2] : (dev[m / 2 - 1] + dev[m / 2]) / 2;
    doc_bullet(d,
               "Against the naive estimate K x one-pass time, the measured steps range from "
               "%s to %s (median %s over %zu %s; furthest: %s %s %s%s at %s). %s",
               rp_pct(dev[0]).s, rp_pct(dev[m - 1]).s, rp_pct(med).s, m,
               plural((long long)m, "config", "configs"),
               worst->model, rp_split(worst).s, worst->mode, rp_levers(worst).s,
               rp_pct((worst->step_ms_median / rp_naive_ms(worst) - 1) * 100).s,
               /* a median near 0 between configs far off on both sides is
                * their cancelling, not steps that take K passes */
               fabs(med) < NAIVE_CLOSE_PCT && dev[0] < -NAIVE_CLOSE_PCT &&
                       dev[m - 1] > NAIVE_CLOSE_PCT
                   ? "The configs lie beyond the practical threshold on both sides of the "
                     "estimate, so the median's closeness to it says nothing of any one."
               : fabs(med) < NAIVE_CLOSE_PCT
                   ? "Steps take about K passes: the median is within the practical threshold "
                     "of the estimate."
               : med > 0 ? "The estimate leaves out the optimizer step and per-step overhead."
               /* a backend that computes each operation as it issues it
                * runs no two passes at once: no overlap to credit */
               : host_computes_ops(in, worst)
                   ? "Steps run faster than K separate passes, though on this backend the "
                     "host computes each operation as it issues it and no two passes "
                     "overlap: the one-pass time, measured apart, ran slower than a pass "
                     "inside the step."
                   : "Steps run faster than K separate passes: work overlaps across "
                     "passes.");
    free(dev);
}

/* The group (in the main mode) whose K range is widest: the clearest view
 * of what accumulation adds. */
static const report_group *widest(const report_input *in, const report_group *g, size_t ng,
                                  const char *mode, double (*value)(const csv_row *),
                                  const csv_row **lo, const csv_row **hi)
{
    const report_group *best = NULL;
    double best_span = 0;
    for (size_t k = 0; k < ng; k++) {
        const csv_row *a = NULL, *b = NULL;
        for (size_t j = 0; j < g[k].n; j++) {
            const csv_row *r = &in->rows[g[k].idx[j]];
            if (!result_ran_once(r) || strcmp(r->mode, mode) || isnan(value(r)))
                continue;
            if (!a || r->accum_steps < a->accum_steps)
                a = r;
            if (!b || r->accum_steps > b->accum_steps)
                b = r;
        }
        if (a && b && a != b && (double)b->accum_steps / (double)a->accum_steps > best_span) {
            best_span = (double)b->accum_steps / (double)a->accum_steps;
            best = &g[k];
            *lo = a;
            *hi = b;
        }
    }
    return best;
}

/* The columns the findings look at, for widest() and any_measured(). */
static double v_kernels(const csv_row *r) { return r->kernels_per_step; }
static double v_dispatches(const csv_row *r) { return r->dispatches_per_step; }
static double v_busy(const csv_row *r) { return r->gpu_busy_pct; }

/* Whether row r's backend computes each operation on the host as it issues
 * it (its dispatch records are its device work), from the run's
 * backend_caps line; files from before that line knew one such backend,
 * cpu. */
static int host_computes_ops(const report_input *in, const csv_row *r)
{
    int has = csv_meta_has_word(in->t, BACKEND_CAPS_KEY, BACKEND_CAPS_DISPATCH_IS_DEVICE_WORK);
    return has >= 0 ? has : !strcmp(r->backend, "cpu");
}

static int any_measured(const report_input *in, double (*value)(const csv_row *))
{
    for (size_t i = 0; i < in->t->rows; i++)
        if (result_ran_once(&in->rows[i]) && !isnan(value(&in->rows[i])))
            return 1;
    return 0;
}

/* How the launches per step grow with K, in the group whose K range is
 * widest. */
static void launch_count_finding(const report_input *in, const report_group *g, size_t ng,
                                 const char *mode, doc *d)
{
    /* kernels from the trace pass where there was one, else the operations
     * the harness dispatched (measured on every backend) */
    const csv_row *lo = NULL, *hi = NULL;
    double (*value)(const csv_row *) = v_kernels;
    const char *what = "kernels (traced)";
    if (!widest(in, g, ng, mode, value, &lo, &hi)) {
        value = v_dispatches;
        what = "device operations (dispatched)";
        widest(in, g, ng, mode, value, &lo, &hi);
    }
    if (lo && hi) {
        double a = value(lo), b = value(hi);
        doc_bullet(d,
                   "Model %s issues %s %s per step at K=%lld and %s at K=%lld (%sx for %sx the "
                   "passes): %s",
                   lo->model, rp_count(a).s, what, (long long)lo->accum_steps, rp_count(b).s,
                   (long long)hi->accum_steps, rp_num(b / a, 3).s,
                   rp_num((double)hi->accum_steps / (double)lo->accum_steps, 3).s,
                   host_computes_ops(in, lo)
                       ? "each pass issues its operations again; on this backend each is "
                         "computed as it is issued, so the count is work, not launch overhead."
                       : "each pass launches its kernels again, so launch overhead grows with "
                         "K while the arithmetic per step stays the same.");
    }
}

/* How busy the device is at the largest and the smallest micro-batch, or
 * why that was not measured. */
static void busy_finding(const report_input *in, const report_group *g, size_t ng,
                         const char *mode, doc *d)
{
    const csv_row *lo = NULL, *hi = NULL;
    if (widest(in, g, ng, mode, v_busy, &lo, &hi)) {
        /* hi has the most passes, so the smallest micro-batch */
        double drop = lo->gpu_busy_pct - hi->gpu_busy_pct;
        const char *who = host_computes_ops(in, lo) ? "Device (CPU backend)" : "GPU";
        if (rp_traced_apart(lo) || rp_traced_apart(hi)) {
            doc_bullet(d,
                       "%s busy time is %s%% of the traced step at micro-batch %lld and %s%% at "
                       "%lld (model %s, from the trace pass), but those traced steps took %s "
                       "and %s ms against %s and %s ms timed (over %gx): the shares are of "
                       "steps unlike the timed ones, and say nothing of how busy the micro-batch "
                       "keeps the device.",
                       who, rp_num(hi->gpu_busy_pct, 3).s, (long long)hi->micro_batch,
                       rp_num(lo->gpu_busy_pct, 3).s, (long long)lo->micro_batch, lo->model,
                       rp_num(hi->cupti_step_ms, 3).s, rp_num(lo->cupti_step_ms, 3).s,
                       rp_num(hi->step_ms_median, 3).s, rp_num(lo->step_ms_median, 3).s,
                       RP_TRACE_STEP_APART);
            return;
        }
        doc_bullet(d,
                   "%s busy time is %s%% of the step at micro-batch %lld and %s%% at %lld "
                   "(model %s, from the trace pass): %s",
                   who, rp_num(hi->gpu_busy_pct, 3).s, (long long)hi->micro_batch,
                   rp_num(lo->gpu_busy_pct, 3).s, (long long)lo->micro_batch, lo->model,
                   drop >= BUSY_DROP_POINTS && host_computes_ops(in, lo)
                       /* no device waits where the host computes each op: the
                        * A/B/C verdict says so, and this must not say otherwise */
                       ? "smaller micro-batches leave more of the step between operations, "
                         "which on this backend is the host's own work, not a device left "
                         "idle."
                   : drop >= BUSY_DROP_POINTS
                       ? "smaller micro-batches leave the device idle for more of the step."
                   : drop <= -BUSY_DROP_POINTS
                       ? "the device is busier at the smaller micro-batch."
                       : "the micro-batch hardly changes how busy the device is.");
    }
    else
        doc_bullet(d, "GPU busy %% was not measured in this run (%s).",
                   any_measured(in, v_kernels) ? "its trace pass recorded dispatches, not "
                                                 "device activity"
                                               : "no trace pass");
}

/* Which configs are launch-bound: the host's enqueue time a large share
 * of the step. */
static void launch_bound_finding(const report_input *in, doc *d)
{
    /* Where the host does the work while it "enqueues" it (the CPU
     * backend), enqueue time is step time and says nothing about launch
     * overhead. */
    size_t ok = 0, bound = 0, on_cpu = 0;
    const csv_row *example = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (!result_ran_once(r) || isnan(r->host_enqueue_ms))
            continue;
        if (host_computes_ops(in, r)) {
            on_cpu++;
            continue;
        }
        ok++;
        if (r->host_enqueue_ms >= LAUNCH_BOUND_SHARE * r->step_ms_median) {
            bound++;
            if (!example || r->accum_steps > example->accum_steps)
                example = r;
        }
    }
    if (example)
        doc_bullet(d,
                   "In %zu of %zu %s the host's enqueue time is at least %.0f%% of the "
                   "step (e.g. %s %s %s: %s of %s ms): %s launch-bound, the GPU "
                   "waits for the host.",
                   bound, ok, plural((long long)ok, "config", "configs"),
                   LAUNCH_BOUND_SHARE * 100, example->model, rp_split(example).s,
                   example->mode, rp_num(example->host_enqueue_ms, 3).s,
                   rp_num(example->step_ms_median, 3).s,
                   plural((long long)bound, "that step is", "those steps are"));
    else if (ok)
        doc_bullet(d, "The host's enqueue time stays under %.0f%% of the step in %s %zu "
                      "%s: none is launch-bound.", LAUNCH_BOUND_SHARE * 100,
                   plural((long long)ok, "its", "all"), ok,
                   plural((long long)ok, "config", "configs"));
    if (on_cpu)
        doc_bullet(d, "%zu %s ran on the CPU backend, where the host computes each "
                      "operation as it issues it: enqueue time equals step time there, so "
                      "launch-boundness is judged on a GPU only.", on_cpu,
                   plural((long long)on_cpu, "config", "configs"));
}

static void launch_findings(const report_input *in, const report_group *g, size_t ng,
                            const char *mode, doc *d)
{
    launch_count_finding(in, g, ng, mode, d);
    busy_finding(in, g, ng, mode, d);
    launch_bound_finding(in, d);
}

static void mfu_finding(const report_input *in, doc *d)
{
    const csv_row *best = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (result_ran_once(r) && !isnan(r->mfu_pct) && (!best || r->mfu_pct > best->mfu_pct))
            best = r;
    }
    if (!best)
        return;
    double probe = fmax(best->probe_tflops_before, best->probe_tflops_after);
    if (probe > 0)
        doc_bullet(d, "The highest MFU is %s%% (model %s, %s, %s%s): %s TFLOP/s of the %s TFLOP/s "
                      "peak GEMM rate probed beside it.",
                   rp_num(best->mfu_pct, 3).s, best->model, rp_split(best).s, best->mode,
                   rp_levers(best).s,
                   rp_num(best->tflops, 4).s, rp_num(probe, 4).s);
    else
        doc_bullet(d, "The highest MFU is %s%% (model %s, %s, %s%s): %s TFLOP/s of the %s TFLOP/s "
                      "peak GEMM rate measured in this run.",
                   rp_num(best->mfu_pct, 3).s, best->model, rp_split(best).s, best->mode,
                   rp_levers(best).s,
                   rp_num(best->tflops, 4).s, rp_meta(in->t, "peak_gemm_tflops", "(unrecorded)"));
    /* what the row says against what its own columns give: a file edited
     * by hand, or a peak that read low, must not pass as a finding */
    double peak = probe > 0 ? probe : atof(rp_meta(in->t, "peak_gemm_tflops", "0"));
    double implied = peak > 0 && best->tflops > 0 ? 100 * best->tflops / peak : NAN;
    if (best->mfu_pct > 100)
        doc_bullet(d, "**That MFU cannot be true:** no step runs faster than the peak GEMM "
                      "rate; the peak it is measured against read low, or the file was "
                      "edited.");
    if (!isnan(implied) && fabs(best->mfu_pct - implied) > 0.01 * fmax(implied, 1e-9))
        doc_bullet(d, "**Its columns disagree:** %s TFLOP/s of %s TFLOP/s is %s%%, not the "
                      "%s%% its mfu_pct says.",
                   rp_num(best->tflops, 4).s, rp_num(peak, 4).s, rp_num(implied, 3).s,
                   rp_num(best->mfu_pct, 3).s);
}

/* The worst measured gradient error among the rows whose reduction is
 * exact (exact = 1: the worst against its own tolerance, a bf16
 * accumulator's wider than fp32's), a known bug (exact = 0), or one this
 * build does not know (exact = -1: a file from another version, neither
 * judged against the tolerance nor called a bug), or NULL. */
static const csv_row *worst_grad(const report_input *in, int exact)
{
    const csv_row *worst = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        /* Any row that ran: timing noise does not touch a gradient, and a
         * config run again checked its gradient again */
        if (result_measured(r) && !isnan(r->grad_rel_err) &&
            (axis_find(&reduction_axis, r->reduction) < 0
                 ? -1
                 : reduction_exact_named(r->reduction)) == exact &&
            (!worst || (exact == 1 ? r->grad_rel_err / rp_grad_tolerance(r) >
                                         worst->grad_rel_err / rp_grad_tolerance(worst)
                                   : r->grad_rel_err > worst->grad_rel_err)))
            worst = r;
    }
    return worst;
}

static void grad_finding(const report_input *in, doc *d)
{
    const csv_row *worst = worst_grad(in, 1), *bug = worst_grad(in, 0);
    if (bug)
        doc_bullet(d, "The known-wrong reductions are off the full-batch gradient by up to %s "
                      "(%s reduction, model %s, %s): what that bug does, kept as a "
                      "demonstration.",
                   rp_num(bug->grad_rel_err, 2).s, bug->reduction, bug->model,
                   rp_split(bug).s);
    const csv_row *unknown = worst_grad(in, -1);
    if (!worst && unknown)
        doc_bullet(d, "The gradient check (grad_rel_err) was measured only for a reduction this "
                      "version does not know (%s): up to %s (model %s, %s), not judged against a "
                      "tolerance.",
                   unknown->reduction, rp_num(unknown->grad_rel_err, 2).s, unknown->model,
                   rp_split(unknown).s);
    else if (!worst)
        doc_bullet(d, bug ? "No row of an exact reduction has a gradient check (grad_rel_err): "
                            "whether accumulation computed the full-batch gradient is not "
                            "measured here."
                          : "The gradient check (grad_rel_err) was not measured.");
    if (!worst)
        return;
    double tol = rp_grad_tolerance(worst);
    char held[64]; /* whose tolerance: the dtype's, and a rounding accumulator's */
    int g = *worst->grad_dtype ? axis_find(&grad_dtype_axis, worst->grad_dtype) : -1;
    int rounds = g >= 0 && grad_dtype_info_of((grad_dtype)g)->rounds_bf16;
    snprintf(held, sizeof held, "%s%s%s%s", worst->dtype, rounds ? " + " : "",
             rounds ? worst->grad_dtype : "", rounds ? "-accumulator" : "");
    doc_bullet(d,
               "The largest relative error of the accumulated gradient against the full-batch "
               "gradient is %s (model %s, %s), %s the %s tolerance of %s%s",
               rp_num(worst->grad_rel_err, 2).s, worst->model, rp_split(worst).s,
               worst->grad_rel_err <= tol ? "within" : "beyond", held,
               rp_num(tol, rounds ? 2 : 1).s,
               worst->grad_rel_err <= tol
                   ? ": accumulation computed the same gradient."
                   : ": check the loss normalisation (divide by the window's total, not by K).");
}

/* Every other mode against the main one, in the order the file first has
 * them (the sweep's order), each row against the first row of the same
 * config in the main mode. Linear: the main mode's rows are found by a hash
 * of their config but for the mode, and each mode's rows are chained. */
static void mode_findings(const report_input *in, const char *mode, doc *d)
{
    size_t n = in->t->rows, one = n ? n : 1;
    double *ratio = malloc(one * sizeof *ratio);
    size_t *next = malloc(one * sizeof *next), *last = malloc(one * sizeof *last);
    row_key by_mode = row_key_column("mode"), but_mode = row_key_config_but("mode");
    row_index modes, main_rows;
    int ok = !row_index_init(&modes, &by_mode, in->rows, n) &&
             !row_index_init(&main_rows, &but_mode, in->rows, n) && ratio && next && last;
    /* next[i]: the next row in i's mode; last[first]: the latest so far */
    for (size_t i = 0; ok && i < n; i++) {
        size_t first = row_index_add(&modes, i);
        next[i] = ROW_NONE;
        if (first != i)
            next[last[first]] = i;
        last[first] = i;
        if (result_ran_once(&in->rows[i]) && !strcmp(in->rows[i].mode, mode))
            row_index_add(&main_rows, i);
    }
    for (size_t k = 0; ok && k < n; k++) {
        const char *other = in->rows[k].mode;
        if (row_index_find(&modes, &in->rows[k]) != k || !strcmp(other, mode))
            continue; /* not the first row of another mode */
        size_t m = 0;
        for (size_t i = k; i != ROW_NONE; i = next[i]) {
            const csv_row *r = &in->rows[i];
            if (!result_ran_once(r))
                continue;
            size_t j = row_index_find(&main_rows, r);
            if (j != ROW_NONE)
                ratio[m++] = r->step_ms_median / in->rows[j].step_ms_median;
        }
        if (!m)
            continue;
        qsort(ratio, m, sizeof *ratio, stats_compare_doubles);
        double med = m % 2 ? ratio[m / 2] : (ratio[m / 2 - 1] + ratio[m / 2]) / 2;
        /* the median with its distribution-free interval over the configs
         * (it once stood bare, a figure with no interval beside the report's
         * others), then the range; the range's decimals every ratio prints
         * with (1.004x, not 1x), the two alike (not "from 1.034x to 1.12x") */
        double lo = NAN, hi = NAN, cover = NAN;
        if (m > 1)
            median_ci_sorted(ratio, m, MEDIAN_CI_LEVEL, &lo, &hi, &cover);
        char med_text[96], cover_text[64] = "";
        ratio_text(med_text, sizeof med_text, med, lo, hi);
        if (m > 1) /* "95%" where it reaches it, as the step times' intervals say */
            snprintf(cover_text, sizeof cover_text, ", its %.3g%% interval over them",
                     cover >= MEDIAN_CI_LEVEL - 1e-9 ? 100 * MEDIAN_CI_LEVEL : 100 * cover);
        int dec = ratio_decimals(med, ratio[0], ratio[m - 1]);
        doc_bullet(d, "%s mode takes %s the %s step time (median over %zu %s measured "
                      "in both%s; from %.*fx to %.*fx).",
                   other, med_text, mode, m, plural((long long)m, "config", "configs"),
                   cover_text, dec, ratio[0], dec, ratio[m - 1]);
    }
    row_index_free(&modes);
    row_index_free(&main_rows);
    free(ratio);
    free(next);
    free(last);
}

void report_findings(const report_input *in, const report_group *g, size_t ng,
                     const char *mode, doc *d)
{
    size_t ran = 0;
    for (size_t i = 0; i < in->t->rows; i++)
        ran += result_ran(&in->rows[i]);
    if (!ran) {
        doc_bullet(d, "No config in this file ran (%zu %s, none with status ok and a step "
                      "time): there is nothing to measure against.", in->t->rows,
                   plural((long long)in->t->rows, "row", "rows"));
        return;
    }
    char repeats[1200];
    const char *name = strrchr(in->csv_path, '/') ? strrchr(in->csv_path, '/') + 1 : in->csv_path;
    row_index_repeats_text(in->rows, in->t->rows, name, repeats, sizeof repeats);
    if (*repeats)
        doc_bullet(d, "%s (by the findings, the verdict, the fastest under a cap, the "
                      "frontier and the charts); the tables list every row.", repeats);
    report_trust_findings(in, d);
    report_round_shifts(in, d); /* what moved under every config at once */
    for (size_t k = 0; k < ng; k++)
        if (g[k].n && !strcmp(in->rows[g[k].idx[0]].mode, mode))
            group_findings(in, &g[k], d);
    naive_finding(in, d);
    launch_findings(in, g, ng, mode, d);
    mfu_finding(in, d);
    grad_finding(in, d);
    mode_findings(in, mode, d);
    report_dp_findings(in, d);
    if (ran < in->t->rows)
        /* rows, not configs: a config timed twice is one config of two rows */
        doc_bullet(d, "%zu of %zu %s did not run (listed below with the reason).",
                   in->t->rows - ran, in->t->rows, plural((long long)in->t->rows, "row", "rows"));
}
