/* "Is E right?": per series of the --train-steps curves, the steps and
 * examples each effective batch took to a target loss, the fit of
 * S(B) = S_min + E_min / B and its critical batch beside the measured
 * noise scale, and the time to target at the fastest split within the
 * cap (goodput_table.h, which plan --time-to-target and the chart's table
 * read too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "goodput_table.h"
#include "report_parts.h"

static void point_row(table *tb, const goodput_series *s, size_t j)
{
    const goodput_point *p = &s->p[j];
    table_addf(tb, "%lld%s", p->e,
               (int)j != s->best        ? ""
               : goodput_tied_count(s) ? " (least time by its median)"
                                         : " (least time)");
    if (goodput_no_best_lr_why(p)) /* the bullet under the table says why */
        table_addf(tb, "none best of %d", p->lrs);
    else if (isnan(p->lr))
        table_add(tb, "-");
    else
        table_addf(tb, "%s%s%s%s%s", rp_num(p->lr, 3).s, p->lrs > 1 ? " (best of grid" : "",
                   p->lr_edge ? ", " : "", goodput_lr_edge_word(p), p->lrs > 1 ? ")" : "");
    table_add(tb, rp_num(p->final, 4).s);
    if (isnan(p->steps)) {
        table_addf(tb, "not reached in %d", p->curve_steps);
        table_add(tb, "-");
    } else if (p->steps == 0) {
        table_add(tb, "0 (met at the start)");
        table_add(tb, "-");
    } else {
        table_addf(tb, "%s%s", rp_num(p->steps, 3).s,
                   p->sets_target ? " (its final loss is the target)" : "");
        table_add(tb, rp_num(p->steps * (double)p->e, 3).s);
    }
    table_add(tb, rp_num(p->resid * 100, 2).s);
    table_add(tb, p->fast ? rp_split(p->fast).s : "none within the cap");
    if (p->fast)
        table_addf(tb, "%s [%s..%s]", rp_num(p->fast->step_ms_median, 4).s,
                   rp_num(p->fast->step_ms_ci_lo, 4).s, rp_num(p->fast->step_ms_ci_hi, 4).s);
    else
        table_add(tb, "-");
    /* times with their unit, as plan prints them: a time under a second in
     * ms, never "9.49e-04" beside "0.00146" */
    char cover[120], time[100];
    goodput_cover_text(p, cover, sizeof cover);
    if (p->time_s > 0)
        table_addf(tb, "%s%s",
                   goodput_figure_text(time, sizeof time, p->time_s, p->time_lo, p->time_hi, 3,
                                       "s"),
                   cover);
    else
        table_add(tb, "-");
    if (isnan(p->pred_steps))
        table_add(tb, "-");
    else
        table_addf(tb, "%s +- %s", rp_num(p->pred_steps, 3).s, rp_num(p->pred_steps_se, 2).s);
    /* the predicted steps' error carried to the time (the same step time
     * multiplies both): the time stood bare beside steps that had one */
    double err = p->pred_steps > 0 ? p->pred_steps_se * p->pred_time_s / p->pred_steps : NAN;
    table_add(tb, goodput_figure_err_text(time, sizeof time, p->pred_time_s, err, 3, "s"));
}

/* The fit in words: its numbers, or plainly that the relation does not fit. */
static void fit_bullets(const goodput_series *s, doc *d)
{
    const goodput_fit *f = &s->fit;
    char noise[500] = "no noise scale in the rows (run with --noise-windows and K > 1)";
    if (!isnan(s->b_simple)) {
        char pooled[300];
        goodput_pooled_text(s, pooled, sizeof pooled);
        snprintf(noise, sizeof noise, "B_simple = %s +- %s examples from the starting weights "
                 "(%s)", rp_num(s->b_simple, 3).s, rp_num(s->b_simple_err, 2).s, pooled);
    }
    if (f->status == GOODPUT_FIT_TOO_FEW) {
        doc_bullet(d, "No fit: %s (%zu %s). %s.", goodput_fit_why(f->status), f->n,
                   f->n == 1 ? "does" : "do", noise);
        return;
    }
    if (f->status != GOODPUT_FIT_OK) {
        doc_bullet(d, "The relation S = S_min + E_min / B does not fit these points: %s "
                   "(least squares over %zu E: S_min %s steps, E_min %s examples, largest "
                   "residual %s%% against a bound of %s%%). No critical batch is claimed; %s.",
                   goodput_fit_why(f->status), f->n, rp_num(f->s_min, 3).s,
                   rp_num(f->e_min, 3).s, rp_num(100 * f->max_resid, 2).s,
                   rp_num(100 * GOODPUT_RESID_BOUND, 2).s, noise);
        return;
    }
    char ratio[160] = "";
    double ratio_err, r = goodput_crit_ratio(s, &ratio_err);
    if (r > 0)
        snprintf(ratio, sizeof ratio, " (B_crit / B_simple = %s +- %s, their relative errors "
                 "summed)", rp_num(r, 2).s, rp_num(ratio_err, 2).s);
    char dof[200];
    goodput_dof_text(f, dof, sizeof dof);
    doc_bullet(d, "Fit over %zu E (least squares of S on 1/B): S_min = %s +- %s steps, E_min = "
               "%s +- %s examples (%s), largest residual %s%% (bound %s%%): the relation "
               "holds. B_crit = E_min / S_min = %s +- %s examples, beside %s%s.", f->n,
               rp_num(f->s_min, 3).s, rp_num(f->s_min_se, 2).s, rp_num(f->e_min, 3).s,
               rp_num(f->e_min_se, 2).s, dof, rp_num(100 * f->max_resid, 2).s,
               rp_num(100 * GOODPUT_RESID_BOUND, 2).s, rp_num(f->b_crit, 3).s,
               rp_num(f->b_crit_se, 2).s, noise, ratio);
}

/* One effective batch only: the time to target of each split (each config
 * once, from its first row and first arm, as the table picks). */
static void splits_of_one(const report_input *in, const goodput_series *s, doc *d)
{
    const goodput_point *p = &s->p[0];
    if (!(p->steps > 0)) /* not reached, or met at the start: no time to split */
        return;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (!result_ran_once(r) || r->effective_batch != p->e || strcmp(r->model, s->key->model) ||
            strcmp(r->mode, s->key->mode) || strcmp(r->dtype, s->key->dtype) ||
            strcmp(r->reduction, s->key->reduction))
            continue;
        char time[100];
        doc_bullet(d, "E = %lld as %s: %s steps x %s ms = %s to target", p->e, rp_split(r).s,
                   rp_num(p->steps, 3).s, rp_num(r->step_ms_median, 4).s,
                   goodput_figure_text(time, sizeof time, p->steps * r->step_ms_median / 1000,
                                       p->steps * r->step_ms_ci_lo / 1000,
                                       p->steps * r->step_ms_ci_hi / 1000, 3, "s"));
    }
}

/* B_simple along training, per E where the curves measured it. */
static void noise_bullets(const goodput_series *s, doc *d)
{
    char text[600];
    for (size_t j = 0; j < s->n; j++)
        if (!goodput_noise_text(&s->p[j], text, sizeof text))
            doc_bullet(d, "The noise scale along E = %lld's curve (examples; the noise pass "
                       "again on the weights at each quarter of the curve): %s.",
                       s->p[j].e, text);
}

static void series_part(const report_input *in, const goodput_series *s, doc *d)
{
    char name[600];
    goodput_series_name(s, name, sizeof name);
    doc_heading(d, 3, "%s", name);
    const char *none = goodput_no_target_why(s);
    if (none)
        doc_para(d, "No target loss (%s).", none);
    else
        doc_para(d, "Target loss %s (%s).", rp_num(s->target, 4).s,
                 s->target_given ? "--target-loss"
                                 : "the highest final loss among the E, so that every E "
                                   "reaches it");
    /* the step times' interval as they have it: 95%, or [min, max] of a
     * few steps or rounds, which covers less (the time column says so) */
    double lo = NAN, hi = NAN;
    for (size_t j = 0; j < s->n; j++) {
        double c = s->p[j].time_cover;
        if (s->p[j].fast && isfinite(c)) {
            lo = !(lo <= c) ? c : lo;
            hi = !(hi >= c) ? c : hi;
        }
    }
    char step_head[64] = "step ms [95%]";
    if (lo < MEDIAN_CI_LEVEL - 1e-9)
        snprintf(step_head, sizeof step_head, lo == hi ? "step ms [%.3g%%]"
                                                        : "step ms [%.3g..%.3g%%]",
                 100 * lo, 100 * (lo == hi ? lo : hi));
    const char *const head[] = {
        "E", "lr", "final loss", "steps to target", "examples to target", "residual %",
        "fastest within the cap", step_head, "time to target", "predicted steps",
        "predicted time", NULL};
    table *tb = doc_table(d, "rrrrrrlrrrr", head);
    if (!tb)
        return;
    for (size_t j = 0; j < s->n; j++)
        point_row(tb, s, j);
    char at_start[600], edge[1200];
    if (!goodput_at_start_text(s, at_start, sizeof at_start))
        doc_bullet(d, "No time to target: %s.", at_start);
    for (size_t j = 0; j < s->n; j++)
        if (goodput_no_best_lr_why(&s->p[j]))
            doc_bullet(d, "No best learning rate at E = %lld (%d trained): %s.", s->p[j].e,
                       s->p[j].lrs, goodput_no_best_lr_why(&s->p[j]));
    if (!goodput_lr_edge_text(s, edge, sizeof edge))
        doc_bullet(d, "T%s.", edge + 1); /* "the best rate ..." as a sentence */
    fit_bullets(s, d);
    noise_bullets(s, d);
    if (s->n == 1)
        splits_of_one(in, s, d);
    if (s->best >= 0 && s->n > 1) {
        char up[300], down[300], time[100];
        long long e = s->p[s->best].e;
        goodput_slower_text(s, 2 * e, up, sizeof up);
        goodput_slower_text(s, e / 2, down, sizeof down);
        doc_bullet(d, "Least time to target: E = %lld as %s, %s. Beside it %s; %s (the ratio "
                   "of the times, its interval the widest the step times' intervals allow).",
                   e, rp_split(s->p[s->best].fast).s,
                   goodput_figure_text(time, sizeof time, s->p[s->best].time_s, NAN, NAN, 3,
                                       "s"),
                   up, down);
    }
}

void report_goodput(const report_input *in, doc *d)
{
    if (!in->curves)
        return; /* no --train-steps: nothing to say */
    doc_heading(d, 2, "Is E right?");
    goodput_request req = {.target = in->target_loss, .mem_cap = in->mem_cap};
    goodput_series *s = NULL;
    size_t n = 0;
    if (goodput_build(in->curves, in->rows, in->t->rows, &req, &s, &n)) {
        d->failed = 1;
        return;
    }
    doc_para(d, "Time to a target loss across effective batches (McCandlish et al. 2018): "
                "S(B) = S_min + E_min / B steps at batch B, E = S x B examples, B_crit = "
                "E_min / S_min, expected near the noise scale B_simple. Per E, the correct "
                "reduction's curve (of its learning rates the one of lowest final loss; its "
                "splits train alike up to rounding), read through a centered moving mean "
                "over about %d examples; the steps to target are interpolated linearly "
                "between logged steps; final loss: the mean of the last window of that mean. "
                "Time to target = steps x the median step time of the fastest split within "
                "the cap, its interval the step time's 95%% interval (or less where the step was "
                "timed 5 times or in 5 rounds or fewer, said beside it) times the steps (the "
                "steps, from one curve per E, carry none). Predicted steps: S_min (1 + "
                "B_simple / E), shown where the fit holds, with its error (S_min's and "
                "B_simple's parts summed), and predicted s those steps x the same step "
                "time, with their error: a prediction, not a measurement. "
                "Residual: (measured - fitted) / measured steps.",
             GOODPUT_SMOOTH_EXAMPLES);
    if (!n)
        doc_para(d, "The curves file holds no curve of the correct reduction.");
    for (size_t i = 0; i < n; i++)
        series_part(in, &s[i], d);
    if (n) {
        report_chart(in, d, "time_to_target",
                     "Time to target against E: measured with intervals, predicted from "
                     "B_simple, the least marked");
        report_chart(in, d, "loss_to_target",
                     "The loss against the examples seen, each E at its best rate, and where "
                     "each crosses the target");
    }
    goodput_free(s, n);
}
