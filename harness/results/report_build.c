/* The report's content: the environment, the A/B/C table of every
 * effective batch, the configs that did not run and the charts (the
 * memory-cap advice in report_memory.c), with the sentences of
 * report_findings.c on top (see report.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_writer.h"
#include "dtype_table.h"
#include "key_cells.h"
#include "plural.h"
#include "ratio_text.h"
#include "report_parts.h"
#include "row_compare.h"
#include "report_verdict.h"

/* "; the fp32 run's 0.0309 TFLOP/s (512x512x512 fp32)" for each earlier
 * dtype's peak a file of several dtypes' runs keeps beside its last run's
 * (peak_gemm_tflops_DTYPE: csv_existing.c), else "". */
typedef struct {
    char s[400];
} peaks_text;
static peaks_text other_dtype_peaks(const csv_table *t)
{
    peaks_text out = {""};
    size_t used = 0;
    for (int i = 0; axis_row_at(&dtype_axis, i) && used < sizeof out.s; i++) {
        const char *name = axis_row_at(&dtype_axis, i)->name;
        char key[64], shape_key[64];
        snprintf(key, sizeof key, "peak_gemm_tflops_%s", name);
        snprintf(shape_key, sizeof shape_key, "peak_gemm_shape_%s", name);
        const char *peak = rp_meta(t, key, "");
        if (*peak)
            used += (size_t)snprintf(out.s + used, sizeof out.s - used,
                                     "; the %s run's %s TFLOP/s (%s)", name, peak,
                                     rp_meta(t, shape_key, "shape unknown"));
    }
    return out;
}

static void environment(const report_input *in, doc *d)
{
    const csv_table *t = in->t;
    doc_heading(d, 2, "Environment");
    static const char *const head[] = {"what", "value", NULL};
    table *tb = doc_table(d, "ll", head);
    if (!tb)
        return;
    const char *device = rp_meta(t, "device", t->rows ? in->rows[0].device : "-");
    table_add(tb, "device");
    table_addf(tb, "%s (backend %s)", device, rp_meta(t, "backend", "-"));
    table_add(tb, "library");
    table_add(tb, rp_meta(t, "library", "-"));
    table_add(tb, "BLAS core");
    table_add(tb, rp_meta(t, "blas_core", "-"));
    table_add(tb, "peak GEMM rate");
    /* The run's probe is one reading at its start: where a config's own
     * step went faster than it, the probe read low (the machine busier
     * then), and the cell says so rather than let a "peak" stand below
     * what was reached. (The probes beside each config, which its MFU is
     * taken against, are of another size: not compared here.) */
    double peak = atof(rp_meta(t, "peak_gemm_tflops", "0")), reached = 0;
    double probe_lo = INFINITY, probe_hi = 0; /* the higher probe of each config */
    for (size_t i = 0; i < t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (!result_ran(r))
            continue;
        reached = fmax(reached, r->tflops);
        double probe = fmax(r->probe_tflops_before, r->probe_tflops_after); /* NAN-aware */
        if (probe > 0) {
            probe_lo = fmin(probe_lo, probe);
            probe_hi = fmax(probe_hi, probe);
        }
    }
    char over[300] = "";
    if (peak > 0 && reached > peak)
        snprintf(over, sizeof over, "; a config's step reached %s TFLOP/s, above it: this "
                 "probe read low (the machine busier then), and each MFU is against the probes "
                 "beside its own config", rp_num(reached, 4).s);
    /* the MFU column's own peaks, so that no reader divides by this one */
    char beside[200] = "";
    if (probe_hi > 0 && strcmp(rp_num(probe_lo, 4).s, rp_num(probe_hi, 4).s))
        snprintf(beside, sizeof beside, "; beside each config (its MFU's peak): %s to %s TFLOP/s",
                 rp_num(probe_lo, 4).s, rp_num(probe_hi, 4).s);
    else if (probe_hi > 0) /* one probe, or all alike: not "X to X" */
        snprintf(beside, sizeof beside, "; beside each config (its MFU's peak): %s TFLOP/s",
                 rp_num(probe_hi, 4).s);
    const char *sheet = rp_meta(t, "datasheet_tflops", "");
    table_addf(tb, "%s TFLOP/s measured at the run's start (%s)%s%s; %s%s%s%s",
               rp_meta(t, "peak_gemm_tflops", "-"), rp_meta(t, "peak_gemm_shape", "shape unknown"),
               over, beside, *sheet ? "datasheet " : "no datasheet rate for this device",
               sheet, *sheet ? " TFLOP/s" : "", other_dtype_peaks(t).s);
    table_add(tb, "dtype, optimizer");
    /* a file of several dtypes' runs lists them ("fp32, bf16"): a
     * semicolon, so that the optimizer does not read as one more */
    table_addf(tb, "%s; %s", rp_meta(t, "dtype", "-"), rp_meta(t, "optimizer", "-"));
    table_add(tb, "profile, seed");
    table_addf(tb, "%s, %s", rp_meta(t, "profile", "-"), rp_meta(t, "seed", "-"));
    table_add(tb, "tool, revision");
    table_addf(tb, "accubench %s, %s", rp_meta(t, "tool_version", "-"),
               rp_meta(t, "git_revision", "-"));
    table_add(tb, "date, host");
    table_addf(tb, "%s, %s", rp_meta(t, "date", "-"), rp_meta(t, "host", "-"));
    table_add(tb, "command");
    table_add(tb, rp_meta(t, "command", "-"));
    table_add(tb, "memory cap");
    table_add(tb, in->mem_cap >= 0 ? rp_bytes(in->mem_cap).s : "none");
    table_add(tb, "source");
    table_add(tb, in->csv_path);
}

/* Whether the group's model reads tokens (the GPT): its rows give
 * tokens_per_s, the unit language models are compared in. */
static int group_in_tokens(const report_input *in, const report_group *g)
{
    for (size_t j = 0; j < g->n; j++)
        if (!isnan(in->rows[g->idx[j]].tokens_per_s))
            return 1;
    return 0;
}

static void abc_table(const report_input *in, const report_group *g, doc *d)
{
    const csv_row *first = &in->rows[g->idx[0]];
    int tokens = group_in_tokens(in, g);
    char devices[48] = "";
    if (first->devices > 1)
        snprintf(devices, sizeof devices, ", %lld devices", (long long)first->devices);
    /* Series that differ only in what the backward recomputes, or in what
     * the gradient is accumulated in: the levers name them. */
    doc_heading(d, 3, "Effective batch %lld: model %s, %s, %s reduction%s (%s, %s%s)",
                (long long)first->effective_batch, first->model, first->mode, first->reduction,
                rp_levers(first).s, first->dtype, first->backend, devices);
    const char *const head[] = {
        "micro x K", "step ms", "noise %", "K x pass ms", "vs naive", "vs K=1",
        tokens ? "tokens/s" : "samples/s", "dispatches/step", "kernels/step", "busy %", "MFU %", "grad err",
        "memory need", "step peak", "held", NULL,
    };
    table *tb = doc_table(d, "lrrrrrrrrrrrrrr", head);
    if (!tb)
        return;
    for (size_t j = 0; j < g->n; j++) {
        const csv_row *r = &in->rows[g->idx[j]];
        table_add(tb, rp_split(r).s);
        if (!result_ran(r)) {
            /* the status alone: the reason is in "Configs that did not run" */
            table_addf(tb, "%s", *r->status ? r->status : "not run");
            for (size_t c = 2; c < tb->cols - 3; c++) /* all but the memory */
                table_add(tb, "-");
            table_add(tb, rp_bytes(r->mem_need_bytes).s);
            table_add(tb, "-");
            table_add(tb, "-");
            continue;
        }
        double naive = rp_naive_ms(r);
        table_add(tb, rp_num(r->step_ms_median, 4).s);
        table_add(tb, rp_num(r->step_noise_pct, 2).s);
        table_add(tb, rp_num(naive, 4).s);
        table_add(tb, rp_pct((r->step_ms_median / naive - 1) * 100).s);
        /* the ratio the findings and the run's summary give for the same
         * pair (paired per round where timed together), with its interval,
         * not the ratio of two medians each pooling every round */
        char ratio[128] = "-";
        if (g->k1 == r) {
            snprintf(ratio, sizeof ratio, "1x");
        } else if (g->k1) {
            paired_ratio p = row_ratio(g->k1, r);
            ratio_text(ratio, sizeof ratio, p.ratio, p.lo, p.hi);
        }
        table_add(tb, ratio);
        table_add(tb, rp_num(tokens ? r->tokens_per_s : r->samples_per_s, 4).s);
        table_add(tb, rp_count(r->dispatches_per_step).s);
        table_add(tb, rp_count(r->kernels_per_step).s);
        /* a share over 100% cannot be true: marked where it stands, the
         * findings and the row's trust say why */
        table_add(tb, rp_share(r->gpu_busy_pct).s);
        table_add(tb, rp_share(r->mfu_pct).s);
        table_add(tb, r->grad_rel_err == 0 ? "0" : rp_num(r->grad_rel_err, 2).s);
        table_add(tb, rp_bytes(r->mem_need_bytes).s);
        table_add(tb, rp_bytes(r->mem_peak_bytes).s);
        table_add(tb, rp_bytes(r->mem_held_bytes).s);
    }
}

static void abc_tables(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    doc_heading(d, 2, "Splits of each effective batch");
    doc_para(d, "One table per effective batch and model: each split's median step time, its "
                "noise, the naive prediction (K x the one-pass time pass_ms at that micro-batch; "
                "none for a ragged split, whose smaller last pass was not timed) and how far the measurement is from it, the ratio to the no-accumulation "
                "split (K=1) with its 95%% interval, throughput (tokens/s for a model that reads tokens, samples/s "
                "otherwise), device operations per step (dispatched by the harness; "
                "kernels: counted by the trace pass), GPU busy %%, MFU (either marked (!) above "
                "100%%, which no step reaches), the gradient error "
                "against the full batch, and memory three ways: the exact need, the step's "
                "measured peak of what the harness allocated, and what the device held "
                "(mem_held_bytes: the process's resident peak on the CPU, the device's peak of "
                "memory in use on a GPU). '-' is not measured.");
    for (size_t k = 0; k < ng; k++)
        if (g[k].n)
            abc_table(in, &g[k], d);
}

static int did_not_run(const csv_row *r)
{
    return !result_ran(r);
}

static void not_run(const report_input *in, doc *d)
{
    size_t bad = 0;
    for (size_t i = 0; i < in->t->rows; i++)
        bad += !result_ran(&in->rows[i]);
    doc_heading(d, 2, "Configs that did not run");
    const char *unfinished = rp_meta(in->t, CSV_UNFINISHED, "");
    if (*unfinished)
        doc_para(d, "A run of this file did not finish (%s): the configs it did not reach "
                    "have no row.",
                 unfinished);
    if (!bad) {
        doc_para(d, *unfinished ? "Every config in this file ran." : "Every config ran.");
        return;
    }
    /* the key columns beyond these that tell the rows apart (sync, devices,
     * recompute, ...): two rows of one split in two sync modes read alike */
    static const char *const shown[] = {"model", "dtype", "mode", "reduction",
                                        "effective_batch", "micro_batch", "accum_steps",
                                        "last_micro_batch", NULL};
    const result_column *keys[8];
    key_rows set = {in->rows, in->t->rows, did_not_run};
    size_t nk = key_cells_differing(&set, 1, shown, keys, sizeof keys / sizeof *keys);
    const char *head[4 + 8 + 3 + 1] = {"model", "dtype", "mode", "reduction"};
    char align[sizeof head / sizeof *head] = "llll";
    size_t n = 4;
    for (size_t k = 0; k < nk; k++, n++) {
        head[n] = keys[k]->name;
        align[n] = keys[k]->type == RESULT_IS_TEXT ? 'l' : 'r';
    }
    head[n] = "E", align[n++] = 'r';
    head[n] = "micro x K", align[n++] = 'l';
    head[n] = "status: reason", align[n++] = 'l';
    head[n] = NULL, align[n] = '\0';
    table *tb = doc_table(d, align, head);
    if (!tb)
        return;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (result_ran(r))
            continue;
        table_add(tb, r->model);
        table_add(tb, r->dtype);
        table_add(tb, r->mode);
        table_add(tb, r->reduction);
        for (size_t k = 0; k < nk; k++)
            key_cells_add(tb, keys[k], r);
        table_addf(tb, "%lld", (long long)r->effective_batch);
        table_add(tb, rp_split(r).s);
        table_addf(tb, "%s: %s", *r->status ? r->status : "ok (no step time)",
                   *r->note ? r->note : "no reason given");
    }
}

static void charts(const report_input *in, doc *d)
{
    static const char *const chart[][2] = {
        {"wallclock", "Wall-clock per optimizer step against accumulation steps, with MFU % "
                      "(and GPU busy % where a device trace measured it) on the right axis"},
        {"throughput", "Samples per second against accumulation steps"},
        {"dispatches", "Kernels (dispatches) per optimizer step against accumulation steps"},
        {"time_split", "Where the step goes: forward, backward, optimizer, idle (trace pass)"},
        {"modes", "Execution modes side by side per micro-batch"},
        {"curves", "Loss against optimizer step per split and reduction (--train-steps)"},
    };
    doc_heading(d, 2, "Charts");
    if (in->charts_note)
        doc_para(d, "%s", in->charts_note);
    for (size_t i = 0; i < sizeof chart / sizeof *chart; i++)
        report_chart(in, d, chart[i][0], chart[i][1]);
}

int report_build(const report_input *in, doc *d)
{
    size_t ng = 0;
    report_group *g = report_groups(in->rows, in->t->rows, &ng);
    if (!g)
        return -1;
    const char *mode = rp_main_mode(in->t, in->rows, in->t->rows);
    const char *name = strrchr(in->csv_path, '/');
    doc_heading(d, 1, "accubench report: %s", name ? name + 1 : in->csv_path);
    /* a config's second arm is the same config again, not one more, and
     * so is a config's later row (run again with --append) */
    size_t arms = 0, repeats = 0;
    for (size_t i = 0; i < in->t->rows; i++) {
        repeats += in->rows[i].repeat;
        arms += !in->rows[i].repeat && RESULT_SECOND_ARM(&in->rows[i]);
    }
    size_t configs = in->t->rows - arms - repeats;
    char twice[96] = "", again[96] = "";
    if (arms)
        snprintf(twice, sizeof twice, " (%zu of them timed twice: the A/A check)", arms);
    if (repeats)
        snprintf(again, sizeof again, "; %zu more %s of configs run again", repeats,
                 plural((long long)repeats, "row", "rows"));
    doc_para(d, "%s, %s, %zu %s%s%s. Generated by accubench report from the CSV alone.",
             rp_meta(in->t, "device", "unknown device"), rp_meta(in->t, "dtype", "-"),
             configs, plural((long long)configs, "config", "configs"), twice, again);
    const char *unfinished = rp_meta(in->t, CSV_UNFINISHED, "");
    if (*unfinished)
        doc_para(d, "**A run of this file did not finish** (%s): what follows is of the "
                    "configs it reached.", unfinished);

    report_verdict(in, g, ng, mode, d);
    report_aa(in, g, ng, d);
    report_dtype(in, d);
    doc_heading(d, 2, "What the numbers show");
    report_findings(in, g, ng, mode, d);

    environment(in, d);
    abc_tables(in, g, ng, d);
    report_peers(in, g, ng, d);
    report_noise(in, g, ng, d);
    report_grad_dtype(in, g, ng, d);
    report_curves(in, d);
    report_goodput(in, d);
    report_memory(in, g, ng, d);
    report_frontier(in, d);
    not_run(in, d);
    charts(in, d);
    report_groups_free(g, ng);
    return d->failed ? -1 : 0;
}
