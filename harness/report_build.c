/* The report's content: the environment, the A/B/C table of every
 * effective batch, the memory-cap advice and sentences computed from the
 * numbers (see report.h). Nothing here is canned: every sentence states a
 * figure read from the rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The relative gradient error accumulation may show in each dtype before
 * the report calls it wrong: rounding of a K-term sum in that precision. */
static double grad_tolerance(const char *dtype)
{
    if (!strcmp(dtype, "bf16"))
        return 1e-2;
    if (!strcmp(dtype, "tf32"))
        return 1e-3;
    return 1e-5;
}

/* A host enqueue time this close to the step time means the GPU waited for
 * the host: the step is launch-bound. */
#define LAUNCH_BOUND_SHARE 0.9

/* One A/B/C table: the splits of one effective batch for one model, mode,
 * reduction, dtype and backend. */
static int same_group(const result_row *a, const result_row *b)
{
    return a->effective_batch == b->effective_batch && !strcmp(a->model, b->model) &&
           !strcmp(a->mode, b->mode) && !strcmp(a->reduction, b->reduction) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->backend, b->backend);
}

typedef struct group {
    size_t *idx; /* rows of the group, micro-batch descending (K ascending) */
    size_t n;
    const result_row *k1; /* the no-accumulation row, when it ran */
} group;

static const result_row *R; /* the rows, for the sort */

static int by_micro_desc(const void *a, const void *b)
{
    int64_t ma = R[*(const size_t *)a].micro_batch, mb = R[*(const size_t *)b].micro_batch;
    return ma < mb ? 1 : ma > mb ? -1 : 0;
}

/* The groups, effective batch ascending, then in file order. */
static group *make_groups(const result_row *rows, size_t n, size_t *count)
{
    group *g = calloc(n ? n : 1, sizeof *g);
    size_t *leader = calloc(n ? n : 1, sizeof *leader);
    size_t ng = 0;
    if (!g || !leader) {
        free(g);
        free(leader);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < ng && !same_group(&rows[leader[k]], &rows[i]))
            k++;
        if (k == ng)
            leader[ng++] = i;
    }
    /* insertion sort of the leaders by effective batch keeps file order */
    for (size_t a = 1; a < ng; a++)
        for (size_t b = a; b > 0 && rows[leader[b - 1]].effective_batch >
                                        rows[leader[b]].effective_batch; b--) {
            size_t t = leader[b];
            leader[b] = leader[b - 1];
            leader[b - 1] = t;
        }
    for (size_t k = 0; k < ng; k++) {
        g[k].idx = calloc(n, sizeof *g[k].idx);
        if (!g[k].idx)
            continue;
        for (size_t i = 0; i < n; i++)
            if (same_group(&rows[leader[k]], &rows[i]))
                g[k].idx[g[k].n++] = i;
        R = rows;
        qsort(g[k].idx, g[k].n, sizeof *g[k].idx, by_micro_desc);
        for (size_t j = 0; j < g[k].n; j++) {
            const result_row *r = &rows[g[k].idx[j]];
            if (r->accum_steps == 1 && result_ran(r))
                g[k].k1 = r;
        }
    }
    free(leader);
    *count = ng;
    return g;
}

static void free_groups(group *g, size_t n)
{
    for (size_t k = 0; g && k < n; k++)
        free(g[k].idx);
    free(g);
}

/* ------------------------------------------------------------- formatting */

typedef struct { char s[64]; } txt;

static txt num(double v, int sig)
{
    txt t;
    fmt_sig(t.s, sizeof t.s, v, sig);
    return t;
}

/* A count: whole numbers print whole ("216", not "216.0"). */
static txt count(double v)
{
    txt t;
    if (!isnan(v) && v == floor(v) && fabs(v) < 1e15)
        snprintf(t.s, sizeof t.s, "%.0f", v);
    else
        fmt_sig(t.s, sizeof t.s, v, 4);
    return t;
}

static txt split_name(const result_row *r)
{
    txt t;
    if (r->last_micro_batch > 0 && r->last_micro_batch != r->micro_batch)
        snprintf(t.s, sizeof t.s, "%lldx%lld (last %lld)", (long long)r->micro_batch,
                 (long long)r->accum_steps, (long long)r->last_micro_batch);
    else
        snprintf(t.s, sizeof t.s, "%lldx%lld", (long long)r->micro_batch,
                 (long long)r->accum_steps);
    return t;
}

static txt bytes(int64_t b)
{
    txt t;
    if (b < 0)
        snprintf(t.s, sizeof t.s, "-");
    else if (b >= (int64_t)1 << 30)
        snprintf(t.s, sizeof t.s, "%.2f GiB", (double)b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(t.s, sizeof t.s, "%.1f MiB", (double)b / (1 << 20));
    else
        snprintf(t.s, sizeof t.s, "%.1f KiB", (double)b / 1024);
    return t;
}

static txt signed_pct(double v)
{
    txt t;
    if (isnan(v))
        snprintf(t.s, sizeof t.s, "-");
    else
        snprintf(t.s, sizeof t.s, "%+.1f%%", v);
    return t;
}

/* The naive prediction of a step: K passes at the one-pass time. */
static double naive_ms(const result_row *r)
{
    return (double)r->accum_steps * r->pass_ms;
}

static const char *meta_or(const csv_table *t, const char *key, const char *dflt)
{
    const char *v = csv_meta_get(t, key);
    return v && *v ? v : dflt;
}

/* The mode most rows ran in (the sweep's own axis; the rest are the modes
 * comparison). */
static const char *main_mode(const result_row *rows, size_t n)
{
    const char *best = n ? rows[0].mode : "async";
    size_t best_n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += !strcmp(rows[i].mode, rows[j].mode);
        if (c > best_n || (c == best_n && !strcmp(rows[i].mode, "async"))) {
            best = rows[i].mode;
            best_n = c;
        }
    }
    return best;
}

/* ------------------------------------------------------------- sections */

static void environment(const report_input *in, doc *d)
{
    const csv_table *t = in->t;
    doc_heading(d, 2, "Environment");
    static const char *const head[] = {"what", "value", NULL};
    table *tb = doc_table(d, "ll", head);
    if (!tb)
        return;
    const char *device = meta_or(t, "device", t->rows ? in->rows[0].device : "-");
    table_add(tb, "device");
    table_addf(tb, "%s (backend %s)", device, meta_or(t, "backend", "-"));
    table_add(tb, "library");
    table_add(tb, meta_or(t, "library", "-"));
    table_add(tb, "BLAS core");
    table_add(tb, meta_or(t, "blas_core", "-"));
    table_add(tb, "peak GEMM rate");
    table_addf(tb, "%s TFLOP/s measured in this run (%s); datasheet %s TFLOP/s",
               meta_or(t, "peak_gemm_tflops", "-"), meta_or(t, "peak_gemm_shape", "shape unknown"),
               meta_or(t, "datasheet_tflops", "unknown"));
    table_add(tb, "dtype, optimizer");
    table_addf(tb, "%s, %s", meta_or(t, "dtype", "-"), meta_or(t, "optimizer", "-"));
    table_add(tb, "profile, seed");
    table_addf(tb, "%s, %s", meta_or(t, "profile", "-"), meta_or(t, "seed", "-"));
    table_add(tb, "tool, revision");
    table_addf(tb, "accubench %s, %s", meta_or(t, "tool_version", "-"),
               meta_or(t, "git_revision", "-"));
    table_add(tb, "date, host");
    table_addf(tb, "%s, %s", meta_or(t, "date", "-"), meta_or(t, "host", "-"));
    table_add(tb, "command");
    table_add(tb, meta_or(t, "command", "-"));
    table_add(tb, "memory cap");
    table_add(tb, in->mem_cap >= 0 ? bytes(in->mem_cap).s : "none");
    table_add(tb, "source");
    table_add(tb, in->csv_path);
}

static void abc_table(const report_input *in, const group *g, doc *d)
{
    const result_row *first = &in->rows[g->idx[0]];
    doc_heading(d, 3, "Effective batch %lld: model %s, %s, %s reduction (%s, %s)",
                (long long)first->effective_batch, first->model, first->mode, first->reduction,
                first->dtype, first->backend);
    static const char *const head[] = {
        "micro x K", "step ms", "noise %", "K x pass ms", "vs naive", "vs K=1",
        "samples/s", "dispatches/step", "kernels/step", "busy %", "MFU %", "grad err",
        "memory need", NULL,
    };
    table *tb = doc_table(d, "lrrrrrrrrrrrr", head);
    if (!tb)
        return;
    for (size_t j = 0; j < g->n; j++) {
        const result_row *r = &in->rows[g->idx[j]];
        table_add(tb, split_name(r).s);
        if (!result_ran(r)) {
            table_addf(tb, "%s: %s", r->status, *r->note ? r->note : "no reason given");
            for (size_t c = 2; c < tb->cols - 1; c++) /* all but the memory need */
                table_add(tb, "-");
            table_add(tb, bytes(r->mem_need_bytes).s);
            continue;
        }
        double naive = naive_ms(r);
        table_add(tb, num(r->step_ms_median, 4).s);
        table_add(tb, num(r->step_noise_pct, 2).s);
        table_add(tb, num(naive, 4).s);
        table_add(tb, signed_pct((r->step_ms_median / naive - 1) * 100).s);
        if (g->k1)
            table_addf(tb, "%sx", num(r->step_ms_median / g->k1->step_ms_median, 3).s);
        else
            table_add(tb, "-");
        table_add(tb, num(r->samples_per_s, 4).s);
        table_add(tb, count(r->dispatches_per_step).s);
        table_add(tb, count(r->kernels_per_step).s);
        table_add(tb, num(r->gpu_busy_pct, 3).s);
        table_add(tb, num(r->mfu_pct, 3).s);
        table_add(tb, r->grad_rel_err == 0 ? "0" : num(r->grad_rel_err, 2).s);
        table_add(tb, bytes(r->mem_need_bytes).s);
    }
}

static void abc_tables(const report_input *in, const group *g, size_t ng, doc *d)
{
    doc_heading(d, 2, "Splits of each effective batch");
    doc_para(d, "One table per effective batch and model: each split's median step time, its "
                "noise, the naive prediction (K x the one-pass time pass_ms at that micro-batch) "
                "and how far the measurement is from it, the ratio to the no-accumulation "
                "split (K=1), throughput, device operations per step (dispatched by the harness; "
                "kernels: counted by the trace pass), GPU busy %%, MFU and the gradient error "
                "against the full batch. '-' is not measured.");
    for (size_t k = 0; k < ng; k++)
        if (g[k].n)
            abc_table(in, &g[k], d);
}

/* Sentences about one group: the range of step times across its splits. */
static void group_findings(const report_input *in, const group *g, doc *d)
{
    const result_row *fast = NULL, *slow = NULL;
    size_t ok = 0;
    for (size_t j = 0; j < g->n; j++) {
        const result_row *r = &in->rows[g->idx[j]];
        if (!result_ran(r))
            continue;
        ok++;
        if (!fast || r->step_ms_median < fast->step_ms_median)
            fast = r;
        if (!slow || r->step_ms_median > slow->step_ms_median)
            slow = r;
    }
    if (ok < 2)
        return;
    doc_bullet(d,
               "At effective batch %lld, model %s (%s): the fastest split is %s at %s ms per "
               "step and the slowest is %s at %s ms, %sx as long for the same arithmetic%s.",
               (long long)fast->effective_batch, fast->model, fast->mode, split_name(fast).s,
               num(fast->step_ms_median, 4).s, split_name(slow).s,
               num(slow->step_ms_median, 4).s,
               num(slow->step_ms_median / fast->step_ms_median, 3).s,
               fast->accum_steps > 1 && g->k1
                   ? " (accumulating beats the single pass here)"
                   : "");
    if (!g->k1)
        for (size_t j = 0; j < g->n; j++) {
            const result_row *r = &in->rows[g->idx[j]];
            if (r->accum_steps == 1)
                doc_bullet(d, "Model %s has no K=1 step time at effective batch %lld (%s: %s), "
                              "so its ratios to the single pass are not shown.",
                           r->model, (long long)r->effective_batch, r->status,
                           *r->note ? r->note : "no reason given");
        }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void naive_finding(const report_input *in, doc *d)
{
    size_t n = in->t->rows, m = 0;
    double *dev = malloc((n ? n : 1) * sizeof *dev);
    if (!dev)
        return;
    const result_row *worst = NULL;
    for (size_t i = 0; i < n; i++) {
        const result_row *r = &in->rows[i];
        if (!result_ran(r) || isnan(r->pass_ms) || r->pass_ms <= 0 || r->accum_steps < 1)
            continue;
        dev[m++] = (r->step_ms_median / naive_ms(r) - 1) * 100;
        if (!worst || fabs(dev[m - 1]) > fabs(worst->step_ms_median / naive_ms(worst) - 1) * 100)
            worst = r;
    }
    if (!m) {
        doc_bullet(d, "The one-pass time (pass_ms) was not measured, so there is no naive "
                      "K x pass prediction to compare with.");
        free(dev);
        return;
    }
    qsort(dev, m, sizeof *dev, cmp_double);
    double med = m % 2 ? dev[m / 2] : (dev[m / 2 - 1] + dev[m / 2]) / 2;
    doc_bullet(d,
               "Against the naive estimate K x one-pass time, the measured steps range from "
               "%s to %s (median %s over %zu configs; furthest: %s %s %s at %s). %s",
               signed_pct(dev[0]).s, signed_pct(dev[m - 1]).s, signed_pct(med).s, m,
               worst->model, split_name(worst).s, worst->mode,
               signed_pct((worst->step_ms_median / naive_ms(worst) - 1) * 100).s,
               med >= 0 ? "The estimate leaves out the optimizer step and per-step overhead."
                        : "Steps run faster than K separate passes: work overlaps across passes.");
    free(dev);
}

/* The group (in the main mode) whose K range is widest: the clearest view
 * of what accumulation adds. */
static const group *widest(const report_input *in, const group *g, size_t ng, const char *mode,
                           double (*value)(const result_row *), const result_row **lo,
                           const result_row **hi)
{
    const group *best = NULL;
    double best_span = 0;
    for (size_t k = 0; k < ng; k++) {
        const result_row *a = NULL, *b = NULL;
        for (size_t j = 0; j < g[k].n; j++) {
            const result_row *r = &in->rows[g[k].idx[j]];
            if (!result_ran(r) || strcmp(r->mode, mode) || isnan(value(r)))
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

static double v_kernels(const result_row *r) { return r->kernels_per_step; }
static int any_measured(const report_input *in, double (*value)(const result_row *))
{
    for (size_t i = 0; i < in->t->rows; i++)
        if (result_ran(&in->rows[i]) && !isnan(value(&in->rows[i])))
            return 1;
    return 0;
}
static double v_dispatches(const result_row *r) { return r->dispatches_per_step; }
static double v_busy(const result_row *r) { return r->gpu_busy_pct; }

static void launch_findings(const report_input *in, const group *g, size_t ng, const char *mode,
                            doc *d)
{
    const result_row *lo = NULL, *hi = NULL;
    const char *what = "kernels (traced)";
    if (!widest(in, g, ng, mode, v_kernels, &lo, &hi)) {
        what = "device operations (dispatched)";
        widest(in, g, ng, mode, v_dispatches, &lo, &hi);
    }
    if (lo && hi) {
        int traced = what[0] == 'k';
        double a = traced ? lo->kernels_per_step : lo->dispatches_per_step;
        double b = traced ? hi->kernels_per_step : hi->dispatches_per_step;
        doc_bullet(d,
                   "Model %s issues %s %s per step at K=%lld and %s at K=%lld (%sx for %sx the "
                   "passes): each pass launches its kernels again, so launch overhead grows "
                   "with K while the arithmetic per step stays the same.",
                   lo->model, count(a).s, what, (long long)lo->accum_steps, count(b).s,
                   (long long)hi->accum_steps, num(b / a, 3).s,
                   num((double)hi->accum_steps / (double)lo->accum_steps, 3).s);
    }
    lo = hi = NULL;
    if (widest(in, g, ng, mode, v_busy, &lo, &hi))
        doc_bullet(d,
                   "GPU busy time is %s%% of the step at micro-batch %lld and %s%% at %lld "
                   "(model %s, from the trace pass): %s",
                   num(hi->gpu_busy_pct, 3).s, (long long)hi->micro_batch,
                   num(lo->gpu_busy_pct, 3).s, (long long)lo->micro_batch, lo->model,
                   hi->gpu_busy_pct < lo->gpu_busy_pct
                       ? "smaller micro-batches leave the GPU idle for more of the step."
                       : "the GPU is no less busy at the smaller micro-batch.");
    else
        doc_bullet(d, "GPU busy %% was not measured in this run (%s).",
                   any_measured(in, v_kernels) ? "its trace pass recorded dispatches, not "
                                                 "device activity"
                                               : "no trace pass");

    /* On the CPU backend the host does the work while it "enqueues" it, so
     * enqueue time is step time and says nothing about launch overhead. */
    size_t ok = 0, bound = 0, on_cpu = 0;
    const result_row *example = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const result_row *r = &in->rows[i];
        if (!result_ran(r) || isnan(r->host_enqueue_ms))
            continue;
        if (!strcmp(r->backend, "cpu")) {
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
                   "In %zu of %zu configs the host's enqueue time is at least %.0f%% of the "
                   "step (e.g. %s %s %s: %s of %s ms): those steps are launch-bound, the GPU "
                   "waits for the host.",
                   bound, ok, LAUNCH_BOUND_SHARE * 100, example->model, split_name(example).s,
                   example->mode, num(example->host_enqueue_ms, 3).s,
                   num(example->step_ms_median, 3).s);
    else if (ok)
        doc_bullet(d, "The host's enqueue time stays under %.0f%% of the step in all %zu "
                      "configs: none is launch-bound.", LAUNCH_BOUND_SHARE * 100, ok);
    if (on_cpu)
        doc_bullet(d, "%zu configs ran on the CPU backend, where the host computes each "
                      "operation as it issues it: enqueue time equals step time there, so "
                      "launch-boundness is judged on a GPU only.", on_cpu);
}

static void mfu_finding(const report_input *in, doc *d)
{
    const result_row *best = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const result_row *r = &in->rows[i];
        if (result_ran(r) && !isnan(r->mfu_pct) && (!best || r->mfu_pct > best->mfu_pct))
            best = r;
    }
    if (!best)
        return;
    doc_bullet(d, "The highest MFU is %s%% (model %s, %s, %s): %s TFLOP/s of the %s TFLOP/s "
                  "peak GEMM rate measured in this run.",
               num(best->mfu_pct, 3).s, best->model, split_name(best).s, best->mode,
               num(best->tflops, 4).s, meta_or(in->t, "peak_gemm_tflops", "(unrecorded)"));
}

static void grad_finding(const report_input *in, doc *d)
{
    const result_row *worst = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const result_row *r = &in->rows[i];
        if (result_ran(r) && !isnan(r->grad_rel_err) &&
            (!worst || r->grad_rel_err > worst->grad_rel_err))
            worst = r;
    }
    if (!worst) {
        doc_bullet(d, "The gradient check (grad_rel_err) was not measured.");
        return;
    }
    double tol = grad_tolerance(worst->dtype);
    doc_bullet(d,
               "The largest relative error of the accumulated gradient against the full-batch "
               "gradient is %s (model %s, %s), %s the %s tolerance of %s%s",
               num(worst->grad_rel_err, 2).s, worst->model, split_name(worst).s,
               worst->grad_rel_err <= tol ? "within" : "beyond", worst->dtype,
               num(tol, 1).s,
               worst->grad_rel_err <= tol
                   ? ": accumulation computed the same gradient."
                   : ": check the loss normalisation (divide by the window's total, not by K).");
}

static void mode_findings(const report_input *in, const char *mode, doc *d)
{
    static const char *const modes[] = {"async", "sync", "graph", "alloc", "alloc-async"};
    size_t n = in->t->rows;
    double *ratio = malloc((n ? n : 1) * sizeof *ratio);
    if (!ratio)
        return;
    for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
        if (!strcmp(modes[mi], mode))
            continue;
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const result_row *r = &in->rows[i];
            if (!result_ran(r) || strcmp(r->mode, modes[mi]))
                continue;
            for (size_t j = 0; j < n; j++) {
                const result_row *b = &in->rows[j];
                if (result_ran(b) && !strcmp(b->mode, mode) && !strcmp(b->model, r->model) &&
                    b->effective_batch == r->effective_batch &&
                    b->micro_batch == r->micro_batch && !strcmp(b->dtype, r->dtype) &&
                    !strcmp(b->reduction, r->reduction)) {
                    ratio[m++] = r->step_ms_median / b->step_ms_median;
                    break;
                }
            }
        }
        if (!m)
            continue;
        qsort(ratio, m, sizeof *ratio, cmp_double);
        double med = m % 2 ? ratio[m / 2] : (ratio[m / 2 - 1] + ratio[m / 2]) / 2;
        doc_bullet(d, "%s mode takes %sx the %s step time (median over %zu configs measured "
                      "in both; from %sx to %sx).",
                   modes[mi], num(med, 3).s, mode, m, num(ratio[0], 3).s,
                   num(ratio[m - 1], 3).s);
    }
    free(ratio);
}

static void not_run(const report_input *in, doc *d, int as_table)
{
    size_t bad = 0;
    for (size_t i = 0; i < in->t->rows; i++)
        bad += !result_ran(&in->rows[i]);
    if (!as_table) {
        if (bad)
            doc_bullet(d, "%zu of %zu configs did not run (listed below with the reason).",
                       bad, in->t->rows);
        return;
    }
    doc_heading(d, 2, "Configs that did not run");
    if (!bad) {
        doc_para(d, "Every config ran.");
        return;
    }
    static const char *const head[] = {"model", "dtype", "mode", "reduction",
                                       "E", "micro x K", "status: reason", NULL};
    table *tb = doc_table(d, "llllrll", head);
    if (!tb)
        return;
    for (size_t i = 0; i < in->t->rows; i++) {
        const result_row *r = &in->rows[i];
        if (result_ran(r))
            continue;
        table_add(tb, r->model);
        table_add(tb, r->dtype);
        table_add(tb, r->mode);
        table_add(tb, r->reduction);
        table_addf(tb, "%lld", (long long)r->effective_batch);
        table_add(tb, split_name(r).s);
        table_addf(tb, "%s: %s", *r->status ? r->status : "ok (no step time)",
                   *r->note ? r->note : "no reason given");
    }
}

static void memory(const report_input *in, const group *g, size_t ng, const char *mode, doc *d)
{
    doc_heading(d, 2, "The fastest split under a memory cap");
    int any = 0;
    for (size_t i = 0; i < in->t->rows; i++)
        any |= in->rows[i].mem_need_bytes >= 0;
    if (!any) {
        doc_para(d, "The CSV has no memory figures (mem_need_bytes is empty): no advice.");
        return;
    }
    if (in->mem_cap < 0)
        doc_para(d, "No memory cap given (report --mem-cap BYTES, or the run's mem_cap_bytes): "
                    "the fastest split of each effective batch and what it needs.");
    else
        doc_para(d, "Cap: %s (from %s). Per effective batch and model, the fastest split whose "
                    "memory need fits, beside the fastest split regardless of memory.",
                 bytes(in->mem_cap).s, in->mem_cap_from);
    static const char *const head[] = {"E", "model", "fastest that fits", "step ms",
                                       "needs", "fastest overall", "step ms", NULL};
    table *tb = doc_table(d, "rllrrlr", head);
    if (!tb)
        return;
    for (size_t k = 0; k < ng; k++) {
        const result_row *fit = NULL, *fast = NULL;
        for (size_t j = 0; j < g[k].n; j++) {
            const result_row *r = &in->rows[g[k].idx[j]];
            if (!result_ran(r) || strcmp(r->mode, mode))
                continue;
            if (!fast || r->step_ms_median < fast->step_ms_median)
                fast = r;
            int fits = in->mem_cap < 0 || (r->mem_need_bytes >= 0 && r->mem_need_bytes <= in->mem_cap);
            if (fits && (!fit || r->step_ms_median < fit->step_ms_median))
                fit = r;
        }
        if (!fast)
            continue;
        table_addf(tb, "%lld", (long long)fast->effective_batch);
        table_add(tb, fast->model);
        table_add(tb, fit ? split_name(fit).s : "none fits");
        table_add(tb, fit ? num(fit->step_ms_median, 4).s : "-");
        table_add(tb, fit ? bytes(fit->mem_need_bytes).s : "-");
        table_add(tb, split_name(fast).s);
        table_add(tb, num(fast->step_ms_median, 4).s);
        if (in->mem_cap >= 0 && fit && fit != fast)
            doc_bullet(d, "Under the %s cap, model %s at effective batch %lld runs fastest as %s "
                          "(%s ms, needs %s); %s would take %s ms but needs %s.",
                       bytes(in->mem_cap).s, fast->model, (long long)fast->effective_batch,
                       split_name(fit).s, num(fit->step_ms_median, 4).s,
                       bytes(fit->mem_need_bytes).s, split_name(fast).s,
                       num(fast->step_ms_median, 4).s, bytes(fast->mem_need_bytes).s);
    }
}

static void charts(const report_input *in, doc *d)
{
    static const char *const chart[][2] = {
        {"wallclock", "Wall-clock per optimizer step against micro-batch, with GPU busy % and "
                      "MFU % on the right axis"},
        {"throughput", "Samples per second against accumulation steps"},
        {"dispatches", "Kernels (dispatches) per optimizer step against accumulation steps"},
        {"time_split", "Where the step goes: forward, backward, optimizer, idle (trace pass)"},
        {"modes", "Execution modes side by side per micro-batch"},
    };
    doc_heading(d, 2, "Charts");
    if (in->charts_note)
        doc_para(d, "%s", in->charts_note);
    for (size_t i = 0; i < sizeof chart / sizeof *chart; i++)
        doc_chart(d, chart[i][0], chart[i][1]);
}

int report_build(const report_input *in, doc *d)
{
    size_t ng = 0;
    group *g = make_groups(in->rows, in->t->rows, &ng);
    if (!g)
        return -1;
    const char *mode = main_mode(in->rows, in->t->rows);
    const char *name = strrchr(in->csv_path, '/');
    doc_heading(d, 1, "accubench report: %s", name ? name + 1 : in->csv_path);
    doc_para(d, "%s, %s, %zu configs. Generated by accubench report from the CSV alone.",
             meta_or(in->t, "device", "unknown device"), meta_or(in->t, "dtype", "-"),
             in->t->rows);

    doc_heading(d, 2, "What the numbers show");
    for (size_t k = 0; k < ng; k++)
        if (g[k].n && !strcmp(in->rows[g[k].idx[0]].mode, mode))
            group_findings(in, &g[k], d);
    naive_finding(in, d);
    launch_findings(in, g, ng, mode, d);
    mfu_finding(in, d);
    grad_finding(in, d);
    mode_findings(in, mode, d);
    not_run(in, d, 0);

    environment(in, d);
    abc_tables(in, g, ng, d);
    memory(in, g, ng, mode, d);
    not_run(in, d, 1);
    charts(in, d);
    free_groups(g, ng);
    return d->failed ? -1 : 0;
}
