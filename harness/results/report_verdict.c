#include "report_verdict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aa_check.h"
#include "backend_caps_meta.h"
#include "ci_level.h"
#include "ratio_text.h"
#include "report_trust.h"
#include "row_compare.h"
#include "row_flags.h"

int abc_pick(const csv_row *rows, const size_t *idx, size_t n, size_t out[3])
{
    if (!n)
        return 0;
    const csv_row *a = &rows[idx[0]];
    int64_t e = a->effective_batch;
    if (e < 8 || e % 8 || a->devices > 1 || a->micro_batch <= e / 4)
        return 0;
    int found = 0;
    out[0] = idx[0];
    for (size_t j = 1; j < n; j++) {
        int64_t m = rows[idx[j]].micro_batch;
        if (m == e / 4 && !(found & 1)) {
            out[1] = idx[j];
            found |= 1;
        } else if (m == e / 8 && !(found & 2)) {
            out[2] = idx[j];
            found |= 2;
        }
    }
    return found == 3;
}

static const char *const NAME[3] = {"A", "B", "C"};

const char *abc_name(int i) { return i >= 0 && i < 3 ? NAME[i] : "?"; }

/* The rule read over the three: each against A, C against B, and which one
 * (if any) is faster than both others. */
static abc_verdict verdict_of(const report_input *in, const size_t abc[3])
{
    abc_verdict v = {.row = {abc[0], abc[1], abc[2]}, .ran = 1, .fastest = -1};
    const csv_row *r[3] = {&in->rows[abc[0]], &in->rows[abc[1]], &in->rows[abc[2]]};
    for (int i = 0; i < 3; i++)
        v.ran &= result_ran(r[i]);
    if (!v.ran)
        return v;
    for (int i = 1; i < 3; i++) {
        v.over_a[i] = row_ratio(r[0], r[i]);
        v.against_a[i] = row_verdict(r[0], r[i]);
    }
    v.c_over_b = row_ratio(r[1], r[2]);
    v.c_against_b = row_verdict(r[1], r[2]);
    if (v.against_a[1] == PAIRED_SLOWER && v.against_a[2] == PAIRED_SLOWER)
        v.fastest = 0;
    else if (v.against_a[1] == PAIRED_FASTER && v.c_against_b == PAIRED_SLOWER)
        v.fastest = 1;
    else if (v.against_a[2] == PAIRED_FASTER && v.c_against_b == PAIRED_FASTER)
        v.fastest = 2;
    return v;
}

int abc_verdicts(const report_input *in, const report_group *g, size_t ng, const char *mode,
                 abc_verdict **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    for (size_t k = 0; k < ng; k++) {
        size_t abc[3] = {0};
        if (!g[k].n || strcmp(in->rows[g[k].idx[0]].mode, mode) ||
            !abc_pick(in->rows, g[k].idx, g[k].n, abc))
            continue;
        if (!*out && !(*out = calloc(ng, sizeof **out)))
            return -1;
        abc_verdict *v = &(*out)[(*n)++];
        *v = verdict_of(in, abc);
        v->aa_held = aa_group_held(in, &g[k], v->aa_pair);
        if (v->aa_held < -1) {
            free(*out);
            *out = NULL;
            *n = 0;
            return -1;
        }
    }
    return 0;
}

/* The host computes each op as it issues it (the CPU): busy time is the
 * step itself there, not a measurement of idling. */
static int host_computes(const report_input *in, const csv_row *r)
{
    int host = csv_meta_has_word(in->t, BACKEND_CAPS_KEY, BACKEND_CAPS_DISPATCH_IS_DEVICE_WORK);
    return host >= 0 ? host : !strcmp(r->backend, "cpu");
}

static void verdict_table(const report_input *in, const size_t abc[3], doc *d)
{
    static const char *const head[] = {"", "micro x K", "step ms", "95% interval", "vs A (95%)",
                                       "MFU %", "dispatches/step", "kernels/step", "busy %",
                                       "idle ms", "flags", NULL};
    table *tb = doc_table(d, "llrrrrrrrrl", head);
    const csv_row *a = &in->rows[abc[0]];
    char level[16];
    for (int i = 0; tb && i < 3; i++) {
        const csv_row *r = &in->rows[abc[i]];
        table_add(tb, NAME[i]);
        table_add(tb, rp_split(r).s);
        if (!result_ran(r)) {
            table_addf(tb, "%s", *r->status ? r->status : "not run");
            for (int c = 3; c < 11; c++)
                table_add(tb, "-");
            continue;
        }
        table_add(tb, rp_num(r->step_ms_median, 4).s);
        if (isnan(r->step_ms_ci_lo))
            table_add(tb, "-");
        else
            table_addf(tb, "%s..%s%s", rp_num(r->step_ms_ci_lo, 4).s, rp_num(r->step_ms_ci_hi, 4).s,
                       row_ci_short_text((long long)r->rounds, (long long)r->samples, level,
                                         sizeof level));
        paired_ratio p = row_ratio(a, r);
        char ratio[128];
        ratio_text(ratio, sizeof ratio, p.ratio, p.lo, p.hi);
        if (i == 0 || !result_ran(a) || isnan(p.ratio))
            table_add(tb, i == 0 ? "1x" : "-");
        else
            table_add(tb, ratio);
        /* marked above 100% as in the splits table: the same figure must
         * not read as true here and impossible there */
        table_add(tb, rp_share(r->mfu_pct).s);
        table_add(tb, rp_count(r->dispatches_per_step).s);
        table_add(tb, rp_count(r->kernels_per_step).s);
        table_add(tb, host_computes(in, r) ? "-" : rp_share(r->gpu_busy_pct).s);
        table_add(tb, host_computes(in, r) ? "-" : rp_num(r->idle_ms, 3).s);
        /* no flags column (a file from before it): not known clean */
        table_add(tb, *r->flags ? r->flags : csv_column(in->t, "flags") >= 0 ? "clean" : "-");
    }
}

/* A verdict against A as a sentence reads it: "slower than A", "the same
 * as A within 2%", "not yet separated from A". */
static paired_words against_a(paired_verdict v)
{
    return paired_verdict_against(v, PAIRED_THRESHOLD, "A");
}

void abc_heading(const report_input *in, const abc_verdict *v, char *out, size_t len)
{
    const csv_row *r[3] = {&in->rows[v->row[0]], &in->rows[v->row[1]], &in->rows[v->row[2]]};
    /* every key of the series (rp_series): two series apart only in their
     * reduction or a lever (--recompute none,gelu) read as one heading
     * twice above two different verdicts */
    snprintf(out, len, "Model %s at effective batch %lld: A = %s, B = %s, C = %s (%s)",
             r[0]->model, (long long)r[0]->effective_batch, rp_split(r[0]).s, rp_split(r[1]).s,
             rp_split(r[2]).s, rp_series(r[0]).s);
}

/* "B (16x4) against A: 1.84x [1.65..1.92], slower (paired over 5
 * interleaved rounds)", then which is fastest, as the rule decides; or
 * which of the three did not run. */
void abc_sentences(const report_input *in, const abc_verdict *v, abc_emit emit, void *ctx)
{
    const csv_row *r[3] = {&in->rows[v->row[0]], &in->rows[v->row[1]], &in->rows[v->row[2]]};
    char text[1000];
    if (!v->ran) {
        char limits[400] = "";
        size_t used = 0;
        for (int i = 0; i < 3; i++)
            if (!result_ran(r[i]) && used < sizeof limits)
                used += (size_t)snprintf(limits + used, sizeof limits - used, "%s%s did not "
                                         "run (%s)", used ? "; " : "", NAME[i], r[i]->status);
        snprintf(text, sizeof text, "No verdict: %s.", limits);
        emit(ctx, text);
        return;
    }
    for (int i = 1; i < 3; i++) {
        char ratio[300], apart[200];
        row_ratio_text(r[0], r[i], ratio, sizeof ratio);
        /* the table's medians pool every round: where their ratio says
         * otherwise, the bullet gives both rather than let them contradict */
        paired_pooled_remark(&v->over_a[i], r[i]->step_ms_median / r[0]->step_ms_median, apart,
                             sizeof apart);
        snprintf(text, sizeof text, "%s (%s) against A: %s%s.", NAME[i], rp_split(r[i]).s,
                 ratio, apart);
        emit(ctx, text);
    }
    const char *bc = paired_verdict_words(v->c_against_b, PAIRED_THRESHOLD).s;
    char flops[80] = ""; /* none where the file has no FLOPs column */
    if (r[0]->flops_per_step > 0)
        snprintf(flops, sizeof flops, " (%s FLOPs)", rp_num(r[0]->flops_per_step, 3).s);
    if (v->fastest == 0)
        snprintf(text, sizeof text, "Verdict: A (%s) is the fastest; C against B: %s. The "
                 "arithmetic per step is the same%s.", rp_split(r[0]).s, bc, flops);
    else {
        /* B or C crowned (faster than A and than the other), or none */
        char crowned[96] = "";
        if (v->fastest > 0)
            snprintf(crowned, sizeof crowned, "%s (%s) is the fastest; ", NAME[v->fastest],
                     rp_split(r[v->fastest]).s);
        snprintf(text, sizeof text, "Verdict: %sB is %s and C is %s; C against B: %s. The "
                 "arithmetic per step is the same%s.", crowned, against_a(v->against_a[1]).s,
                 against_a(v->against_a[2]).s, bc, flops);
    }
    emit(ctx, text);
}

/* A sentence as a bullet of the report, and what the Markdown adds after
 * it where a split did not run (the table above has its figures). */
typedef struct bullet_to {
    doc *d;
    const char *after;
} bullet_to;

static void emit_bullet(void *ctx, const char *sentence)
{
    const bullet_to *b = ctx;
    doc_bullet(b->d, "%s%s", sentence, b->after);
}

/* The costliest GEMM shape of a row's counting pass: gemm_shapes up to
 * its first "; ". */
static void first_shape(const csv_row *r, char *out, size_t len)
{
    const char *end = strstr(r->gemm_shapes, "; ");
    size_t n = end ? (size_t)(end - r->gemm_shapes) : strlen(r->gemm_shapes);
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), r->gemm_shapes);
}

static int gemms_timed(const csv_row *const r[3])
{
    return r[0]->gemm_ms_per_step > 0 && r[1]->gemm_ms_per_step > 0 &&
           r[2]->gemm_ms_per_step > 0 && r[0]->gemm_shapes && r[2]->gemm_shapes;
}

static int syncs_counted(const csv_row *const r[3])
{
    return !isnan(r[0]->host_syncs_per_step) && !isnan(r[1]->host_syncs_per_step) &&
           !isnan(r[2]->host_syncs_per_step);
}

/* The GEMMs' share of each step and the costliest shape of A and of C
 * with its MFU, from the counting pass. */
static void gemm_bullets(const csv_row *const r[3], doc *d)
{
    if (!gemms_timed(r))
        return;
    double share[3], most = 0;
    for (int i = 0; i < 3; i++) {
        share[i] = 100 * r[i]->gemm_ms_per_step / r[i]->step_ms_median;
        most = fmax(most, atof(rp_num(share[i], 3).s)); /* as printed: 100.3 reads 100 */
    }
    /* The GEMM times come from a pass of their own: where it ran slower
     * than the timed steps a share passes 100%, which no part of a step
     * can, and the sentence says so rather than let it stand. */
    doc_bullet(d, "GEMMs took %s ms of A's step, %s ms of B's and %s ms of C's (counting pass, "
                  "each GEMM timed by the host): %s%%, %s%% and %s%% of the step times "
                  "above%s.",
               rp_num(r[0]->gemm_ms_per_step, 3).s, rp_num(r[1]->gemm_ms_per_step, 3).s,
               rp_num(r[2]->gemm_ms_per_step, 3).s, rp_num(share[0], 3).s,
               rp_num(share[1], 3).s, rp_num(share[2], 3).s,
               most > 100 ? "; a share over 100% cannot be part of a step: the counting pass, "
                            "run apart, went slower than the timed steps (each GEMM timed on "
                            "its own, the machine perhaps busier then), so read these shares "
                            "against each other, not as fractions of the step"
                          : "");
    char a[160], c[160];
    first_shape(r[0], a, sizeof a);
    first_shape(r[2], c, sizeof c);
    doc_bullet(d, "The costliest GEMM shape (M x N x K, calls, ms and MFU per step): A's %s; "
                  "C's %s.", a, c);
}

static void sync_bullet(const csv_row *const r[3], int host, doc *d)
{
    if (!syncs_counted(r))
        return;
    doc_bullet(d, "Host syncs per step (waits for the device: syncs, downloads, timer reads; "
                  "counting pass): %s for A, %s for B, %s for C%s",
               rp_num(r[0]->host_syncs_per_step, 3).s, rp_num(r[1]->host_syncs_per_step, 3).s,
               rp_num(r[2]->host_syncs_per_step, 3).s,
               host ? ": on this backend the host computes every operation itself, so a sync "
                      "waits for nothing."
                    : ".");
}

/* What the run did not measure, named as such: never a cause. */
static void not_measured(const csv_row *const r[3], int host, doc *d)
{
    char text[320] = "";
    size_t used = 0;
    if (host)
        doc_bullet(d, "Device idle time is not named as a cause: on this backend the host "
                      "computes every operation as it issues it, so no device waits for it "
                      "(the busy share the trace pass gives beside the splits is the step's "
                      "time inside operations, the rest the host's own between them).");
    else if (isnan(r[0]->gpu_busy_pct))
        used += (size_t)snprintf(text + used, sizeof text - used, "%sdevice busy and idle time "
                                 "(no device trace)", used ? ", " : "");
    if (!syncs_counted(r) && used < sizeof text)
        used += (size_t)snprintf(text + used, sizeof text - used, "%shost syncs per step",
                                 used ? ", " : "");
    if (!gemms_timed(r) && used < sizeof text)
        used += (size_t)snprintf(text + used, sizeof text - used, "%sGEMM time by shape",
                                 used ? ", " : "");
    if (used)
        doc_bullet(d, "Not measured in this run, so not named as a cause: %s.", text);
}

/* The why, each part only where the run measured it. */
static void why_bullets(const report_input *in, const csv_row *const r[3], doc *d)
{
    if (!isnan(r[0]->mfu_pct) && !isnan(r[1]->mfu_pct) && !isnan(r[2]->mfu_pct)) {
        /* MFU is the step time's inverse against a peak: it tells C from
         * A no better than their step times do, so it follows their
         * verdict and says which way only where the rule does. */
        paired_verdict v = row_verdict(r[0], r[2]);
        const char *reach =
            v == PAIRED_SLOWER && r[2]->mfu_pct < r[0]->mfu_pct
                ? ", and they reach less of the peak"
            : v == PAIRED_FASTER && r[2]->mfu_pct >= r[0]->mfu_pct
                ? ", and they reach more of the peak"
            : v == PAIRED_SLOWER || v == PAIRED_FASTER
                ? "; the peaks probed beside C and A differ, so its MFU is not its step time's"
                : NULL;
        char not_separated[240];
        if (!reach) {
            snprintf(not_separated, sizeof not_separated, "; by the rule C's step time is %s, "
                     "and its MFU tells no more than its step time does",
                     paired_verdict_against(v, PAIRED_THRESHOLD, "A's").s);
            reach = not_separated;
        }
        doc_bullet(d, "MFU (against the peak probed beside each config): %s%% for A, %s%% for B, "
                      "%s%% for C. The same FLOPs run as K GEMMs K times smaller in the "
                      "micro-batch dimension%s.",
                   rp_num(r[0]->mfu_pct, 3).s, rp_num(r[1]->mfu_pct, 3).s,
                   rp_num(r[2]->mfu_pct, 3).s, reach);
    }
    int host = host_computes(in, r[0]);
    if (r[0]->dispatches_per_step > 0 && !isnan(r[2]->dispatches_per_step))
        doc_bullet(d, "C issues %sx A's operations per step (%s against %s)%s", 
                   rp_num(r[2]->dispatches_per_step / r[0]->dispatches_per_step, 3).s,
                   rp_count(r[2]->dispatches_per_step).s, rp_count(r[0]->dispatches_per_step).s,
                   host ? ": on this backend each operation is computed as it is issued, so "
                          "this counts work items, not launch overhead."
                        : ": each pass launches its kernels again.");
    if (!host && r[2]->host_enqueue_ms >= 0.9 * r[2]->step_ms_median)
        doc_bullet(d, "C's host enqueue time is %s of its %s ms step: it is launch-bound, the "
                      "GPU waits for the host.",
                   rp_num(r[2]->host_enqueue_ms, 3).s, rp_num(r[2]->step_ms_median, 4).s);
    /* A traced step far longer than the timed one (report_parts.h) is not
     * the step the verdict is about: its busy share is no cause, as the
     * findings' busy sentence says too. */
    if (!host && !isnan(r[0]->gpu_busy_pct) && !isnan(r[2]->gpu_busy_pct) &&
        (rp_traced_apart(r[0]) || rp_traced_apart(r[2])))
        doc_bullet(d, "Device busy time is not named as a cause: the traced steps of A and C "
                      "took %s and %s ms against %s and %s ms timed (over %gx), so their busy "
                      "shares (%s%% and %s%%) are of steps unlike the timed ones.",
                   rp_num(r[0]->cupti_step_ms, 3).s, rp_num(r[2]->cupti_step_ms, 3).s,
                   rp_num(r[0]->step_ms_median, 3).s, rp_num(r[2]->step_ms_median, 3).s,
                   RP_TRACE_STEP_APART, rp_num(r[0]->gpu_busy_pct, 3).s,
                   rp_num(r[2]->gpu_busy_pct, 3).s);
    else if (!host && !isnan(r[0]->gpu_busy_pct) && !isnan(r[2]->gpu_busy_pct))
        doc_bullet(d, "Device busy %s%% of A's step, %s%% of C's (trace pass)%s",
                   rp_num(r[0]->gpu_busy_pct, 3).s, rp_num(r[2]->gpu_busy_pct, 3).s,
                   isnan(r[2]->idle_ms) ? "."
                                        : "; C's device sits idle for the rest of its step.");
    gemm_bullets(r, d);
    sync_bullet(r, host, d);
    not_measured(r, host, d);
}

/* Flags explain a figure; they do not veto the verdict. */
static void flags_bullet(const csv_row *const r[3], doc *d)
{
    char text[1200] = "";
    size_t used = 0;
    for (int i = 0; i < 3 && used < sizeof text; i++)
        if (*r[i]->flags) {
            char why[440];
            trust_reason(r[i], why, sizeof why);
            used += (size_t)snprintf(text + used, sizeof text - used, "%s%s %s", used ? "; " : "",
                                     NAME[i], why);
        }
    if (used)
        doc_bullet(d, "Flags beside the figures (they explain, they do not veto: the verdict "
                      "follows the paired intervals above): %s.", text);
}

static void verdict_one(const report_input *in, const abc_verdict *v, doc *d)
{
    const csv_row *r[3] = {&in->rows[v->row[0]], &in->rows[v->row[1]], &in->rows[v->row[2]]};
    char heading[800];
    abc_heading(in, v, heading, sizeof heading);
    doc_heading(d, 3, "%s", heading);
    verdict_table(in, v->row, d);
    bullet_to to = {d, v->ran ? "" : " The figures that were measured are above."};
    abc_sentences(in, v, emit_bullet, &to);
    if (!v->ran)
        return;
    /* the series' own A/A pair called apart: said beside the verdict it
     * may bias, in the words of the A/A section and the console */
    if (v->aa_held == 0) {
        char failed[2400];
        aa_failed_line(in->rows, in->t->rows, &in->rows[v->aa_pair[0]],
                       &in->rows[v->aa_pair[1]], failed, sizeof failed);
        doc_bullet(d, "%s", failed);
    }
    flags_bullet(r, d);
    why_bullets(in, r, d);
}

void report_verdict(const report_input *in, const report_group *g, size_t ng, const char *mode,
                    doc *d)
{
    abc_verdict *v;
    size_t n;
    if (abc_verdicts(in, g, ng, mode, &v, &n)) {
        d->failed = 1;
        return;
    }
    if (n)
        doc_heading(d, 2, "The A/B/C verdict");
    for (size_t i = 0; i < n; i++)
        verdict_one(in, &v[i], d);
    free(v);
}
