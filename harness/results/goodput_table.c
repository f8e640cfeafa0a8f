/* The "Is E right?" analysis of one run (goodput_table.h). */
#include "goodput_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ci_level.h"
#include "noise_pool.h"
#include "paired.h"
#include "ratio_text.h"
#include "reduction.h"
#include "report_parts.h"
#include "stats.h"
#include "table.h"

/* The same series: all but the effective batch, the split, the reduction,
 * the order and the learning rate. */
static int same_series(const read_curve *a, const read_curve *b)
{
    return !strcmp(a->backend, b->backend) && !strcmp(a->model, b->model) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->mode, b->mode) &&
           !strcmp(a->sync, b->sync) && !strcmp(a->recompute, b->recompute) &&
           !strcmp(a->shard, b->shard) && !strcmp(a->grad_dtype, b->grad_dtype) &&
           a->devices == b->devices && a->arm == b->arm;
}

/* A curve the analysis reads: the correct reduction, sums in their order. */
static int counted(const read_curve *c)
{
    return reduction_exact_named(c->reduction) == 1 && !c->reverse && c->steps > 0;
}

/* A curve file without a recompute, shard or grad_dtype column matches
 * any value. */
static int text_matches(const char *curve, const char *row)
{
    return !*curve || !strcmp(curve, row ? row : "");
}

/* A timed row of the curve's series at effective batch e. */
static int row_of(const csv_row *r, const read_curve *k, long long e)
{
    return result_ran_once(r) && reduction_exact_named(r->reduction) == 1 &&
           r->effective_batch == e && !strcmp(r->backend, k->backend) &&
           !strcmp(r->model, k->model) && !strcmp(r->dtype, k->dtype) &&
           !strcmp(r->mode, k->mode) && r->devices == k->devices &&
           text_matches(k->sync, r->sync) && text_matches(k->recompute, r->recompute) &&
           text_matches(k->shard, r->shard) && text_matches(k->grad_dtype, r->grad_dtype) &&
           r->arm == k->arm;
}

/* Memory per device as plan --recommend and the report's frontier hold it
 * to the cap (frontier.c): the measured peak where the row has one, else
 * the exact need. Held to the need alone, --goal time timed an E at a
 * split --goal step, on the same file and cap, called over the cap. */
static int fits(const csv_row *r, int64_t cap)
{
    int64_t mem = r->mem_peak_bytes > 0 ? r->mem_peak_bytes : r->mem_need_bytes;
    return cap < 0 || (mem >= 0 && mem <= cap);
}

/* The fastest split at e within the cap, by median step time. */
static const csv_row *fastest(const csv_row *rows, size_t n, const read_curve *k, long long e,
                              int64_t cap)
{
    const csv_row *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (row_of(&rows[i], k, e) && fits(&rows[i], cap) &&
            (!best || rows[i].step_ms_median < best->step_ms_median))
            best = &rows[i];
    return best;
}

/* B_simple of the series: its rows' estimates (each from the starting
 * weights, so all estimate one figure) pooled by noise_pool.h's rule,
 * whose error does not shrink with rows that share their windows. */
static void pooled_noise(const csv_row *rows, size_t n, const read_curve *k,
                         goodput_series *s)
{
    noise_pool pool = {0};
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &rows[i];
        int in = 0;
        for (size_t j = 0; j < s->n && !in; j++)
            in = row_of(r, k, s->p[j].e);
        if (in)
            noise_pool_add(&pool, r->grad_noise_scale, r->grad_noise_scale_err,
                           (long)r->noise_windows);
    }
    noise_pool_result(&pool, &s->b_simple, &s->b_simple_err);
    s->b_simple_rows = pool.n;
}

/* Whether some curve of the series at e has a final loss over its own
 * steps (did not diverge). */
static int any_rate_finished(const curves_table *ct, const read_curve *key, long long e)
{
    for (size_t i = 0; i < ct->n; i++) {
        const read_curve *c = &ct->c[i];
        if (counted(c) && same_series(c, key) && c->effective_batch == e &&
            isfinite(final_loss(c->loss, c->steps, goodput_smooth_half(e))))
            return 1;
    }
    return 0;
}

/* Per E, the curve kept: of the learning rates trained there, the one with
 * the lowest final loss (a diverged curve has none and loses); of the
 * splits, which train alike up to rounding, the first in the file. */
static int add_points(const curves_table *ct, const read_curve *key, goodput_series *s)
{
    const read_curve **kept = NULL;
    double *lo = NULL, *hi = NULL; /* each E's least and largest rate */
    for (size_t i = 0; i < ct->n; i++) {
        const read_curve *c = &ct->c[i];
        if (!counted(c) || !same_series(c, key))
            continue;
        size_t j = 0;
        while (j < s->n && s->p[j].e != c->effective_batch)
            j++;
        if (j == s->n) {
            goodput_point *g = realloc(s->p, (s->n + 1) * sizeof *g);
            const read_curve **gk = realloc(kept, (s->n + 1) * sizeof *gk);
            double *glo = realloc(lo, (s->n + 1) * sizeof *glo),
                   *ghi = realloc(hi, (s->n + 1) * sizeof *ghi);
            if (g)
                s->p = g;
            if (gk)
                kept = gk;
            if (glo)
                lo = glo;
            if (ghi)
                hi = ghi;
            if (!g || !gk || !glo || !ghi) {
                free(kept), free(lo), free(hi);
                return -1;
            }
            s->p[j] = (goodput_point){.e = c->effective_batch, .lr = c->lr};
            kept[j] = c;
            lo[j] = hi[j] = NAN;
            s->n++;
        }
        /* count the learning rates: a new one is one no earlier kept curve had */
        int seen = 0;
        for (size_t q = 0; q < i && !seen; q++) {
            const read_curve *o = &ct->c[q];
            seen = counted(o) && same_series(o, key) && o->effective_batch == c->effective_batch &&
                   (o->lr == c->lr || (isnan(o->lr) && isnan(c->lr)));
        }
        s->p[j].lrs += !seen;
        /* the grid's ends at this E, for where the kept rate lies in it */
        if (!seen && !isnan(c->lr)) {
            if (!(lo[j] <= c->lr))
                lo[j] = c->lr;
            if (!(hi[j] >= c->lr))
                hi[j] = c->lr;
        }
        /* the rates compared over the steps both curves ran: runs of
         * another --train-steps appended to one file, the longer curve's
         * final loss won for its length, not its rate */
        int h = goodput_smooth_half(c->effective_batch);
        int both = c->steps < kept[j]->steps ? c->steps : kept[j]->steps;
        double fc = final_loss(c->loss, both, h), fk = final_loss(kept[j]->loss, both, h);
        if (fc < fk || (isnan(fk) && !isnan(fc)))
            kept[j] = c;
    }
    /* effective batch ascending */
    for (size_t a = 1; a < s->n; a++)
        for (size_t b = a; b > 0 && s->p[b - 1].e > s->p[b].e; b--) {
            goodput_point t = s->p[b];
            s->p[b] = s->p[b - 1];
            s->p[b - 1] = t;
            const read_curve *tk = kept[b];
            kept[b] = kept[b - 1];
            kept[b - 1] = tk;
            double tl = lo[b], th = hi[b];
            lo[b] = lo[b - 1], hi[b] = hi[b - 1];
            lo[b - 1] = tl, hi[b - 1] = th;
        }
    /* the default target: the highest final loss, so that every E reaches it */
    if (!s->target_given) {
        s->target = NAN;
        for (size_t j = 0; j < s->n; j++) {
            double f = final_loss(kept[j]->loss, kept[j]->steps, goodput_smooth_half(s->p[j].e));
            if (isfinite(f) && !(f <= s->target))
                s->target = f;
        }
    }
    for (size_t j = 0; j < s->n; j++) {
        goodput_point *p = &s->p[j];
        p->lr = kept[j]->lr;
        p->curve = kept[j];
        p->lr_edge = p->lrs < 2 ? 0 : p->lr == hi[j] ? 1 : p->lr == lo[j] ? -1 : 0;
        int h = goodput_smooth_half(p->e);
        p->final = final_loss(kept[j]->loss, kept[j]->steps, h);
        if (p->lrs > 1 && isnan(p->final)) {
            /* the curve kept diverged: of a grid whose every rate did, the
             * first in the file stood in as "best" (and at an edge of the
             * grid), naming a rate nothing ranked */
            p->no_best = any_rate_finished(ct, key, p->e) ? GOODPUT_LEADER_DIVERGED
                                                           : GOODPUT_ALL_DIVERGED;
            p->lr = NAN;
            p->lr_edge = 0;
        }
        p->curve_steps = kept[j]->steps;
        double *smooth = malloc((size_t)kept[j]->steps * sizeof *smooth);
        if (!smooth) {
            free(kept), free(lo), free(hi);
            return -1;
        }
        smooth_curve(kept[j]->loss, kept[j]->steps, h, smooth);
        p->steps = steps_to_target(smooth, smooth_whole_steps(kept[j]->steps, h), s->target);
        p->sets_target = !s->target_given && p->final == s->target;
        free(smooth);
        if (isnan(s->start_loss) || kept[j]->loss[0] < s->start_loss)
            s->start_loss = kept[j]->loss[0];
        s->at_start += p->steps == 0;
    }
    free(kept), free(lo), free(hi);
    return 0;
}

static void fit_and_time(const csv_row *rows, size_t nrows, const goodput_request *req,
                         goodput_series *s)
{
    double b[64] = {0}, st[64] = {0}, resid[64] = {0};
    size_t idx[64], m = 0;
    for (size_t j = 0; j < s->n && m < 64; j++)
        if (s->p[j].steps > 0) { /* 0 steps: the start already met it, no slope to read */
            b[m] = (double)s->p[j].e;
            st[m] = s->p[j].steps;
            idx[m++] = j;
        }
    goodput_fit_of(b, st, m, resid, &s->fit);
    for (size_t j = 0; j < s->n; j++)
        s->p[j].resid = NAN;
    /* two points fit any line: their residuals are 0 by construction, a
     * perfect fit in the table where the fit was refused as too few */
    if (m >= GOODPUT_MIN_POINTS && isfinite(s->fit.max_resid))
        for (size_t i = 0; i < m; i++)
            s->p[idx[i]].resid = resid[i];
    pooled_noise(rows, nrows, s->key, s);
    s->best = -1;
    for (size_t j = 0; j < s->n; j++) {
        goodput_point *p = &s->p[j];
        p->fast = fastest(rows, nrows, s->key, p->e, req->mem_cap);
        for (size_t i = 0; i < nrows; i++)
            p->timed += row_of(&rows[i], s->key, p->e);
        p->time_s = p->time_lo = p->time_hi = p->pred_time_s = p->time_cover = NAN;
        int fit_ok = s->fit.status == GOODPUT_FIT_OK;
        p->pred_steps = fit_ok ? goodput_predicted_steps(s->fit.s_min, s->b_simple, (double)p->e)
                               : NAN;
        p->pred_steps_se = fit_ok ? goodput_predicted_se(s->fit.s_min, s->fit.s_min_se,
                                                         s->b_simple, s->b_simple_err,
                                                         (double)p->e)
                                  : NAN;
        if (!p->fast)
            continue;
        double ms = p->fast->step_ms_median;
        p->pred_time_s = p->pred_steps * ms / 1000;
        /* the step time's interval's, whether or not a time is made of it */
        p->time_cover = row_ci_coverage((long long)p->fast->rounds,
                                         (long long)p->fast->samples);
        if (!(p->steps > 0)) /* not reached, or met at the start: no time spent */
            continue;
        p->time_s = p->steps * ms / 1000;
        p->time_lo = p->steps * p->fast->step_ms_ci_lo / 1000;
        p->time_hi = p->steps * p->fast->step_ms_ci_hi / 1000;
        if (s->best < 0 || p->time_s < s->p[s->best].time_s)
            s->best = (int)j;
    }
    /* an E that starts at the target took no time: beside it any time is
     * "slower", and crowning it (or the least of the rest) says nothing
     * about E; nor is one timed E the least of anything */
    size_t timed = 0;
    for (size_t j = 0; j < s->n; j++)
        timed += s->p[j].time_s > 0;
    if (s->at_start || timed < 2)
        s->best = -1;
}

int goodput_build(const curves_table *ct, const csv_row *rows, size_t nrows,
                  const goodput_request *req, goodput_series **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < ct->n; i++) {
        const read_curve *c = &ct->c[i];
        int first = counted(c);
        for (size_t j = 0; j < *n && first; j++)
            first = !same_series((*out)[j].key, c);
        if (!first)
            continue;
        goodput_series *g = realloc(*out, (*n + 1) * sizeof *g);
        if (!g)
            goto oom;
        *out = g;
        goodput_series *s = &g[(*n)++];
        /* a target of 0 or less is none given (a report_input left at zero) */
        *s = (goodput_series){.key = c, .target = req->target > 0 ? req->target : NAN,
                              .target_given = req->target > 0, .start_loss = NAN};
        if (add_points(ct, c, s))
            goto oom;
        fit_and_time(rows, nrows, req, s);
    }
    return 0;
oom:
    goodput_free(*out, *n);
    *out = NULL;
    *n = 0;
    return -1;
}

void goodput_free(goodput_series *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].p);
    free(s);
}

void goodput_series_name(const goodput_series *s, char *out, size_t len)
{
    const read_curve *k = s->key;
    char devices[64] = "";
    if (k->devices > 1)
        snprintf(devices, sizeof devices, ", %lld devices%s%s", k->devices,
                 *k->sync ? ", sync " : "", k->sync);
    /* the levers where they are not the plain run's, as the report names
     * them: two series of one model and mode differ in one of them */
    snprintf(out, len, "%s (%s, %s, %s%s%s)", k->model, k->backend, k->dtype, k->mode, devices,
             rp_levers_of(read_curve_levers(k), NULL).s);
}

const char *goodput_no_target_why(const goodput_series *s)
{
    return isnan(s->target) ? "every E's curve diverged, so none has a final loss to set it"
                            : NULL;
}

const char *goodput_no_best_lr_why(const goodput_point *p)
{
    return p->no_best == GOODPUT_ALL_DIVERGED
               ? "every rate of its grid diverged, so none has a final loss to rank the rates by"
           : p->no_best == GOODPUT_LEADER_DIVERGED
               ? "the rate ahead over the steps its curves share diverged later in its own "
                 "curve, so the loss it led by is not there to rank it by"
               : NULL;
}

int goodput_at_start_text(const goodput_series *s, char *out, size_t len)
{
    out[0] = '\0';
    if (!s->at_start)
        return -1;
    if (s->at_start == s->n) {
        snprintf(out, len, "the target loss %.4g is at or above the starting loss of every E's "
                 "curve (%.4g, the lowest): each meets it at step 0, so there is no time to "
                 "target to compare and no E takes the least; a target below %.4g compares them",
                 s->target, s->start_loss, s->start_loss);
        return 0;
    }
    const goodput_point *p = NULL;
    for (size_t j = 0; j < s->n && !p; j++)
        if (s->p[j].steps == 0)
            p = &s->p[j];
    snprintf(out, len, "the target loss %.4g is at or above the starting loss of %zu of the %zu "
             "E's curves (E=%lld starts at %.4g): %s at step 0, so the times do not "
             "compare and no E takes the least; a target below %.4g compares them", s->target,
             s->at_start, s->n, p->e, p->curve->loss[0],
             s->at_start == 1 ? "it meets it" : "they meet it", s->start_loss);
    return 0;
}

void goodput_cover_text(const goodput_point *p, char *out, size_t len)
{
    out[0] = '\0';
    /* the level less a rounding: 95% itself is not short of it */
    if (!(p->fast && p->time_cover < MEDIAN_CI_LEVEL - 1e-9))
        return;
    if (p->fast->rounds > 0)
        snprintf(out, len, " (a %.3g%% interval: the step timed in %lld rounds)",
                 100 * p->time_cover, (long long)p->fast->rounds);
    else
        snprintf(out, len, " (a %.3g%% interval: the step timed %lld times)",
                 100 * p->time_cover, (long long)p->fast->samples);
}

const char *goodput_untimed_why(const goodput_point *p)
{
    return p->timed ? "has no timed split within the cap" : "has no timed row in the CSV";
}

int goodput_none_timed_text(const goodput_series *s, size_t n, char *out, size_t len)
{
    size_t reached = 0, at_start = 0, rows = 0;
    double lowest = NAN;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s[i].n; j++) {
            const goodput_point *p = &s[i].p[j];
            if (p->time_s > 0)
                return -1;
            reached += p->steps > 0;
            at_start += p->steps == 0;
            rows += (size_t)p->timed;
            if (isnan(lowest) || p->final < lowest)
                lowest = p->final;
        }
    char target[64] = "its target loss";
    if (n == 1)
        snprintf(target, sizeof target, "the target loss %.4g", s[0].target);
    if (!reached && !at_start && isnan(lowest)) /* not "the lowest final loss is nan" */
        snprintf(out, len, "every effective batch's curve diverged (none has a final loss): "
                 "no time to target");
    else if (!reached && !at_start)
        snprintf(out, len, "no effective batch reaches %s in its curve (the lowest final loss "
                 "is %.4g): no time to target", target, lowest);
    else if (!reached)
        snprintf(out, len, "every effective batch that reaches %s meets it at step 0 (the "
                 "target is at or above its starting loss): no time to target", target);
    else
        snprintf(out, len, "none of the %zu effective batches that reach %s has a timed "
                 "row%s: no time to target", reached, target,
                 rows ? " within the cap" : " in the CSV");
    return 0;
}

/* A timed point's time to target over the best's, with the widest
 * interval their step times allow. */
static paired_ratio vs_best(const goodput_series *s, const goodput_point *p)
{
    const goodput_point *best = &s->p[s->best];
    return ratio_of_intervals(best->time_s, best->time_lo, best->time_hi, p->time_s, p->time_lo,
                              p->time_hi);
}

/* A time under a second goes in ms: scale for v and its unit. */
static double figure_scale(double v, const char **unit)
{
    if (!strcmp(*unit, "s") && v < 1) {
        *unit = "ms";
        return 1000;
    }
    return 1;
}

/* The decimals that give v sig significant digits (0 to 9). */
static int figure_decimals(double v, int sig)
{
    int d = v > 0 ? sig - 1 - (int)floor(log10(v)) : 0;
    return d < 0 ? 0 : d > 9 ? 9 : d;
}

const char *goodput_figure_text(char *out, size_t len, double v, double lo, double hi, int sig,
                                const char *unit)
{
    if (isnan(v)) {
        snprintf(out, len, "-");
        return out;
    }
    double k = figure_scale(v, &unit);
    v *= k, lo *= k, hi *= k;
    int d = figure_decimals(v, sig);
    if (isnan(lo) || isnan(hi))
        snprintf(out, len, "%.*f %s", d, v, unit);
    else
        snprintf(out, len, "%.*f %s [%.*f..%.*f]", d, v, unit, d, lo, d, hi);
    return out;
}

const char *goodput_figure_err_text(char *out, size_t len, double v, double err, int sig,
                                    const char *unit)
{
    if (isnan(v) || isnan(err))
        return goodput_figure_text(out, len, v, NAN, NAN, sig, unit);
    double k = figure_scale(v, &unit);
    int d = figure_decimals(v * k, sig);
    snprintf(out, len, "%.*f +- %.*f %s", d, v * k, d, err * k, unit);
    return out;
}

void goodput_slower_text(const goodput_series *s, long long e, char *out, size_t len)
{
    const goodput_point *best = s->best >= 0 ? &s->p[s->best] : NULL, *p = NULL;
    for (size_t j = 0; j < s->n; j++)
        if (s->p[j].e == e)
            p = &s->p[j];
    if (!best || !p) {
        snprintf(out, len, "E = %lld not trained", e);
        return;
    }
    if (!(p->time_s > 0)) {
        snprintf(out, len, "E = %lld %s", e, isnan(p->steps) ? "does not reach the target"
                                                             : goodput_untimed_why(p));
        return;
    }
    paired_ratio r = vs_best(s, p);
    char ratio[128];
    ratio_text(ratio, sizeof ratio, r.ratio, r.lo, r.hi);
    paired_verdict v = paired_judge(&r, PAIRED_THRESHOLD);
    if (v == PAIRED_UNDECIDED)
        snprintf(out, len, "E = %lld takes %s as long, %s by the rule (threshold %g%%)", e,
                 ratio, paired_verdict_against(v, PAIRED_THRESHOLD, "the least").s,
                 100 * PAIRED_THRESHOLD);
    else if (v == PAIRED_EQUAL) /* its words name the threshold */
        snprintf(out, len, "E = %lld takes %s as long, %s by the rule", e, ratio,
                 paired_verdict_against(v, PAIRED_THRESHOLD, "the least").s);
    else
        snprintf(out, len, "E = %lld takes %s as long", e, ratio);
}

int goodput_tied_count(const goodput_series *s)
{
    int tied = 0;
    for (size_t j = 0; s->best >= 0 && j < s->n; j++) {
        paired_ratio r = (int)j != s->best && s->p[j].time_s > 0
                             ? vs_best(s, &s->p[j])
                             : (paired_ratio){.lo = NAN};
        tied += !isnan(r.lo) && paired_not_separated(paired_judge(&r, PAIRED_THRESHOLD));
    }
    return tied;
}

double goodput_crit_ratio(const goodput_series *s, double *err)
{
    const goodput_fit *f = &s->fit;
    *err = NAN;
    if (f->status != GOODPUT_FIT_OK || !(f->b_crit > 0) || !(s->b_simple > 0))
        return NAN;
    double r = f->b_crit / s->b_simple;
    *err = r * (f->b_crit_se / f->b_crit + s->b_simple_err / s->b_simple);
    return r;
}

void goodput_pooled_text(const goodput_series *s, char *out, size_t len)
{
    if (s->b_simple_rows == 1)
        snprintf(out, len, "one row's estimate, its jackknife error over its windows");
    else
        snprintf(out, len, "the inverse-variance mean of %zu rows' estimates; its error the same "
                 "mean of theirs, which holds however they correlate: they share their "
                 "starting weights and windows", s->b_simple_rows);
}

int goodput_noise_text(const goodput_point *p, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    const read_curve *c = p->curve;
    for (int t = 0; c && c->noise && t < c->steps && used < len; t++)
        if (isfinite(c->noise[t]))
        {
            char v[32], e[32]; /* plain decimals: not "221 +- 2.5e+02" */
            used += (size_t)snprintf(out + used, len - used, "%sstep %d: %s +- %s",
                                     used ? ", " : "", t, fmt_sig(v, sizeof v, c->noise[t], 3),
                                     fmt_sig(e, sizeof e, c->noise_err[t], 2));
        }
    return used ? 0 : -1;
}

const char *goodput_lr_edge_word(const goodput_point *p)
{
    return p->lr_edge > 0 ? "its largest" : p->lr_edge < 0 ? "its smallest" : "";
}

/* "E = 8, 16 and 32" for the points at edge `side` into out; how many. */
static size_t edge_list(const goodput_series *s, int side, char *out, size_t len)
{
    size_t k = 0, m = 0, used = 0;
    for (size_t j = 0; j < s->n; j++)
        m += s->p[j].lr_edge == side;
    out[0] = '\0';
    for (size_t j = 0; j < s->n && used < len; j++)
        if (s->p[j].lr_edge == side)
            used += (size_t)snprintf(out + used, len - used, "%s%lld",
                                     !k++ ? "E = " : k == m ? " and " : ", ", s->p[j].e);
    return m;
}

int goodput_lr_edge_text(const goodput_series *s, char *out, size_t len)
{
    char up[300], down[300];
    size_t nu = edge_list(s, 1, up, sizeof up), nd = edge_list(s, -1, down, sizeof down);
    out[0] = '\0';
    if (!nu && !nd)
        return -1;
    char which[700];
    if (nu && nd)
        snprintf(which, sizeof which, "%s is the largest of its grid, and of %s the smallest", up,
                 down);
    else
        snprintf(which, sizeof which, "%s is the %s of its grid", nu ? up : down,
                 nu ? "largest" : "smallest");
    int one = nu + nd == 1;
    snprintf(out, len, "the best rate of %s: a rate beyond it may train faster, so %s to "
             "target may be too many (and the fit reads %s) until a wider grid brackets the "
             "best rate", which, one ? "its steps" : "their steps", one ? "it" : "them");
    return 0;
}
