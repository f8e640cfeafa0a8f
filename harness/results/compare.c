/* accubench compare: regression check between two runs (see compare.h). */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "csv_read.h"
#include "parse.h"
#include "row_index.h"
#include "table.h"

/* The band a run's step time is known to within: the 95% interval of its
 * median (step_ms_ci_lo..hi) where the file has one; else, for files from
 * before those columns, from p10 to p90 of the
 * steps, widened to median +- step_noise_pct where the run reported more
 * noise than its spread shows. Missing numbers shrink the band to the median
 * (min_diff still applies then). */
static void band(const csv_row *r, double *lo, double *hi)
{
    if (r->step_ms_ci_hi > 0 && r->step_ms_ci_lo <= r->step_ms_ci_hi) {
        /* the median's own interval, where the run measured one: two
         * configs differ only when their intervals separate */
        *lo = r->step_ms_ci_lo;
        *hi = r->step_ms_ci_hi;
        return;
    }
    double m = r->step_ms_median;
    double n = isnan(r->step_noise_pct) ? 0 : r->step_noise_pct / 100.0;
    *lo = m * (1 - n);
    *hi = m * (1 + n);
    if (!isnan(r->step_ms_p10) && r->step_ms_p10 < *lo)
        *lo = r->step_ms_p10;
    if (!isnan(r->step_ms_p90) && r->step_ms_p90 > *hi)
        *hi = r->step_ms_p90;
}

/* The rule: a config is slower only when NEW's whole band lies above BASE's
 * whole band, i.e. the difference is beyond both runs' noise, and the ratio
 * passes min_diff; faster is the mirror image; anything else is "indistinguishable" at this noise. */
verdict compare_rows(const csv_row *base, const csv_row *now, double min_diff)
{
    int base_ok = result_ran(base), now_ok = result_ran(now);
    if (!base_ok || !now_ok)
        return base_ok ? VERDICT_FAILED : now_ok ? VERDICT_FIXED : VERDICT_NOT_RUN;
    double blo, bhi, nlo, nhi;
    band(base, &blo, &bhi);
    band(now, &nlo, &nhi);
    double ratio = now->step_ms_median / base->step_ms_median;
    if (nlo > bhi && ratio > 1 + min_diff)
        return VERDICT_SLOWER;
    if (nhi < blo && ratio < 1 - min_diff)
        return VERDICT_FASTER;
    return VERDICT_SAME;
}

const char *verdict_name(verdict v)
{
    switch (v) {
    case VERDICT_SAME: return "indistinguishable";
    case VERDICT_FASTER: return "faster";
    case VERDICT_SLOWER: return "slower";
    case VERDICT_FAILED: return "failed";
    case VERDICT_FIXED: return "now runs";
    case VERDICT_NOT_RUN: return "not run";
    }
    return "?";
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

/* Relative noise of one row for the table: half its band, in percent. */
static double noise_pct(const csv_row *r)
{
    double lo, hi;
    if (!result_ran(r))
        return NAN;
    band(r, &lo, &hi);
    return (hi - lo) / 2 / r->step_ms_median * 100;
}

static const char *step_text(char *buf, size_t len, const csv_row *r)
{
    return result_ran(r) ? fmt_sig(buf, len, r->step_ms_median, 4) : r->status;
}

#define USAGE                                                                    \
    "usage: accubench compare BASE.csv NEW.csv [--ignore-device] [--ignore-optimizer] " \
    "[--min-diff PCT]"

static int usage(void)
{
    fprintf(stderr, "accubench: %s\n", USAGE);
    return 2;
}

static int help(void)
{
    printf("%s\n\n"
           "  --ignore-device   compare runs measured on different devices\n"
           "  --ignore-optimizer compare runs trained with different optimizers\n"
           "  --min-diff PCT    a change under PCT %% reads \"same\" (default 1)\n"
           "\n"
           "exit status: 0 nothing got slower, 1 a config got slower or stopped running,\n"
           "2 bad input\n",
           USAGE);
    return 0;
}

static int compare_is_flag(const char *key)
{
    return !strcmp(key, "ignore-device") || !strcmp(key, "ignore-optimizer");
}

int compare_main(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int npaths = 0, ignore_device = 0, ignore_optimizer = 0;
    double min_diff = 0.01;
    char arg_why[200];
    args a;
    arg_kind kind;
    args_init(&a, argc, argv, compare_is_flag);
    while ((kind = args_next(&a, arg_why, sizeof arg_why)) != ARG_END) {
        if (kind == ARG_HELP)
            return help();
        if (kind == ARG_OPTION && !strcmp(a.key, "ignore-device") && !a.value) {
            ignore_device = 1;
        } else if (kind == ARG_OPTION && !strcmp(a.key, "ignore-optimizer") && !a.value) {
            ignore_optimizer = 1;
        } else if (kind == ARG_OPTION && !strcmp(a.key, "min-diff")) {
            double pct;
            if (parse_real("--min-diff", a.value, 0, 1e6, &pct, arg_why, sizeof arg_why)) {
                fprintf(stderr, "accubench: %s (a percentage)\n", arg_why);
                return 2;
            }
            min_diff = pct / 100.0;
        } else if (kind == ARG_POSITIONAL && npaths < 2) {
            paths[npaths++] = a.value;
        } else {
            return usage();
        }
    }
    if (npaths != 2)
        return usage();

    csv_table t[2];
    csv_row *rows[2] = {NULL, NULL};
    char why[512];
    for (int k = 0; k < 2; k++)
        if (csv_load(paths[k], csv_required_columns, &t[k], &rows[k], why, sizeof why)) {
            fprintf(stderr, "accubench: %s\n", why);
            if (k == 1) {
                free(rows[0]);
                csv_free(&t[0]);
            }
            return 2;
        }

    int rc = 2;
    const char *dev0 = device_of(&t[0], rows[0]), *dev1 = device_of(&t[1], rows[1]);
    if (strcmp(dev0, dev1) && !ignore_device) {
        fprintf(stderr,
                "accubench: %s ran on '%s' but %s on '%s' (--ignore-device to compare anyway)\n",
                paths[0], dev0, paths[1], dev1);
        goto done;
    }
    char opt0[64], opt1[64];
    optimizer_of(&t[0], opt0, sizeof opt0);
    optimizer_of(&t[1], opt1, sizeof opt1);
    if (*opt0 && *opt1 && strcmp(opt0, opt1) && !ignore_optimizer) {
        fprintf(stderr, "accubench: %s ran optimizer '%s' but %s ran '%s' "
                        "(--ignore-optimizer to compare anyway)\n",
                paths[0], opt0, paths[1], opt1);
        goto done;
    }

    static const char *const head[] = {"model", "dtype", "mode", "reduction", "E",
                                       "micro x K", "base ms", "new ms", "new/base",
                                       "noise % b/n", "verdict", NULL};
    table tb;
    table_init(&tb, "llllrrrrrrl", head);
    int counts[VERDICT_NOT_RUN + 1] = {0}, both = 0, only_base = 0, only_new = 0;
    /* each file's configs by key: the first row of each is the one compared */
    row_key config = row_key_config();
    row_index ix[2];
    int ix_ok = 0;
    for (int k = 0; k < 2; k++)
        ix_ok += row_index_init(&ix[k], &config, rows[k], t[k].rows) == 0;
    for (int k = 0; k < 2 && ix_ok == 2; k++)
        for (size_t i = 0; i < t[k].rows; i++)
            row_index_add(&ix[k], i);
    for (size_t i = 0; i < t[0].rows && ix_ok == 2; i++) {
        const csv_row *b = &rows[0][i], *n = NULL;
        /* a config listed twice in BASE is compared once */
        if (row_index_find(&ix[0], b) != i)
            continue;
        size_t j = row_index_find(&ix[1], b);
        if (j == ROW_NONE) {
            only_base++;
            continue;
        }
        n = &rows[1][j];
        both++;
        verdict v = compare_rows(b, n, min_diff);
        counts[v]++;
        char s1[32], s2[32], s3[32], s4[32];
        table_add(&tb, b->model);
        table_add(&tb, b->dtype);
        table_add(&tb, b->mode);
        table_add(&tb, b->reduction);
        table_addf(&tb, "%lld", (long long)b->effective_batch);
        table_addf(&tb, "%lldx%lld", (long long)b->micro_batch, (long long)b->accum_steps);
        table_add(&tb, step_text(s1, sizeof s1, b));
        table_add(&tb, step_text(s2, sizeof s2, n));
        table_add(&tb, v <= VERDICT_SLOWER
                           ? fmt_sig(s3, sizeof s3, n->step_ms_median / b->step_ms_median, 3)
                           : "-");
        table_addf(&tb, "%s / %s", fmt_sig(s3, sizeof s3, noise_pct(b), 2),
                   fmt_sig(s4, sizeof s4, noise_pct(n), 2));
        table_add(&tb, verdict_name(v));
    }
    for (size_t j = 0; j < t[1].rows && ix_ok == 2; j++)
        only_new += row_index_find(&ix[0], &rows[1][j]) == ROW_NONE;
    for (int k = 0; k < 2; k++)
        row_index_free(&ix[k]);
    if (ix_ok != 2)
        tb.failed = 1;
    if (tb.failed) {
        fprintf(stderr, "accubench: out of memory building the comparison\n");
    } else if (!both) {
        char key[256];
        result_key_names(key, sizeof key);
        fprintf(stderr, "accubench: %s and %s share no config (%s)\n", paths[0], paths[1], key);
    } else {
        printf("# accubench compare\n# base: %s (%s)\n# new:  %s (%s)\n", paths[0], dev0,
               paths[1], dev1);
        printf("# verdict: slower/faster only when the new band clears the base band and the "
               "ratio differs by more than %g%%; a band is the 95%% interval of the median "
               "where the file has one, else p10..p90 widened by its noise %%\n"
               "# noise %% b/n: half of each run's band, in %% of its median\n\n",
               min_diff * 100);
        table_write_md(&tb, stdout);
        printf("\ncompare: %d configs in both: %d slower, %d faster, %d indistinguishable at this noise", both,
               counts[VERDICT_SLOWER], counts[VERDICT_FASTER], counts[VERDICT_SAME]);
        if (counts[VERDICT_FAILED])
            printf(", %d failed (ran in base)", counts[VERDICT_FAILED]);
        if (counts[VERDICT_FIXED])
            printf(", %d now run", counts[VERDICT_FIXED]);
        if (counts[VERDICT_NOT_RUN])
            printf(", %d ran in neither", counts[VERDICT_NOT_RUN]);
        printf("; %d only in base, %d only in new\n", only_base, only_new);
        rc = (counts[VERDICT_SLOWER] || counts[VERDICT_FAILED]) ? 1 : 0;
    }
    table_free(&tb);
done:
    for (int k = 0; k < 2; k++) {
        free(rows[k]);
        csv_free(&t[k]);
    }
    return rc;
}
