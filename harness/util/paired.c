#include "paired.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ratio_text.h"
#include "stats.h"

int paired_ratio_of(const double *x, const double *ref, size_t n, paired_ratio *out)
{
    out->rounds = 0;
    out->ratio = out->lo = out->hi = NAN;
    double *v = malloc((n ? n : 1) * sizeof *v);
    size_t m = 0;
    for (size_t i = 0; v && i < n; i++)
        if (x[i] > 0 && ref[i] > 0 && isfinite(x[i]) && isfinite(ref[i]))
            v[m++] = log(x[i] / ref[i]);
    if (!m) {
        free(v);
        return -1;
    }
    /* Yuen's trimmed mean and its interval: a tenth cut from each end (one
     * stray round in ten moves it little; under ten rounds none is cut, as
     * the t of the fewer rounds left would cost more than the stray round:
     * at 5 rounds, a fifth cut leaves t = 4.30 on 3 of them), the spread from
     * the winsorized variance, Student's t with the kept rounds less one
     * degrees of freedom: honest with the few rounds a comparison runs,
     * where a percentile bootstrap comes out too narrow. Widened for the
     * looks the rounds take before they stop (paired.h). */
    qsort(v, m, sizeof *v, stats_compare_doubles);
    size_t g = m / 10, h = m - 2 * g;
    double sum = 0, wsum = 0, wsq = 0;
    for (size_t i = g; i < m - g; i++)
        sum += v[i];
    double tmean = sum / (double)h;
    for (size_t i = 0; i < m; i++) {
        double w = v[i < g ? g : i >= m - g ? m - g - 1 : i]; /* winsorized */
        wsum += w;
        wsq += w * w;
    }
    out->ratio = exp(tmean);
    out->rounds = m;
    if (h >= 2) {
        double wmean = wsum / (double)m;
        double wvar = (wsq - (double)m * wmean * wmean) / (double)(m - 1);
        double se = sqrt((wvar > 0 ? wvar : 0) * (double)(m - 1) / ((double)h * (double)(h - 1)));
        double half = PAIRED_LOOKS_WIDENING * stats_t_975((int)h - 1) * se;
        out->lo = exp(tmean - half);
        out->hi = exp(tmean + half);
    }
    free(v);
    return 0;
}

size_t paired_log_moments(const double *v, size_t n, double *mean, double *var)
{
    double sum = 0, sq = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i])) {
            double x = log(v[i]);
            sum += x;
            sq += x * x;
            m++;
        }
    *mean = m ? sum / (double)m : NAN;
    *var = m > 1 ? fmax(0, (sq - (double)m * *mean * *mean) / (double)(m - 1)) : NAN;
    return m;
}

int paired_runs_ratio(const double *base, size_t nb, const double *now, size_t nn,
                      paired_ratio *out)
{
    *out = (paired_ratio){.rounds = 0, .ratio = NAN, .lo = NAN, .hi = NAN};
    double mb, vb, mn, vn;
    size_t kb = paired_log_moments(base, nb, &mb, &vb);
    size_t kn = paired_log_moments(now, nn, &mn, &vn);
    if (!kb || !kn || kb + kn < 3)
        return -1;
    double se, df;
    if (kb > 1 && kn > 1) { /* Welch: each side its own spread */
        double sb = vb / (double)kb, sn = vn / (double)kn;
        se = sqrt(sb + sn);
        df = se > 0 ? (sb + sn) * (sb + sn) /
                          (sb * sb / (double)(kb - 1) + sn * sn / (double)(kn - 1))
                    : (double)(kb + kn - 2);
    } else { /* one run a side: the other's spread for both */
        double v = kb > 1 ? vb : vn;
        se = sqrt(v * (1.0 / (double)kb + 1.0 / (double)kn));
        df = (double)(kb > 1 ? kb : kn) - 1;
    }
    double half = stats_t_975(df < 1 ? 1 : (int)floor(df)) * se; /* whole df: the wider t */
    out->rounds = kb + kn;
    out->ratio = exp(mn - mb);
    out->lo = exp(mn - mb - half);
    out->hi = exp(mn - mb + half);
    return 0;
}

paired_ratio ratio_of_intervals(double a, double a_lo, double a_hi, double b, double b_lo,
                                double b_hi)
{
    paired_ratio p = {.rounds = 0, .ratio = NAN, .lo = NAN, .hi = NAN};
    if (!(a > 0) || !(b > 0))
        return p;
    p.ratio = b / a;
    if (a_lo > 0 && a_hi >= a_lo && b_lo > 0 && b_hi >= b_lo) {
        p.lo = b_lo / a_hi;
        p.hi = b_hi / a_lo;
    }
    return p;
}

size_t round_ms_parse(const char *p, double *out, size_t max)
{
    size_t n = 0;
    while (p && *p && n < max) {
        char *end;
        double v = strtod(p, &end);
        /* a round's time is finite: strtod's inf (inf, 1e999) is none */
        if (end == p || !(v > 0) || !isfinite(v))
            return 0;
        out[n++] = v;
        p = end;
        while (*p == ' ')
            p++;
    }
    return n;
}

/* The most rounds a round_ms cell can hold (a run keeps fewer). */
#define FIGURES_ROUNDS_MAX 256

static int same_rounds(const timed_figures *a, const timed_figures *b)
{
    return a->comparison && *a->comparison && b->comparison &&
           !strcmp(a->comparison, b->comparison) && a->rounds > 0 && a->rounds == b->rounds;
}

void figures_band(const timed_figures *f, double *lo, double *hi)
{
    if (f->ci_hi > 0 && f->ci_lo <= f->ci_hi) {
        *lo = f->ci_lo;
        *hi = f->ci_hi;
        return;
    }
    if (isnan(f->noise_pct) && isnan(f->p10) && isnan(f->p90)) {
        *lo = *hi = NAN; /* no spread measured: a median alone is no band */
        return;
    }
    double m = f->median, n = isnan(f->noise_pct) ? 0 : f->noise_pct / 100;
    *lo = m * (1 - n);
    *hi = m * (1 + n);
    if (!isnan(f->p10) && f->p10 < *lo)
        *lo = f->p10;
    if (!isnan(f->p90) && f->p90 > *hi)
        *hi = f->p90;
}

/* A band over fewer draws than the rule compares by (FIGURES_MIN_DRAWS)
 * is none (NAN): it covers the median too seldom. */
static void figures_band_judged(const timed_figures *f, double *lo, double *hi)
{
    long long draws = f->rounds > 0 ? f->rounds : f->samples;
    if (draws > 0 && draws < FIGURES_MIN_DRAWS) {
        *lo = *hi = NAN;
        return;
    }
    figures_band(f, lo, hi);
}

paired_ratio figures_ratio(const timed_figures *a, const timed_figures *b)
{
    if (same_rounds(a, b)) {
        double x[FIGURES_ROUNDS_MAX], ref[FIGURES_ROUNDS_MAX];
        size_t nb = round_ms_parse(b->round_ms, x, FIGURES_ROUNDS_MAX);
        size_t na = round_ms_parse(a->round_ms, ref, FIGURES_ROUNDS_MAX);
        paired_ratio p;
        if (na && na == nb && paired_ratio_of(x, ref, na, &p) == 0)
            return p;
    }
    double alo, ahi, blo, bhi;
    figures_band_judged(a, &alo, &ahi);
    figures_band_judged(b, &blo, &bhi);
    return ratio_of_intervals(a->median, alo, ahi, b->median, blo, bhi);
}

int paired_kept_rounds(const int *disturbed, int rounds, int *kept)
{
    int clean = 0, n = 0;
    for (int k = 0; k < rounds; k++)
        clean += !disturbed[k];
    for (int k = 0; k < rounds; k++) {
        kept[k] = clean < PAIRED_FIRST_LOOK || !disturbed[k];
        n += kept[k];
    }
    return n;
}

int paired_first_look(const int *disturbed, const int *kept, int rounds)
{
    for (int k = 0; k < rounds; k++)
        if (kept[k] && disturbed[k])
            return PAIRED_FIRST_LOOK_DISTURBED;
    return PAIRED_FIRST_LOOK;
}

paired_verdict paired_judge(const paired_ratio *p, double threshold)
{
    if (!(p->lo > 0) || !(p->hi >= p->lo))
        return PAIRED_UNKNOWN;
    double lo = stats_as_written(p->lo, STATS_CSV_DIGITS);
    double hi = stats_as_written(p->hi, STATS_CSV_DIGITS);
    double up = 1 + threshold, down = 1 / up;
    if (lo > up)
        return PAIRED_SLOWER;
    if (hi < down)
        return PAIRED_FASTER;
    if (lo >= down && hi <= up)
        return PAIRED_EQUAL;
    return PAIRED_UNDECIDED;
}

size_t paired_rounds_to_separate(const paired_ratio *p, double threshold)
{
    if (!(p->lo > 0) || !(p->hi > p->lo) || !(p->ratio > 0) || p->rounds < 2)
        return 0;
    double half = (log(p->hi) - log(p->lo)) / 2;
    double room = fabs(log(p->ratio)) - log(1 + threshold);
    if (room <= 0)
        return 0;
    double need = ceil((double)p->rounds * (half / room) * (half / room));
    return need > (double)p->rounds ? (size_t)need : p->rounds + 1;
}

paired_words paired_verdict_words(paired_verdict v, double threshold)
{
    paired_words w;
    switch (v) {
    case PAIRED_FASTER: snprintf(w.s, sizeof w.s, "faster"); break;
    case PAIRED_SLOWER: snprintf(w.s, sizeof w.s, "slower"); break;
    case PAIRED_EQUAL: snprintf(w.s, sizeof w.s, "the same within %g%%", threshold * 100); break;
    case PAIRED_UNDECIDED: snprintf(w.s, sizeof w.s, "not yet separated"); break;
    default: snprintf(w.s, sizeof w.s, "no interval"); break;
    }
    return w;
}

paired_words paired_verdict_against(paired_verdict v, double threshold, const char *other)
{
    paired_words w;
    switch (v) {
    case PAIRED_FASTER: snprintf(w.s, sizeof w.s, "faster than %s", other); break;
    case PAIRED_SLOWER: snprintf(w.s, sizeof w.s, "slower than %s", other); break;
    case PAIRED_EQUAL:
        snprintf(w.s, sizeof w.s, "the same as %s within %g%%", other, threshold * 100);
        break;
    case PAIRED_UNDECIDED: snprintf(w.s, sizeof w.s, "not yet separated from %s", other); break;
    default: snprintf(w.s, sizeof w.s, "not compared with %s (no interval)", other); break;
    }
    return w;
}

/* Whether the ratio itself lies inside the band: undecided then, more
 * rounds would more likely make it the same within the threshold than
 * separate it. */
static int ratio_in_band(const paired_ratio *p, double threshold)
{
    return p->ratio >= 1 / (1 + threshold) && p->ratio <= 1 + threshold;
}

/* "1.84x [1.65..1.92], slower (paired over 5 interleaved rounds;
 * threshold 2%)": the ratio and the rule's verdict v of it, into out;
 * what was written (0 where nothing follows: no ratio or no interval). */
static int verdict_text(const paired_ratio *p, paired_verdict v, char *out, size_t len)
{
    char how[80];
    if (p->rounds)
        snprintf(how, sizeof how, "paired over %zu interleaved rounds", p->rounds);
    else
        snprintf(how, sizeof how, "from the two medians' intervals, timed apart");
    if (isnan(p->ratio)) {
        snprintf(out, len, "no ratio (a step time is missing)");
        return 0;
    }
    char ratio[128];
    if (v == PAIRED_UNKNOWN) {
        ratio_text(ratio, sizeof ratio, p->ratio, NAN, NAN);
        snprintf(out, len, "%s, no interval: no verdict (the rule needs 2 rounds paired, or "
                 "%d rounds or steps a side timed apart)", ratio, FIGURES_MIN_DRAWS);
        return 0;
    }
    ratio_text(ratio, sizeof ratio, p->ratio, p->lo, p->hi);
    /* the same within 2% names its threshold already */
    int n = v == PAIRED_EQUAL
                ? snprintf(out, len, "%s, %s (%s)", ratio,
                           paired_verdict_words(v, PAIRED_THRESHOLD).s, how)
                : snprintf(out, len, "%s, %s (%s; threshold %g%%)", ratio,
                           paired_verdict_words(v, PAIRED_THRESHOLD).s, how,
                           PAIRED_THRESHOLD * 100);
    return n > 0 && (size_t)n < len ? n : 0;
}

void paired_ratio_text(const paired_ratio *pr, char *out, size_t len)
{
    paired_ratio p = *pr;
    paired_verdict v = paired_judge(&p, PAIRED_THRESHOLD);
    int n = verdict_text(&p, v, out, len);
    size_t more = p.rounds ? paired_rounds_to_separate(&p, PAIRED_THRESHOLD) : 0;
    if (v == PAIRED_UNDECIDED && n > 0) {
        if (ratio_in_band(&p, PAIRED_THRESHOLD))
            snprintf(out + n, len - (size_t)n, "; the ratio itself is within the threshold");
        else if (more > PAIRED_LAST_LOOK) /* advice no run can follow: --rounds stops there */
            snprintf(out + n, len - (size_t)n, "; at this spread about %zu rounds would, more "
                     "than the %d a comparison runs (a longer --budget-s gives each round "
                     "more steps, less spread)", more, PAIRED_LAST_LOOK);
        else if (more)
            snprintf(out + n, len - (size_t)n, "; about %zu rounds would likely separate them "
                     "at this spread", more);
    }
}

void paired_pooled_remark(const paired_ratio *p, double pooled, char *out, size_t len)
{
    if (!len)
        return;
    out[0] = '\0';
    if (!isnan(p->lo) && p->rounds > 1 && (pooled < p->lo || pooled > p->hi)) {
        char ratio[64];
        ratio_text(ratio, sizeof ratio, pooled, NAN, NAN);
        snprintf(out, len, "; the medians' own ratio, %s, lies outside it: the rounds "
                 "disagreed, and the verdict follows the rounds' ratios", ratio);
    }
}

void paired_aa_text(const paired_ratio *p, char *out, size_t len)
{
    paired_verdict v = paired_judge(p, PAIRED_THRESHOLD);
    int n = verdict_text(p, v, out, len);
    if (!n)
        return;
    /* no "rounds would separate them": the true ratio of an A/A pair is 1 */
    if (paired_not_separated(v))
        snprintf(out + n, len - (size_t)n,
                 "; the rule held (a config against itself is never faster or slower)");
    else
        snprintf(out + n, len - (size_t)n,
                 "; the rule FAILED: it called a config apart from itself, so this run's "
                 "verdicts may carry a bias");
}
