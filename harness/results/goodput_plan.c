/* plan --time-to-target (goodput_plan.h). */
#include "goodput_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_load.h"
#include "goodput_table.h"
#include "row_index.h"
#include "table.h"

/* A figure to sig significant digits in plain decimals (fmt_sig): "%.2g"
 * wrote an error of 250 as "2.5e+02" and a B_simple of 4500 tokens'
 * worth as "4.5e+03". N: buffers for the figures of one line. */
enum { N = 6 };
#define SIG(i, v, sig) fmt_sig(fig[i], sizeof fig[i], (v), (sig))

static void print_series(FILE *out, const goodput_series *s)
{
    char name[600];
    goodput_series_name(s, name, sizeof name);
    const char *none = goodput_no_target_why(s);
    if (none)
        fprintf(out, "%s: no target loss (%s)\n", name, none);
    else
        fprintf(out, "%s: target loss %.4g (%s)\n", name, s->target,
                s->target_given ? "--target-loss" : "the highest final loss among the E");
    fprintf(out, "  time to target = steps x the fastest split's median step time within the cap; "
                 "its interval is the step time's alone (95%%, or less where the step was timed "
                 "5 times or in 5 rounds or fewer, said beside it): the steps, from one curve "
                 "per E, carry none\n");
    for (size_t j = 0; j < s->n; j++) {
        const goodput_point *p = &s->p[j];
        fprintf(out, "  E=%lld", p->e);
        if (goodput_no_best_lr_why(p))
            fprintf(out, " no best lr of the %d trained (%s)", p->lrs, goodput_no_best_lr_why(p));
        else if (!isnan(p->lr))
            fprintf(out, " lr %.3g%s%s%s%s", p->lr,
                    p->lrs > 1 ? " (best final loss of the grid" : "", p->lr_edge ? ", " : "",
                    goodput_lr_edge_word(p), p->lrs > 1 ? ")" : "");
        if (isnan(p->steps)) {
            if (isnan(p->final)) /* no final loss: "final loss nan" said nothing */
                fprintf(out, ": does not reach the target in %d steps (its curve diverged)\n",
                        p->curve_steps);
            else
                fprintf(out, ": does not reach the target in %d steps (final loss %.4g)\n",
                        p->curve_steps, p->final);
            continue;
        }
        if (p->steps == 0) {
            fprintf(out, ": meets the target at step 0 (starting loss %.4g)\n", p->curve->loss[0]);
            continue;
        }
        char fig[N][32];
        fprintf(out, ": %.1f steps, %s examples to target", p->steps,
                SIG(0, p->steps * (double)p->e, 4));
        if (p->sets_target)
            fprintf(out, " (its own final loss is the target: reached by its curve's end by "
                         "construction)");
        char cover[120], ms[100], s_text[100];
        goodput_cover_text(p, cover, sizeof cover);
        if (p->fast)
            fprintf(out, "; fastest within the cap %lldx%lld %s: %s to target%s",
                    (long long)p->fast->micro_batch, (long long)p->fast->accum_steps,
                    goodput_figure_text(ms, sizeof ms, p->fast->step_ms_median,
                                        p->fast->step_ms_ci_lo, p->fast->step_ms_ci_hi, 4, "ms"),
                    goodput_figure_text(s_text, sizeof s_text, p->time_s, p->time_lo,
                                        p->time_hi, 3, "s"),
                    cover);
        else
            fprintf(out, "; %s", goodput_untimed_why(p) + strlen("has "));
        if (!isnan(p->pred_steps))
            fprintf(out, "; predicted %.1f +- %s steps (S_min (1 + B_simple/E), not measured)",
                    p->pred_steps, SIG(1, p->pred_steps_se, 2));
        fprintf(out, "%s\n", (int)j != s->best        ? ""
                             : goodput_tied_count(s) ? "  <- least time to target by its median"
                                                     : "  <- least time to target");
    }
    char at_start[600], edge[1200];
    if (!goodput_at_start_text(s, at_start, sizeof at_start))
        fprintf(out, "  %s\n", at_start);
    if (!goodput_lr_edge_text(s, edge, sizeof edge))
        fprintf(out, "  %s\n", edge);
    const goodput_fit *f = &s->fit;
    char dof[200], fig[N][32];
    goodput_dof_text(f, dof, sizeof dof);
    if (f->status == GOODPUT_FIT_OK)
        fprintf(out, "  fit S = S_min + E_min/B over %zu E: S_min %s +- %s steps, E_min %s "
                     "+- %s examples, B_crit = E_min/S_min %s +- %s examples (%s); "
                     "largest residual %.2g%% (bound %.0f%%): the relation holds\n", f->n,
                SIG(0, f->s_min, 3), SIG(1, f->s_min_se, 2), SIG(2, f->e_min, 4),
                SIG(3, f->e_min_se, 2), SIG(4, f->b_crit, 3), SIG(5, f->b_crit_se, 2), dof,
                100 * f->max_resid, 100 * GOODPUT_RESID_BOUND);
    else if (f->status == GOODPUT_FIT_TOO_FEW)
        fprintf(out, "  no fit: %s (%zu do)\n", goodput_fit_why(f->status), f->n);
    else
        fprintf(out, "  the relation does not fit these points: %s (S_min %s, E_min %s, "
                     "largest residual %.2g%%, bound %.0f%%)\n", goodput_fit_why(f->status),
                SIG(0, f->s_min, 3), SIG(1, f->e_min, 4), 100 * f->max_resid,
                100 * GOODPUT_RESID_BOUND);
    char pooled[300];
    goodput_pooled_text(s, pooled, sizeof pooled);
    if (!isnan(s->b_simple) && f->status == GOODPUT_FIT_OK) {
        double ratio_err, ratio = goodput_crit_ratio(s, &ratio_err);
        fprintf(out, "  B_simple %s +- %s examples (%s): B_crit / B_simple = %s +- %s "
                "(their relative errors summed)\n", SIG(0, s->b_simple, 3),
                SIG(1, s->b_simple_err, 2), pooled, SIG(2, ratio, 2), SIG(3, ratio_err, 2));
    } else if (!isnan(s->b_simple)) {
        fprintf(out, "  B_simple %s +- %s examples (%s); no B_crit to set it against\n",
                SIG(0, s->b_simple, 3), SIG(1, s->b_simple_err, 2), pooled);
    } else {
        fprintf(out, "  no noise scale in the rows (--noise-windows and K > 1)\n");
    }
    for (size_t j = 0; j < s->n; j++) {
        char text[600];
        if (!goodput_noise_text(&s->p[j], text, sizeof text))
            fprintf(out, "  B_simple along E=%lld's curve: %s\n", s->p[j].e, text);
    }
    if (s->best >= 0) {
        char up[300], down[300];
        long long e = s->p[s->best].e;
        goodput_slower_text(s, 2 * e, up, sizeof up);
        goodput_slower_text(s, e / 2, down, sizeof down);
        fprintf(out, "  least time to target at E=%lld; a doubling either way: %s; %s (ratio of "
                     "the times, interval from the step times' intervals alone)\n", e, up, down);
    }
}

/* plan --recommend --goal time: each E of the series ranked by its time
 * to target (its fastest split within the cap), the least first, each
 * beside it as a ratio with the widest interval the step times allow.
 * Returns how many E were ranked. */
static int print_rank(FILE *out, const goodput_series *s)
{
    char name[600];
    goodput_series_name(s, name, sizeof name);
    char at_start[600];
    const char *none = goodput_no_target_why(s);
    if (none || !goodput_at_start_text(s, at_start, sizeof at_start)) {
        fprintf(out, "%s: no ranking by time to target: %s\n", name, none ? none : at_start);
        return 0;
    }
    size_t order[256], n = 0;
    for (size_t j = 0; j < s->n && n < 256; j++)
        if (s->p[j].time_s > 0)
            order[n++] = j;
    for (size_t a = 1; a < n; a++) /* least time first */
        for (size_t b = a; b > 0 && s->p[order[b - 1]].time_s > s->p[order[b]].time_s; b--) {
            size_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    fprintf(out, "%s: effective batches by time to target loss %.4g (steps to target x the "
                 "fastest split's median step time within the cap; the intervals are the step "
                 "time's alone: the steps, from one curve per E, carry none)\n", name, s->target);
    int tied = goodput_tied_count(s);
    char least[200] = "the least";
    if (tied)
        snprintf(least, sizeof least, "the least by its median: %d other E not separated "
                 "from it by the rule", tied);
    else if (n == 1)
        snprintf(least, sizeof least, "the only E with a time to target: nothing to rank it "
                 "against");
    for (size_t i = 0; i < n; i++) {
        const goodput_point *p = &s->p[order[i]];
        char vs[300] = "";
        if (i)
            goodput_slower_text(s, p->e, vs, sizeof vs);
        char cover[120], s_text[100];
        goodput_cover_text(p, cover, sizeof cover);
        fprintf(out, "  %zu. E=%lld as %lldx%lld: %.1f steps x %.4g ms = %s%s; %s\n", i + 1,
                p->e, (long long)p->fast->micro_batch, (long long)p->fast->accum_steps, p->steps,
                p->fast->step_ms_median,
                goodput_figure_text(s_text, sizeof s_text, p->time_s, p->time_lo, p->time_hi, 3,
                                    "s"),
                cover, i ? vs : least);
    }
    for (size_t j = 0; j < s->n; j++)
        if (!(s->p[j].time_s > 0))
            fprintf(out, "  left out: E=%lld %s\n", s->p[j].e,
                    isnan(s->p[j].steps) ? "does not reach the target"
                                         : goodput_untimed_why(&s->p[j]));
    return (int)n;
}

void goodput_print(FILE *out, const goodput_series *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        print_series(out, &s[i]);
}

/* Before the plan or the ranking, not the tables (CSV): which row and
 * which curve of a config appended again were read. */
static void print_repeats(FILE *out, const csv_row *rows, size_t n, const char *csv,
                          const curves_table *ct, const char *path)
{
    char again[4400];
    row_index_repeats_text(rows, n, csv, again, sizeof again);
    if (*again)
        fprintf(out, "%s\n", again);
    curves_rewritten_text(ct, path, again, sizeof again);
    if (*again)
        fprintf(out, "%s\n", again);
}

int goodput_plan_main(FILE *out, const goodput_plan_args *a)
{
    csv_table t;
    csv_row *rows;
    char why[600], path[4200];
    if (csv_load(a->csv_path, csv_required_columns, &t, &rows, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    curves_path_beside(a->csv_path, path, sizeof path);
    curves_table ct;
    int rc = curves_read(path, &ct, why, sizeof why);
    if (rc) {
        if (rc > 0)
            fprintf(stderr, "accubench: no curves file beside %s (%s; run with --train-steps "
                            "N over several --effective)\n", a->csv_path, path);
        else
            fprintf(stderr, "accubench: %s\n", why);
        free(rows);
        csv_free(&t);
        return rc > 0 ? 1 : 2;
    }
    goodput_request req = {.target = a->target, .mem_cap = a->mem_cap};
    goodput_series *s;
    size_t n;
    rc = 0;
    if (goodput_build(&ct, rows, t.rows, &req, &s, &n)) {
        fprintf(stderr, "accubench: out of memory\n");
        rc = 2;
    } else if (!n) {
        fprintf(stderr, "accubench: %s holds no curve of the correct reduction\n", path);
        rc = 1;
    } else if (a->table) {
        goodput_write_table(out, s, n);
    } else if (a->curve_table) {
        goodput_write_curves(out, s, n);
    } else if (a->rank) {
        print_repeats(out, rows, t.rows, a->csv_path, &ct, path);
        int ranked = 0;
        for (size_t i = 0; i < n; i++)
            ranked += print_rank(out, &s[i]);
        rc = ranked ? 0 : 1;
    } else {
        print_repeats(out, rows, t.rows, a->csv_path, &ct, path);
        goodput_print(out, s, n);
        /* the lines above say it per E; the exit and one line say that
         * nothing came of it (the --table above stays 0: the chart gives
         * its own reason for a table without a time) */
        char none[600];
        if (!goodput_none_timed_text(s, n, none, sizeof none)) {
            fprintf(stderr, "accubench: %s\n", none);
            rc = 1;
        }
    }
    goodput_free(s, n);
    curves_table_free(&ct);
    free(rows);
    csv_free(&t);
    return rc;
}
