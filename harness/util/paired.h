/* A comparison measured as a comparison. Two configs timed in the same
 * interleaved rounds give one figure per round each; the comparison's
 * figure is their ratio per round (a disturbance that falls on a round
 * falls on both), summarised over the rounds with Yuen's trimmed-mean
 * interval.
 * One rule turns an interval into a verdict, for the sweep's stopping, the
 * report's A/B/C, the planner's pick and compare alike (docs/measuring.md). */
#ifndef ACCUBENCH_PAIRED_H
#define ACCUBENCH_PAIRED_H

#include <stddef.h>

/* A difference smaller than this share is not claimed either way: the
 * practical threshold (nvbench's compare uses one of its own). */
#define PAIRED_THRESHOLD 0.02
/* The interval's level. */
#define PAIRED_LEVEL 0.95
/* The interleaved rounds look at their ratios after every round from the
 * first look to the last and stop at the first that decides
 * (harness/run/sweep/rounds.c). A 95% interval looked at 36 times misses
 * the true ratio at some look far more often than 1 time in 20: with no
 * threshold in the way, an A/A pair is called apart in 26% of runs. So the
 * interval is widened until it holds at PAIRED_LEVEL over all the looks
 * together: the 95th percentile, over simulated A/A runs with normal
 * noise, of the largest |trimmed mean| / half-width seen at any look, is
 * 1.553 to 1.558 (six sets of 200,000 runs), so 1.56: rounded up, since a
 * widening rounded down to 1.55 missed at some look in 5.09% of runs, not
 * 5% (tests/util/test_paired.c computes the percentile and checks the
 * rate both ways). Fewer looks (a fixed --rounds N, a first look at 10)
 * make it wider than need be, never too narrow. Change the looks and the
 * widening together. */
#define PAIRED_FIRST_LOOK 5
#define PAIRED_LAST_LOOK 40
#define PAIRED_LOOKS_WIDENING 1.56
/* The first look where a kept round was disturbed (too few clean ones to
 * drop them): under a load that comes and goes faster than a round, a
 * slice's share of it differs from its partner's, and 5 such rounds called
 * an A/A pair 0.73x apart in one of 10 runs beside two busy loops on 2
 * cores. */
#define PAIRED_FIRST_LOOK_DISTURBED 10

/* The rounds a figure uses: the clean ones where PAIRED_FIRST_LOOK of the
 * `rounds` are clean (disturbed[k] 0), every round otherwise. kept[k]
 * marks them; returns their count. */
int paired_kept_rounds(const int *disturbed, int rounds, int *kept);

/* The kept rounds before the rule may look: PAIRED_FIRST_LOOK, or
 * PAIRED_FIRST_LOOK_DISTURBED where a kept round was disturbed. */
int paired_first_look(const int *disturbed, const int *kept, int rounds);

/* x over ref: the point estimate and its interval, from `rounds` pairs. */
typedef struct paired_ratio {
    size_t rounds;
    double ratio, lo, hi; /* NAN when no pair could be formed */
} paired_ratio;

typedef enum paired_verdict {
    PAIRED_UNKNOWN = 0, /* no interval */
    PAIRED_FASTER,      /* the interval lies below 1 / (1 + threshold) */
    PAIRED_SLOWER,      /* the interval lies above 1 + threshold */
    PAIRED_EQUAL,       /* the interval lies inside the threshold's band */
    PAIRED_UNDECIDED,   /* the interval straddles an edge of the band */
} paired_verdict;

/* The ratio of x[i] / ref[i] over n rounds: the 10%-trimmed mean of the
 * log ratios (from 10 rounds one stray round moves it little) with Yuen's
 * interval at PAIRED_LEVEL (Student's t on the winsorized variance: with 5
 * rounds about 1.4 times a percentile bootstrap's, which called one A/A
 * pair of 20 apart), widened by PAIRED_LOOKS_WIDENING for the looks.
 * Pairs with a non-positive or missing value are left out.
 * Returns 0, or -1 when no pair is left (out->ratio NAN); with fewer than
 * two pairs kept after the trim the interval is NAN. */
int paired_ratio_of(const double *x, const double *ref, size_t n, paired_ratio *out);

/* The ratio b / a of two figures timed apart (two CSVs, two runs), each with
 * its own interval: the widest ratio their intervals allow. */
paired_ratio ratio_of_intervals(double a, double a_lo, double a_hi, double b, double b_lo,
                                double b_hi);

/* The ratio of one config's step time in two sets of runs, each run one
 * draw (several CSVs a side: the run the unit, as the round is within
 * one): the ratio of the geometric means, now / base, with Welch's
 * interval at PAIRED_LEVEL on the runs' log step times. The runs' spread
 * holds what the machine does from run to run, which no one run's
 * interval does. Where a side has one run, the other side's spread stands
 * for both (Student's t on its runs less one degrees of freedom). out->
 * rounds is the runs counted (both sides). Returns 0, or -1 where fewer
 * than 3 runs in all or one side has none with a positive time (out NAN). */
int paired_runs_ratio(const double *base, size_t nb, const double *now, size_t nn,
                      paired_ratio *out);

/* The mean and the variance (n - 1; NAN under two) of the logs of v's
 * positive values, paired_runs_ratio's moments, for a table that shows
 * them; their count (mean NAN where none). */
size_t paired_log_moments(const double *v, size_t n, double *mean, double *var);

/* One config's timed figures as a comparison reads them (a CSV row's or a
 * result row's): the interleaved comparison it was timed in ("" or NULL:
 * timed alone), its kept rounds' medians (space-separated), the steps it
 * timed, its median with the median's interval, and p10..p90 and the
 * relative noise in % (NAN: not measured) for a file from before the
 * intervals. */
typedef struct timed_figures {
    const char *comparison;
    long long rounds, samples; /* -1 (or 0) where not recorded */
    const char *round_ms;
    double median, ci_lo, ci_hi, p10, p90, noise_pct;
} timed_figures;

/* The band a figure timed apart is known to within: its median's 95%
 * interval where it has one; else, for a file from before those, p10..p90
 * of its steps widened to median +- noise_pct where the run reported more
 * noise than that; none (NAN) where no spread was measured. The
 * one band of the rule: compare drew its verdicts from a band of its own
 * (widened) while the report and plan --recommend read p10..p90 alone, so
 * the same two rows of an older file were "slower" in one and "not yet
 * separated" in the other. */
void figures_band(const timed_figures *f, double *lo, double *hi);

/* The fewest draws (rounds where the figure was timed in rounds, else
 * steps) whose median's interval the rule compares by: the [min, max] of
 * 4 covers 87.5% of the median, of 2 half of it, of 1 nothing, where the
 * rule is judged at 95%; 5 (93.75%) is the default --min-samples. A
 * figure of fewer has a median and no interval to compare by. */
#define FIGURES_MIN_DRAWS 5

/* b over a: paired per round where both were timed in the same rounds,
 * else from their intervals (ratio_of_intervals); without an interval
 * (NAN lo and hi) where either side's has fewer than FIGURES_MIN_DRAWS
 * draws behind it. */
paired_ratio figures_ratio(const timed_figures *a, const timed_figures *b);

/* The numbers of a round_ms cell into out[0..max); their count, 0 when the
 * cell is empty or not a list of positive finite numbers. */
size_t round_ms_parse(const char *text, double *out, size_t max);

/* The rule: faster or slower only where the interval clears the threshold.
 * The interval is judged as the results CSV writes it (vs_ref_lo..hi, 6
 * digits), so that a reader of the file that judges those cells draws the
 * run's verdict: on full precision a lower bound of 1.0200001 was "slower"
 * in the run and, read back as 1.02, not separated. */
paired_verdict paired_judge(const paired_ratio *p, double threshold);

/* Neither faster nor slower, with an interval: the same within the
 * threshold or undecided. A ranking treats both as a tie it cannot break. */
static inline int paired_not_separated(paired_verdict v)
{
    return v == PAIRED_EQUAL || v == PAIRED_UNDECIDED;
}

/* Undecided: about how many rounds in all would clear the threshold at the
 * spread seen (the interval narrows as 1/sqrt(rounds)); 0 when the ratio
 * itself is within the threshold (no count of rounds separates them). */
size_t paired_rounds_to_separate(const paired_ratio *p, double threshold);

/* "1.84x [1.65..1.92], slower (paired over 5 interleaved rounds; threshold
 * 2%)"; "..., the same within 2% (...)"; "..., not yet separated (...);
 * about 40 rounds would likely separate them at this spread" (or "the
 * ratio itself is within the threshold"): the ratio and what the rule makes
 * of it, into out. */
void paired_ratio_text(const paired_ratio *p, char *out, size_t len);

/* "; the medians' own ratio, 1.18x, lies outside it: ..." where `pooled`,
 * the ratio of the two medians (each pooling every round's steps), falls
 * outside p's paired interval (the rounds disagreed: the verdict follows
 * them); "" otherwise. */
void paired_pooled_remark(const paired_ratio *p, double pooled, char *out, size_t len);

/* A verdict in words. Every line that states a verdict takes its words
 * from here, so that the two outcomes between faster and slower never read
 * alike: the same within the threshold is a finding (the interval excludes
 * any difference that large); not yet separated is the want of one (the
 * interval reaches past the band's edge: more rounds may separate them,
 * or show them the same). */
typedef struct paired_words {
    char s[160];
} paired_words;

/* "faster", "slower", "the same within 2%", "not yet separated", "no
 * interval"; threshold as judged (compare's --min-diff). */
paired_words paired_verdict_words(paired_verdict v, double threshold);

/* The same against a named other, as a sentence reads it: "faster than
 * A", "slower than A", "the same as A within 2%", "not yet separated from
 * A", "not compared with A (no interval)". */
paired_words paired_verdict_against(paired_verdict v, double threshold, const char *other);

/* An A/A pair (one config timed twice, as two arms of one comparison),
 * p arm 2 over arm 1: "1.005x [0.970..1.041], not yet separated (...);
 * the rule held (...)" for either outcome between faster and slower, "...;
 * the rule FAILED: ..." for faster or slower, into out. */
void paired_aa_text(const paired_ratio *p, char *out, size_t len);

#endif
