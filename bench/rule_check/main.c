/* A Monte Carlo check of the comparison rule as the interleaved rounds
 * apply it: simulated per-round times of a reference arm A and an arm B
 * (B's true time r times A's), fed round by round to the project's own
 * paired_ratio_of and paired_judge, stopped as rounds.c stops (kept
 * rounds, the first look, the looks to the last, the budget), and then
 * scored against the true ratio. It tells whether the interval holds at
 * its level where the noise is not the normal one the widening was
 * calibrated on, and how often each verdict comes out.
 *
 * Columns: the verdict's share of runs (faster, slower, the same within
 * the threshold, not yet separated), the share whose reported interval
 * holds the true ratio at the round the run stopped, the share whose
 * sign-test interval of A's median (the row's step_ms_ci) holds the true
 * median, and the mean kept rounds at the stop.
 *
 *   rule-check [--runs N] [--seed N] [--docs] [--check]
 *
 * --runs: runs a cell (default 4000: about 25 s of one core); --docs:
 * docs/measuring.md's looks table alone; --check: exit 1, with a FAILED
 * line each, where a cell the rule makes a claim for contradicts it (the
 * interval holds the true ratio at the stop at PAIRED_LEVEL, a ratio
 * within the threshold is called apart no more often than the interval
 * misses, the median's interval holds at its 93.75% floor), each allowed
 * three standard errors of the runs. The cases with each arm's own slow
 * state across rounds are shown, not checked: the interval assumes
 * independent rounds. `make rule-check` runs it.
 * The seed fixes every draw: the same seed, the same table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paired.h"
#include "parse.h"
#include "rng.h"
#include "stats.h"

/* rounds.c's budget rules, in rounds: the rounds the budget holds, and
 * the stretch past it while too few are clean (ROUNDS_BUDGET_STRETCH). */
#define MC_MAX PAIRED_LAST_LOOK
#define MC_STRETCH 3

/* What one round does to the arms' times, in logs. */
typedef struct noise {
    const char *name;
    double sd;       /* each arm's own noise a round (its slice's median) */
    double shared;   /* a load a round, on both arms */
    double leak;     /* the share of that load each arm sees on its own */
    double drift;    /* the machine's speed across 40 rounds, on both */
    double p_out;    /* a stray round: one arm, by chance which, slowed */
    double out_lo, out_hi; /* by a factor of 1 + U(lo, hi) */
    double p_flag;   /* a round the CPU sampling flags, and its own load */
    double flag_load;
    double tail_df;  /* > 0: the arms' noise Student's t on that df */
    int budget;      /* rounds the budget holds (0: no budget, the 40 rounds) */
    /* each arm's own slow state (AR(1) across rounds, this correlation
     * and spread): the rounds no longer independent, which the interval
     * assumes they are; here to show what that costs, not as a case the
     * rule claims to hold under */
    double ar_rho, ar_sd;
} noise;

static double unif(rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(rng *r)
{
    return sqrt(-2 * log(unif(r))) * cos(6.283185307179586 * unif(r));
}

/* Student's t on df degrees of freedom, scaled to unit variance. */
static double student(rng *r, double df)
{
    double chi = 0;
    for (int i = 0; i < (int)df; i++) {
        double z = normal(r);
        chi += z * z;
    }
    return normal(r) / sqrt(chi / df) * sqrt((df - 2) / df);
}

static double own(rng *r, const noise *nz)
{
    return nz->sd * (nz->tail_df > 2 ? student(r, nz->tail_df) : normal(r));
}

/* One run's 40 rounds: a[k], b[k] (times), flagged[k]. */
static void draw_run(rng *r, const noise *nz, double ratio, double *a, double *b, int *flagged)
{
    double sa = nz->ar_sd * normal(r), sb = nz->ar_sd * normal(r);
    double keep = sqrt(1 - nz->ar_rho * nz->ar_rho);
    for (int k = 0; k < MC_MAX; k++) {
        if (k) {
            sa = nz->ar_rho * sa + keep * nz->ar_sd * normal(r);
            sb = nz->ar_rho * sb + keep * nz->ar_sd * normal(r);
        }
        double load = nz->shared * normal(r);
        double la = load, lb = load;
        if (nz->leak > 0) { /* a load that comes and goes within the round */
            la = load * (1 - nz->leak) + nz->leak * nz->shared * normal(r);
            lb = load * (1 - nz->leak) + nz->leak * nz->shared * normal(r);
        }
        double drift = nz->drift * k / (MC_MAX - 1);
        double xa = la + drift + sa + own(r, nz), xb = lb + drift + sb + own(r, nz) + log(ratio);
        if (unif(r) < nz->p_out) {
            double f = log(1 + nz->out_lo + (nz->out_hi - nz->out_lo) * unif(r));
            if (unif(r) < 0.5)
                xa += f;
            else
                xb += f;
        }
        flagged[k] = unif(r) < nz->p_flag;
        if (flagged[k]) { /* other processes took a share: each slice its own */
            xa += log(1 + nz->flag_load * unif(r));
            xb += log(1 + nz->flag_load * unif(r));
        }
        a[k] = exp(xa);
        b[k] = exp(xb);
    }
}

/* The kept rounds of the first `rounds` (paired_kept_rounds, as
 * rounds.c keeps them) into a, b. */
static int kept_of(const int *flagged, int rounds, double *a, double *b, const double *ra,
                   const double *rb, int *first_look)
{
    int kept[MC_MAX], n = 0;
    paired_kept_rounds(flagged, rounds, kept);
    *first_look = paired_first_look(flagged, kept, rounds);
    for (int k = 0; k < rounds; k++)
        if (kept[k]) {
            a[n] = ra[k];
            b[n++] = rb[k];
        }
    return n;
}

typedef struct tally {
    long runs, faster, slower, same, open, covered, median_covered, rounds;
} tally;

/* One run, stopped as rounds.c's enough() stops it. */
static void one_run(rng *r, const noise *nz, double ratio, double true_median_a, tally *t)
{
    double ra[MC_MAX], rb[MC_MAX], a[MC_MAX], b[MC_MAX];
    int flagged[MC_MAX];
    draw_run(r, nz, ratio, ra, rb, flagged);
    paired_ratio p = {0};
    int rounds = 0, n = 0;
    for (rounds = 1; rounds <= MC_MAX; rounds++) {
        int first_look;
        n = kept_of(flagged, rounds, a, b, ra, rb, &first_look);
        int clean = 0;
        for (int k = 0; k < rounds; k++)
            clean += !flagged[k];
        if (n >= first_look) {
            paired_ratio_of(b, a, (size_t)n, &p);
            paired_verdict v = paired_judge(&p, PAIRED_THRESHOLD);
            if (v != PAIRED_UNDECIDED && v != PAIRED_UNKNOWN)
                break;
        }
        int budget = nz->budget > 0 ? nz->budget : MC_MAX;
        if ((rounds >= budget && clean >= PAIRED_FIRST_LOOK) ||
            (rounds >= MC_STRETCH * budget && n >= PAIRED_FIRST_LOOK))
            break;
    }
    if (rounds > MC_MAX)
        rounds = MC_MAX;
    int first_look;
    n = kept_of(flagged, rounds, a, b, ra, rb, &first_look);
    paired_ratio_of(b, a, (size_t)n, &p);
    switch (paired_judge(&p, PAIRED_THRESHOLD)) {
    case PAIRED_FASTER: t->faster++; break;
    case PAIRED_SLOWER: t->slower++; break;
    case PAIRED_EQUAL: t->same++; break;
    default: t->open++; break;
    }
    t->covered += p.lo <= ratio && ratio <= p.hi;
    /* the row's own interval of A's median: the sign-test one */
    qsort(a, (size_t)n, sizeof *a, stats_compare_doubles);
    double lo, hi, cover;
    median_ci_sorted(a, (size_t)n, MEDIAN_CI_LEVEL, &lo, &hi, &cover);
    t->median_covered += lo <= true_median_a && true_median_a <= hi;
    t->rounds += n;
    t->runs++;
}

/* The median of A's kept rounds' distribution (drift none: stationary),
 * from many draws of clean rounds. */
static double true_median(const noise *nz, uint64_t seed)
{
    enum { N = 200001 };
    static double v[N];
    rng r = {seed};
    noise q = *nz;
    q.drift = 0;
    size_t m = 0;
    while (m < N) {
        double a[MC_MAX], b[MC_MAX];
        int f[MC_MAX];
        draw_run(&r, &q, 1, a, b, f);
        for (int k = 0; k < MC_MAX && m < N; k++)
            if (!f[k] || q.p_flag >= 1)
                v[m++] = a[k];
    }
    qsort(v, N, sizeof *v, stats_compare_doubles);
    return v[N / 2];
}

/* docs/measuring.md's table of the looks: the log ratio a round normal
 * with spread sd, no budget, stopped at the first decided look. */
static void docs_table(long runs, uint64_t seed)
{
    const double rows[][2] = {{1, .01}, {1, .03}, {1, .10}, {1, .30}, {1.05, .03}, {1.15, .05}};
    printf("docs/measuring.md's looks table (log ratio normal, no budget)\n");
    printf("%5s %5s %8s %8s %7s\n", "ratio", "sd", "apart", "same", "rounds");
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        rng r = {seed * 7919u + i};
        long apart = 0, same = 0, rounds = 0;
        for (long k = 0; k < runs; k++) {
            double x[MC_MAX], ref[MC_MAX];
            for (int j = 0; j < MC_MAX; j++) {
                ref[j] = 1;
                x[j] = rows[i][0] * exp(rows[i][1] * normal(&r));
            }
            paired_ratio p;
            paired_verdict v = PAIRED_UNDECIDED;
            int n;
            for (n = PAIRED_FIRST_LOOK; n <= MC_MAX; n++) {
                paired_ratio_of(x, ref, (size_t)n, &p);
                v = paired_judge(&p, PAIRED_THRESHOLD);
                if (v != PAIRED_UNDECIDED)
                    break;
            }
            rounds += n > MC_MAX ? MC_MAX : n;
            apart += v == PAIRED_FASTER || v == PAIRED_SLOWER;
            same += v == PAIRED_EQUAL;
        }
        printf("%5.2f %4.0f%% %7.2f%% %7.2f%% %7.1f\n", rows[i][0], 100 * rows[i][1],
               100.0 * apart / runs, 100.0 * same / runs, (double)rounds / runs);
    }
    printf("\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: rule-check [--runs N] [--seed N] [--docs] [--check]\n");
}

static int bad_usage(const char *why)
{
    fprintf(stderr, "rule-check: %s\n", why);
    usage(stderr);
    return 2;
}

/* One cell against the rule's claims; prints a FAILED line for each it
 * contradicts. Returns the number contradicted. */
static int check_cell(const noise *nz, double ratio, const tally *t)
{
    if (nz->ar_rho != 0) /* rounds not independent: no claim */
        return 0;
    double n = (double)t->runs, slack = 3 * sqrt(0.05 * 0.95 / n);
    double covered = t->covered / n, apart = (t->faster + t->slower) / n;
    int failed = 0;
    if (covered < PAIRED_LEVEL - slack)
        failed += printf("FAILED: %s at %.2f: the interval held the true ratio in %.2f%% of "
                         "runs, under %.0f%%\n", nz->name, ratio, 100 * covered,
                         100 * PAIRED_LEVEL) > 0;
    /* within the band, its edges too (1.02 is 1 + PAIRED_THRESHOLD, though
     * log(1.02) rounds above log1p(0.02)) */
    int within = ratio <= (1 + PAIRED_THRESHOLD) * (1 + 1e-12) &&
                 ratio >= 1 / (1 + PAIRED_THRESHOLD) * (1 - 1e-12);
    if (within && apart > 1 - PAIRED_LEVEL + slack)
        failed += printf("FAILED: %s at %.2f, within the threshold: called apart in %.2f%% "
                         "of runs\n", nz->name, ratio, 100 * apart) > 0;
    if (nz->drift == 0 && t->median_covered / n < 0.9375 - slack)
        failed += printf("FAILED: %s at %.2f: the median's interval held in %.2f%% of runs\n",
                         nz->name, ratio, 100 * t->median_covered / n) > 0;
    return failed;
}

int main(int argc, char **argv)
{
    long long runs = 4000, seed = 1;
    int docs_only = 0, check = 0;
    char why[256];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--docs")) {
            docs_only = 1;
        } else if (!strcmp(argv[i], "--check")) {
            check = 1;
        } else if (!strcmp(argv[i], "--runs") || !strcmp(argv[i], "--seed")) {
            int is_runs = argv[i][2] == 'r';
            if (i + 1 >= argc) {
                snprintf(why, sizeof why, "%s needs a value", argv[i]);
                return bad_usage(why);
            }
            if (parse_int(argv[i], argv[i + 1], is_runs ? 10 : 0, is_runs ? 10000000 : INT64_MAX,
                          is_runs ? &runs : &seed, why, sizeof why))
                return bad_usage(why);
            i++;
        } else {
            snprintf(why, sizeof why, "unknown argument '%s'", argv[i]);
            return bad_usage(why);
        }
    }
    const uint64_t seed_u = (uint64_t)seed;
    docs_table(runs * 5, seed_u);
    if (docs_only)
        return 0;
    const noise cases[] = {
        {.name = "normal 1%", .sd = 0.01},
        {.name = "normal 3%", .sd = 0.03},
        {.name = "normal 5%", .sd = 0.05},
        {.name = "3%+load10%+drift", .sd = 0.03, .shared = 0.10, .drift = 0.15},
        {.name = "3%+load leak 20%", .sd = 0.03, .shared = 0.10, .leak = 0.2, .drift = 0.15},
        {.name = "2%+outliers 5%", .sd = 0.02, .shared = 0.05, .drift = 0.1, .p_out = 0.05,
         .out_lo = 0.1, .out_hi = 0.6},
        {.name = "2%+outliers 15%", .sd = 0.02, .shared = 0.05, .drift = 0.1, .p_out = 0.15,
         .out_lo = 0.1, .out_hi = 0.6},
        {.name = "t3 tails 3%", .sd = 0.03, .shared = 0.05, .tail_df = 3},
        {.name = "flagged 30%", .sd = 0.02, .shared = 0.05, .drift = 0.1, .p_flag = 0.3,
         .flag_load = 0.3},
        {.name = "flagged 60%", .sd = 0.02, .shared = 0.05, .drift = 0.1, .p_flag = 0.6,
         .flag_load = 0.3},
        {.name = "2%+out 5%, bud 20", .sd = 0.02, .shared = 0.05, .drift = 0.1, .p_out = 0.05,
         .out_lo = 0.1, .out_hi = 0.6, .budget = 20},
        {.name = "3%, budget 20", .sd = 0.03, .shared = 0.05, .budget = 20},
        {.name = "1%+AR(.6) 2%", .sd = 0.01, .shared = 0.05, .ar_rho = 0.6, .ar_sd = 0.02},
    };
    const double ratios[] = {1.00, 1.01, 1.02, 1.03, 1.05, 1.10};
    int failed = 0;
    printf("runs a cell %lld, seed %llu, threshold %g%%, widening %g\n", runs,
           (unsigned long long)seed_u, PAIRED_THRESHOLD * 100, PAIRED_LOOKS_WIDENING);
    printf("%-18s %5s %7s %7s %7s %7s %8s %8s %6s\n", "noise", "ratio", "faster", "slower",
           "same", "open", "covered", "med.cov", "rounds");
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        double med = true_median(&cases[c], seed_u ^ 0x5eed);
        for (size_t i = 0; i < sizeof ratios / sizeof *ratios; i++) {
            rng r = {seed_u * 1000003u + c * 101 + i};
            tally t = {0};
            for (long k = 0; k < runs; k++)
                one_run(&r, &cases[c], ratios[i], med, &t);
            double n = (double)t.runs;
            /* under drift the rounds have no one median to cover: "-" */
            char med_cov[16] = "       -";
            if (cases[c].drift == 0)
                snprintf(med_cov, sizeof med_cov, "%7.2f%%", 100 * t.median_covered / n);
            printf("%-18s %5.2f %6.2f%% %6.2f%% %6.2f%% %6.2f%% %7.2f%% %s %6.1f\n",
                   cases[c].name, ratios[i], 100 * t.faster / n, 100 * t.slower / n,
                   100 * t.same / n, 100 * t.open / n, 100 * t.covered / n, med_cov,
                   t.rounds / n);
            if (check)
                failed += check_cell(&cases[c], ratios[i], &t);
        }
    }
    if (check)
        printf("%s\n", failed ? "the simulated runs contradict the rule's claims"
                              : "every claim of the rule held");
    return failed ? 1 : 0;
}
