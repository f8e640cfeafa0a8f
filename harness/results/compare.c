/* accubench compare: regression check between two runs (see compare.h). */
#include "compare.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci_level.h"
#include "compare_args.h"
#include "compare_runs.h"
#include "csv_load.h"
#include "csv_read.h"
#include "csv_rows.h"
#include "csv_writer.h"
#include "key_cells.h"
#include "parse.h"
#include "plural.h"
#include "ratio_text.h"
#include "row_compare.h"
#include "row_index.h"
#include "split_text.h"
#include "stats.h"
#include "table.h"

/* The band a run's step time is known to within: the rule's own
 * (figures_band, paired.h), so that a verdict here is the report's and
 * the planner's of the same two rows. */
static void band(const csv_row *r, double *lo, double *hi)
{
    timed_figures f = row_figures(r);
    figures_band(&f, lo, hi);
}

/* Each side's step times of one config over its runs (compare_runs.h):
 * n 0 on a side named by one file. */
typedef struct run_times {
    double base[COMPARE_MAX_RUNS], now[COMPARE_MAX_RUNS];
    size_t nb, nn;
} run_times;

/* The rule every comparison in the program follows (paired.h): the ratio
 * NEW / BASE over the runs where a side names several (the run the unit:
 * paired_runs_ratio), else with the widest interval the two runs' bands
 * allow (paired per round where both rows come from one interleaved
 * comparison), slower or faster only where that interval clears
 * min_diff. *over_runs (where given) says whether the runs were the unit. */
static paired_ratio compare_ratio(const csv_row *base, const csv_row *now,
                                  const run_times *runs, int *over_runs)
{
    paired_ratio p;
    int runs_unit = runs && paired_runs_ratio(runs->base, runs->nb, runs->now, runs->nn, &p) == 0;
    if (over_runs)
        *over_runs = runs_unit;
    if (runs_unit)
        return p;
    /* paired per round, else timed apart through each run's band; none
     * over fewer draws than the rule compares by, as the run's summary
     * and the report give the same two rows (compare printed an interval
     * of 0% at one step) */
    return row_ratio(base, now);
}

/* A ratio's verdict as the rule names it; PAIRED_UNKNOWN for the others. */
static paired_verdict as_paired(verdict v)
{
    switch (v) {
    case VERDICT_SLOWER: return PAIRED_SLOWER;
    case VERDICT_FASTER: return PAIRED_FASTER;
    case VERDICT_WITHIN: return PAIRED_EQUAL;
    case VERDICT_NOT_SEPARATED: return PAIRED_UNDECIDED;
    default: return PAIRED_UNKNOWN;
    }
}

/* The least a timed-apart ratio's two intervals must cover their medians
 * for a verdict: the rule's own floor, FIGURES_MIN_DRAWS steps or rounds
 * a side (paired.h: [min, max] of 5 covers 93.75%), as the report and the
 * planner judge. Under it a band covers the median too seldom (75% at 3,
 * half at 2), and two single steps would read as a change of any size. */
static double least_verdict_coverage(void)
{
    return row_ci_coverage(0, FIGURES_MIN_DRAWS);
}

/* The lower of the two rows' interval levels (ci_level.h); NAN where
 * neither file says how many steps or rounds its rows took. */
static double least_coverage(const csv_row *base, const csv_row *now)
{
    double b = row_ci_coverage(base->rounds, base->samples),
           n = row_ci_coverage(now->rounds, now->samples);
    return isnan(b) ? n : isnan(n) ? b : fmin(b, n);
}

static verdict compare_rows_over(const csv_row *base, const csv_row *now,
                                 const run_times *runs, double min_diff)
{
    int base_ok = result_ran(base), now_ok = result_ran(now);
    if (!base_ok || !now_ok)
        return base_ok ? VERDICT_FAILED : now_ok ? VERDICT_FIXED : VERDICT_NOT_RUN;
    paired_ratio p = compare_ratio(base, now, runs, NULL);
    /* timed apart with no interval to judge by (a side of too few steps,
     * or of no measured spread): no evidence either way */
    if (!p.rounds &&
        (least_coverage(base, now) < least_verdict_coverage() - 1e-9 || isnan(p.lo)))
        return VERDICT_TOO_FEW;
    switch (paired_judge(&p, min_diff)) {
    case PAIRED_SLOWER: return VERDICT_SLOWER;
    case PAIRED_FASTER: return VERDICT_FASTER;
    case PAIRED_EQUAL: return VERDICT_WITHIN;
    default: return VERDICT_NOT_SEPARATED;
    }
}

verdict compare_rows(const csv_row *base, const csv_row *now, double min_diff)
{
    return compare_rows_over(base, now, NULL, min_diff);
}

paired_words verdict_words(verdict v, double min_diff)
{
    paired_words w;
    const char *name = v == VERDICT_FAILED    ? "failed"
                       : v == VERDICT_FIXED   ? "now runs"
                       : v == VERDICT_NOT_RUN ? "not run"
                       : v == VERDICT_CAPPED  ? "oom under new's lower cap"
                       : v == VERDICT_TOO_FEW ? "too few samples"
                                              : NULL;
    if (!name)
        return paired_verdict_words(as_paired(v), min_diff);
    snprintf(w.s, sizeof w.s, "%s", name);
    return w;
}

/* The device a file was measured on: its metadata, else its first row. */
static const char *device_of(const csv_table *t, const csv_row *rows)
{
    const char *d = csv_meta_get(t, "device");
    if (d && *d)
        return d;
    return t->rows ? rows[0].device : "";
}

/* The optimizer a file's steps ran, by name: its metadata ("adamw lr
 * 0.001") up to the first space; "" when the file does not say. The learning
 * rate changes no work per step, the optimizer does (AdamW keeps and updates
 * two more tensors than SGD). */
static void optimizer_of(const csv_table *t, char *out, size_t len)
{
    const char *o = csv_meta_get(t, "optimizer");
    o = o ? o : "";
    snprintf(out, len, "%.*s", (int)strcspn(o, " "), o);
}

/* Relative noise of one row for the table: half its band, in percent;
 * unmeasured under two samples (one's band is 0, no quiet step). */
static double noise_pct(const csv_row *r)
{
    double lo, hi;
    if (!result_ran(r) || (r->samples >= 0 && r->samples < 2))
        return NAN;
    band(r, &lo, &hi);
    return (hi - lo) / 2 / r->step_ms_median * 100;
}

/* The step-time and noise cells of one side: its run of record's, or
 * where the side names several runs, over those in which the config ran:
 * the geometric mean of their step times (the ratio's own centre) and
 * their spread, the standard deviation of their logs in percent (the
 * moments paired_runs_ratio takes; no spread under two runs). */
static void side_cells(const compare_side *s, const csv_row *r, const double *ms, size_t n,
                       char *step, char *noise, size_t len)
{
    double mean, var;
    paired_log_moments(ms, n, &mean, &var);
    int runs = s->n > 1 && result_ran(r);
    if (!result_ran(r))
        snprintf(step, len, "%s", r->status);
    else
        fmt_sig(step, len, runs ? exp(mean) : r->step_ms_median, 4);
    fmt_pct(noise, len, runs ? 100 * sqrt(var) : noise_pct(r));
}

/* Both files, or neither (2 with the reason said). A file written before
 * a key column existed reads it as its default, so that its rows match a
 * newer file's (csv_key_defaults), and says so where the other file has
 * the column. */
static int load_both(const compare_options *c, csv_table t[2], csv_row *rows[2])
{
    char why[512];
    rows[0] = rows[1] = NULL;
    for (int k = 0; k < 2; k++)
        if (csv_load(c->paths[k], csv_required_columns, &t[k], &rows[k], why, sizeof why)) {
            fprintf(stderr, "accubench: %s\n", why);
            if (k == 1) {
                free(rows[0]);
                csv_free(&t[0]);
            }
            return 2;
        }
    for (int k = 0; k < 2; k++) {
        int filled = csv_key_defaults(&t[k], rows[k], &t[1 - k], why, sizeof why);
        if (filled)
            fprintf(stderr, "accubench: note: %s predates %s: read as %s\n", c->paths[k],
                    filled == 1 ? "a key column" : "key columns", why);
    }
    return 0;
}

/* The two runs are comparable: the same device and optimizer, or asked to
 * compare anyway. 0, or 2 with the reason said. */
static int same_setup(const compare_options *c, const csv_table *t0, const csv_row *rows0,
                      const char *path0, const csv_table *t1, const csv_row *rows1,
                      const char *path1)
{
    const char *dev0 = device_of(t0, rows0), *dev1 = device_of(t1, rows1);
    if (strcmp(dev0, dev1) && !c->ignore_device) {
        fprintf(stderr,
                "accubench: %s ran on '%s' but %s on '%s' (--ignore-device to compare anyway)\n",
                path0, dev0, path1, dev1);
        return 2;
    }
    char opt0[64], opt1[64];
    optimizer_of(t0, opt0, sizeof opt0);
    optimizer_of(t1, opt1, sizeof opt1);
    if (*opt0 && *opt1 && strcmp(opt0, opt1) && !c->ignore_optimizer) {
        fprintf(stderr, "accubench: %s ran optimizer '%s' but %s ran '%s' "
                        "(--ignore-optimizer to compare anyway)\n",
                path0, opt0, path1, opt1);
        return 2;
    }
    return 0;
}

/* Each side's runs after its first, loaded and set beside their side's
 * run of record (same_setup). 0, or 2 with the reason said. */
static int load_runs(compare_options *c, const csv_table t[2], csv_row *const rows[2])
{
    char why[512];
    for (int k = 0; k < 2; k++) {
        compare_side *s = &c->side[k];
        if (compare_side_load(s, &t[1 - k], why, sizeof why)) {
            fprintf(stderr, "accubench: %s\n", why);
            return 2;
        }
        for (int i = 1; i < s->n; i++)
            if (same_setup(c, &t[k], rows[k], s->paths[0], &s->t[i], s->rows[i], s->paths[i]))
                return 2;
    }
    return 0;
}

/* The comparison: a table row per config in both, and the counts. */
#define MAX_SHOWN_KEYS 8
typedef struct comparison {
    table tb;
    int counts[VERDICT_TOO_FEW + 1]; /* VERDICT_TOO_FEW is the last */
    int short_level; /* ratios timed apart whose intervals cover under 95% */
    int pooled_apart; /* paired ratios the two medians' own ratio lies outside */
    int both, only_base, only_new;
    int second_arms; /* rows of a config's second arm, either file: left aside */
    int repeated[2]; /* rows of a config the file holds already (an appended rerun) */
    /* NEW ran under a lower memory cap than BASE (a cap where BASE had
     * none): its oom says what the cap allows, not what the code does */
    long long cap[2];
    int new_cap_lower;
    /* the key columns beyond the table's own whose values differ */
    const result_column *keys[MAX_SHOWN_KEYS];
    int n_keys;
    const compare_side *side[2]; /* each side's runs after its first */
} comparison;

/* The key columns the table always shows; any other key column is shown
 * where its values differ (key_cells.h), so that no two lines read alike. */
static const char *const always_shown[] = {"model", "dtype", "mode", "reduction",
                                           "effective_batch", NULL};

/* A file's mem_cap_bytes (0: none), read as run --mem-cap reads a cap,
 * or -1 where it does not say. */
static long long cap_of(const csv_table *t)
{
    const char *v = csv_meta_get(t, "mem_cap_bytes");
    uint64_t cap;
    char why[200];
    return v && *v && !parse_bytes("mem_cap_bytes", v, &cap, why, sizeof why) &&
                   cap <= (uint64_t)LLONG_MAX
               ? (long long)cap
               : -1;
}

static void add_pair(comparison *cmp, const csv_row *b, const csv_row *n, double min_diff)
{
    table *tb = &cmp->tb;
    run_times runs;
    runs.nb = compare_side_times(cmp->side[0], b, runs.base);
    runs.nn = compare_side_times(cmp->side[1], n, runs.now);
    verdict v = compare_rows_over(b, n, &runs, min_diff);
    if (v == VERDICT_FAILED && cmp->new_cap_lower && !strcmp(n->status, "oom"))
        v = VERDICT_CAPPED;
    cmp->counts[v]++;
    cmp->both++;
    char s1[32], s2[32], s3[32], s4[32];
    table_add(tb, b->model);
    if (strcmp(b->dtype, n->dtype)) /* --dtypes: each side's */
        table_addf(tb, "%s > %s", b->dtype, n->dtype);
    else
        table_add(tb, b->dtype);
    table_add(tb, b->mode);
    table_add(tb, b->reduction);
    for (int k = 0; k < cmp->n_keys; k++)
        key_cells_add(tb, cmp->keys[k], b);
    table_addf(tb, "%lld", (long long)b->effective_batch);
    split_arm_text(s1, sizeof s1, (long long)b->micro_batch, (long long)b->accum_steps,
                   (long long)b->last_micro_batch, (long long)b->arm);
    table_add(tb, s1);
    side_cells(cmp->side[0], b, runs.base, runs.nb, s1, s3, sizeof s1);
    side_cells(cmp->side[1], n, runs.now, runs.nn, s2, s4, sizeof s2);
    table_add(tb, s1);
    table_add(tb, s2);
    /* the ratio the verdict was drawn from, with its interval */
    char ratio[128] = "-";
    if (v <= VERDICT_WITHIN || v == VERDICT_TOO_FEW) {
        int over_runs;
        paired_ratio p = compare_ratio(b, n, &runs, &over_runs);
        ratio_text(ratio, sizeof ratio, p.ratio, p.lo, p.hi);
        double cover = least_coverage(b, n);
        /* timed apart from fewer than 6 steps or rounds: the level the
         * bands hold, beside the ratio drawn from them */
        if (!p.rounds && !isnan(p.lo) && cover < MEDIAN_CI_LEVEL - 1e-9) {
            size_t used = strlen(ratio);
            snprintf(ratio + used, sizeof ratio - used, " (%.3g%%)", 100 * cover);
            cmp->short_level++;
        }
        /* the rounds against the pooled medians, as the report says it
         * (a ratio over runs had no rounds to disagree) */
        char apart[200] = "";
        if (!over_runs)
            paired_pooled_remark(&p, n->step_ms_median / b->step_ms_median, apart, sizeof apart);
        if (*apart) {
            strncat(ratio, " *", sizeof ratio - strlen(ratio) - 1);
            cmp->pooled_apart++;
        }
    }
    table_add(tb, ratio);
    table_addf(tb, "%s / %s", s3, s4);
    if (v == VERDICT_FAILED) /* new's own status: a skip is no crash, and its note says why */
        table_addf(tb, "%s in new", n->status && *n->status ? n->status : "not run");
    else
        table_add(tb, verdict_words(v, min_diff).s);
}

/* Whether row r takes part on side k: every row, or under --dtypes only
 * that side's dtype's. */
static int on_side(const char (*dtypes)[16], int k, const csv_row *r)
{
    return !dtypes[k][0] || !strcmp(r->dtype, dtypes[k]);
}

/* Each file's configs by key: the first row of each is the one compared,
 * and a config listed twice in BASE is compared once. A config's second
 * arm (an A/A check, RESULT_SECOND_ARM) is left aside: the config is
 * compared once, from its first arm, and counted once in the tally and
 * the exit status. */
static void compare_tables(const csv_table t[2], csv_row *const rows[2],
                           const compare_side side[2], const char (*dtypes)[16],
                           double min_diff, comparison *cmp)
{
    static const char *const before[] = {"model", "dtype", "mode", "reduction"};
    static const char *const after[] = {"E", "micro x K", "base ms", "new ms", "new/base",
                                        "noise % b/n", "verdict"};
    const char *head[4 + MAX_SHOWN_KEYS + 7 + 1];
    char align[sizeof head / sizeof *head] = "llll";
    int n = 4;
    memset(cmp, 0, sizeof *cmp);
    for (int k = 0; k < 2; k++) {
        cmp->cap[k] = cap_of(&t[k]);
        cmp->side[k] = &side[k];
    }
    cmp->new_cap_lower = cmp->cap[0] >= 0 && cmp->cap[1] > 0 &&
                         (cmp->cap[0] == 0 || cmp->cap[1] < cmp->cap[0]);
    key_rows sets[2] = {{rows[0], t[0].rows, NULL}, {rows[1], t[1].rows, NULL}};
    cmp->n_keys = (int)key_cells_differing(sets, 2, always_shown, cmp->keys, MAX_SHOWN_KEYS);
    memcpy(head, before, sizeof before);
    for (int k = 0; k < cmp->n_keys; k++) {
        align[n] = cmp->keys[k]->type == RESULT_IS_TEXT ? 'l' : 'r';
        head[n++] = cmp->keys[k]->name;
    }
    for (size_t k = 0; k < sizeof after / sizeof *after; k++) {
        align[n] = k + 1 < sizeof after / sizeof *after ? 'r' : 'l';
        head[n++] = after[k];
    }
    head[n] = NULL;
    align[n] = '\0';
    table_init(&cmp->tb, align, head);
    /* under --dtypes a config's twin is the same config but for its dtype */
    row_key config = dtypes[0][0] ? row_key_config_but("dtype") : row_key_config();
    row_index ix[2];
    int ix_ok = 0;
    for (int k = 0; k < 2; k++)
        ix_ok += row_index_init(&ix[k], &config, rows[k], t[k].rows) == 0;
    for (int k = 0; k < 2 && ix_ok == 2; k++)
        for (size_t i = 0; i < t[k].rows; i++)
            if (on_side(dtypes, k, &rows[k][i]))
                row_index_add(&ix[k], i);
    for (size_t i = 0; i < t[0].rows && ix_ok == 2; i++) {
        const csv_row *b = &rows[0][i];
        if (!on_side(dtypes, 0, b))
            continue;
        if (b->repeat) { /* csv_load's mark: a config run again */
            cmp->repeated[0]++;
            continue;
        }
        if (RESULT_SECOND_ARM(b)) {
            cmp->second_arms++;
            continue;
        }
        size_t j = row_index_find(&ix[1], b);
        if (j == ROW_NONE)
            cmp->only_base++;
        else
            add_pair(cmp, b, &rows[1][j], min_diff);
    }
    for (size_t j = 0; j < t[1].rows && ix_ok == 2; j++) {
        if (!on_side(dtypes, 1, &rows[1][j]))
            continue;
        if (rows[1][j].repeat)
            cmp->repeated[1]++;
        else if (RESULT_SECOND_ARM(&rows[1][j]))
            cmp->second_arms++;
        else
            cmp->only_new += row_index_find(&ix[0], &rows[1][j]) == ROW_NONE;
    }
    for (int k = 0; k < 2; k++)
        row_index_free(&ix[k]);
    if (ix_ok != 2)
        cmp->tb.failed = 1;
}

/* What differs between the runs beyond the code, or is not one row a
 * config: the GEMM library or its threads (no row says them), and configs
 * a file holds twice (an --append of a rerun), of which the first row is
 * compared. */
static void print_setup_notes(const compare_options *c, const comparison *cmp,
                              const csv_table t[2])
{
    const char *lib0 = csv_meta_get(&t[0], "library"), *lib1 = csv_meta_get(&t[1], "library");
    if (lib0 && lib1 && strcmp(lib0, lib1))
        printf("# library: base '%s', new '%s': the GEMM library or its threads differ, "
               "part of any change below\n", lib0, lib1);
    for (int k = 0; k < 2; k++)
        if (cmp->repeated[k]) {
            char said[4400];
            row_index_repeats_sentence(cmp->repeated[k], c->paths[k], said, sizeof said);
            printf("# repeated: %s\n", said);
        }
}

/* The table and its summary line; the exit code. */
static int print_comparison(const compare_options *c, const comparison *cmp,
                            const csv_table t[2], const char *dev0, const char *dev1,
                            const char *new_unfinished)
{
    const int *counts = cmp->counts;
    if (cmp->tb.failed) {
        fprintf(stderr, "accubench: out of memory building the comparison\n");
        return 2;
    }
    if (!cmp->both) {
        char key[256];
        result_key_names(key, sizeof key, ", ");
        fprintf(stderr, "accubench: %s and %s share no config (%s)\n", c->paths[0],
                c->paths[1], key);
        return 2;
    }
    printf("# accubench compare\n# base: %s (%s)\n# new:  %s (%s)\n", c->paths[0], dev0,
           c->paths[1], dev1);
    if (c->dtypes[0][0])
        printf("# dtypes: base's rows in %s against new's in %s, each config against its "
               "twin but for the dtype; rows timed in the same interleaved rounds (one run "
               "of --dtype %s,%s) pair round by round\n", c->dtypes[0], c->dtypes[1],
               c->dtypes[0], c->dtypes[1]);
    print_setup_notes(c, cmp, t);
    int several = c->side[0].n > 1 || c->side[1].n > 1;
    if (several)
        printf("# runs: %d base, %d new; a config's ms is the geometric mean over the runs "
               "it ran in, its ratio over those runs (each run one draw: Welch's 95%% interval "
               "on their logs, holding the machine's change from run to run; one run a side "
               "takes the other side's spread); 2 runs in all: as one run a side\n",
               c->side[0].n, c->side[1].n);
    int one_run = c->dtypes[0][0] && !strcmp(c->paths[0], c->paths[1]); /* its own rounds */
    printf("# verdict: slower/faster only when the ratio's interval (%s%sthe widest the two "
           "runs' 95%% intervals of the median allow, else their p10..p90) clears %g%%; the "
           "same within %g%% when the whole interval lies inside that band; not yet "
           "separated when it reaches past the band's edge\n",
           several ? "the runs', else " : "",
           one_run ? "paired round by round where the two rows were timed in the same "
                     "rounds, else " : "",
           c->min_diff * 100, c->min_diff * 100);
    if (!several && !one_run)
        printf("# runs timed apart: each band holds its own run's noise, not the machine's "
               "change between the runs; on a shared machine, run both again before trusting "
               "a slower, or name several runs a side (docs/charts-and-reports.md)\n");
    printf("# noise %% b/n: half of each run's band, in %% of its median%s\n\n",
           several ? "; a side of several runs: their spread (the standard deviation of their "
                     "logs), in %" : "");
    if (cmp->short_level)
        printf("# short intervals: %d %s of a row timed over 5 steps or rounds or fewer, "
               "whose bands cover their medians less often than 95%%: the level is beside "
               "the ratio; under %d a side the verdict is \"too few samples\", no evidence "
               "either way (time more steps: --min-samples)\n\n",
               cmp->short_level, plural(cmp->short_level, "ratio", "ratios"), FIGURES_MIN_DRAWS);
    if (cmp->pooled_apart)
        printf("# *: %d paired %s whose medians' own ratio lies outside the interval: the "
               "rounds disagreed with the pooled steps, and the verdict follows the rounds' "
               "ratios\n\n",
               cmp->pooled_apart, plural(cmp->pooled_apart, "ratio", "ratios"));
    if (cmp->new_cap_lower)
        printf("# memory cap: new %lld bytes, base %s: an oom of new's is its lower cap's, "
               "not counted as a regression\n\n", cmp->cap[1],
               cmp->cap[0] ? "higher" : "none");
    table_write_md(&cmp->tb, stdout);
    printf("\ncompare: %d %s in both: %d %s, %d %s, %d %s, %d %s at this noise", cmp->both,
           plural(cmp->both, "config", "configs"), counts[VERDICT_SLOWER],
           verdict_words(VERDICT_SLOWER, c->min_diff).s, counts[VERDICT_FASTER],
           verdict_words(VERDICT_FASTER, c->min_diff).s, counts[VERDICT_WITHIN],
           verdict_words(VERDICT_WITHIN, c->min_diff).s, counts[VERDICT_NOT_SEPARATED],
           verdict_words(VERDICT_NOT_SEPARATED, c->min_diff).s);
    if (counts[VERDICT_FAILED])
        printf(", %d ran in base, not in new", counts[VERDICT_FAILED]);
    if (counts[VERDICT_FIXED])
        printf(", %d now run", counts[VERDICT_FIXED]);
    if (counts[VERDICT_NOT_RUN])
        printf(", %d ran in neither", counts[VERDICT_NOT_RUN]);
    if (counts[VERDICT_CAPPED])
        printf(", %d oom under new's lower cap", counts[VERDICT_CAPPED]);
    if (counts[VERDICT_TOO_FEW])
        printf(", %d too few samples to judge", counts[VERDICT_TOO_FEW]);
    printf("; %d only in base, %d only in new", cmp->only_base, cmp->only_new);
    if (cmp->second_arms)
        printf("; %d %s of a config's second arm left aside (an A/A check: the same config "
               "timed again)", cmp->second_arms, plural(cmp->second_arms, "row", "rows"));
    putchar('\n');
    /* configs of base that an unfinished new run never reached stopped
     * running as surely as a failed one: a script's `compare || alarm`
     * must not pass a crashed or interrupted benchmark */
    int cut_short = *new_unfinished && cmp->only_base > 0;
    if (cut_short)
        printf("compare: the new run did not finish (%s): %d %s of base not reached\n",
               new_unfinished, cmp->only_base, plural(cmp->only_base, "config", "configs"));
    return (counts[VERDICT_SLOWER] || counts[VERDICT_FAILED] || cut_short) ? 1 : 0;
}

int compare_main(int argc, char **argv)
{
    compare_options c;
    int rc = parse_compare_args(argc, argv, &c);
    if (rc >= 0)
        return rc;
    csv_table t[2];
    csv_row *rows[2];
    if (load_both(&c, t, rows)) {
        compare_side_free(&c.side[0]);
        compare_side_free(&c.side[1]);
        return 2;
    }
    const char *dev0 = device_of(&t[0], rows[0]), *dev1 = device_of(&t[1], rows[1]);
    rc = same_setup(&c, &t[0], rows[0], c.paths[0], &t[1], rows[1], c.paths[1]);
    if (!rc)
        rc = load_runs(&c, t, rows);
    if (!rc) {
        comparison cmp;
        compare_tables(t, rows, c.side, (const char (*)[16])c.dtypes, c.min_diff, &cmp);
        const char *unfinished = csv_meta_get(&t[1], CSV_UNFINISHED);
        rc = print_comparison(&c, &cmp, t, dev0, dev1, unfinished ? unfinished : "");
        table_free(&cmp.tb);
    }
    for (int k = 0; k < 2; k++) {
        free(rows[k]);
        csv_free(&t[k]);
        compare_side_free(&c.side[k]);
    }
    return rc;
}
