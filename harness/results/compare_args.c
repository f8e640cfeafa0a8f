/* compare's command line (see compare_args.h). */
#include "compare_args.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "dtype_table.h"
#include "option_table.h"
#include "parse.h"

#define USAGE                                                                          \
    "usage: accubench compare BASE.csv[,BASE2.csv...] NEW.csv[,NEW2.csv...] "                \
    "[--ignore-device] [--ignore-optimizer] [--min-diff PCT] [--dtypes BASE,NEW]"

/* The CSVs named are not two: which of them came (npaths, and the third
 * when there is one), with the usage. */
static int compare_usage(const char *const *paths, int npaths, const char *third)
{
    if (third)
        fprintf(stderr, "accubench: compare: two sides, got a third: '%s' after '%s' and '%s' "
                        "(a side's runs join with commas; %s)\n", third, paths[0], paths[1], USAGE);
    else if (npaths == 1)
        fprintf(stderr, "accubench: compare: two sides, got only '%s' (%s)\n", paths[0], USAGE);
    else
        fprintf(stderr, "accubench: compare: no CSVs named (%s)\n", USAGE);
    return 2;
}

/* What compare's options set; each key is a row of COMPARE_OPTIONS. */
typedef struct compare_args {
    int ignore_device, ignore_optimizer;
    double min_diff; /* a fraction: --min-diff PCT / 100 */
    char dtypes[2][16];
} compare_args;

/* Two names of the dtype table, BASE,NEW, and not the same one. */
static int set_dtypes(void *target, const option_def *d, const char *value, char *why,
                      size_t n)
{
    compare_args *ca = target;
    size_t len = strcspn(value, ",");
    char names[2][16];
    snprintf(names[0], sizeof names[0], "%.*s", (int)(len < 15 ? len : 15), value);
    snprintf(names[1], sizeof names[1], "%s", value[len] ? value + len + 1 : "");
    for (int k = 0; k < 2; k++)
        if (axis_find(&dtype_axis, names[k]) < 0) {
            char known[160];
            snprintf(why, n, "--%s '%s': needs BASE,NEW, two of %s", d->key, value,
                     axis_names(&dtype_axis, known, sizeof known, ", "));
            return -1;
        }
    if (!strcmp(names[0], names[1])) {
        snprintf(why, n, "--%s '%s': two different dtypes (one against itself is every "
                 "config against itself)", d->key, value);
        return -1;
    }
    memcpy(ca->dtypes, names, sizeof names);
    return 0;
}

static int set_min_diff(void *target, const option_def *d, const char *value, char *why,
                        size_t n)
{
    double pct;
    if (parse_real(d->key, value, d->lo, d->hi, &pct, why, n)) {
        size_t used = strlen(why);
        snprintf(why + used, n - used, " (a percentage)");
        return -1;
    }
    ((compare_args *)target)->min_diff = pct / 100.0;
    return 0;
}

static const option_def COMPARE_OPTIONS[] = {
    {.key = "ignore-device", .type = OPTION_FLAG, .offset = offsetof(compare_args, ignore_device),
     .help = "compare runs measured on different devices"},
    {.key = "ignore-optimizer", .type = OPTION_FLAG,
     .offset = offsetof(compare_args, ignore_optimizer),
     .help = "compare runs trained with different optimizers"},
    {.key = "min-diff", .arg = "PCT", .type = OPTION_CUSTOM, .set = set_min_diff, .lo = 0,
     .hi = 1e6, .def = "2", .help = "a change whose interval does not clear PCT % reads "
                                   "\"the same within PCT%\" where the interval lies inside "
                                   "+-PCT %, else \"not yet separated\" (the run's own "
                                   "threshold)"},
    {.key = "dtypes", .arg = "BASE,NEW", .type = OPTION_CUSTOM, .set = set_dtypes,
     .help = "BASE's rows in the first dtype against NEW's in the second, each config "
             "against its twin in the other dtype; one file may be both sides (a run of "
             "--dtype fp32,bf16: paired per round)"},
};
static const option_table compare_table = {
    COMPARE_OPTIONS, (int)(sizeof COMPARE_OPTIONS / sizeof COMPARE_OPTIONS[0])};

static int compare_help(void)
{
    printf("%s\n\n", USAGE);
    printf("A side may name several runs, comma-separated (run them alternated: base, new,\n"
           "base, new, ...): each config's ratio is then taken over the runs, so that its\n"
           "interval holds the machine's change from run to run.\n\n");
    option_usage(stdout, &compare_table, NULL);
    printf("\nexit status: 0 nothing got slower, 1 a config got slower or stopped running,\n"
           "2 bad input\n");
    return 0;
}

int parse_compare_args(int argc, char **argv, compare_options *c)
{
    int npaths = 0;
    compare_args ca = {0};
    char why[300];
    args a;
    arg_kind kind;
    *c = (compare_options){0};
    option_defaults(&compare_table, &ca, why, sizeof why);
    args_init_table(&a, argc, argv, &compare_table);
    while ((kind = args_next(&a, why, sizeof why)) != ARG_END) {
        if (kind == ARG_HELP)
            return compare_help();
        if (kind == ARG_ERROR || (kind == ARG_OPTION && option_set(&compare_table, &ca, a.key,
                                                                  a.value, why, sizeof why))) {
            fprintf(stderr, "accubench: compare: %s (see accubench help compare)\n", why);
            return 2;
        }
        if (kind == ARG_POSITIONAL && npaths == 2)
            return compare_usage(c->paths, npaths, a.value);
        if (kind == ARG_POSITIONAL)
            c->paths[npaths++] = a.value;
    }
    c->ignore_device = ca.ignore_device;
    c->ignore_optimizer = ca.ignore_optimizer;
    c->min_diff = ca.min_diff;
    memcpy(c->dtypes, ca.dtypes, sizeof c->dtypes);
    if (npaths != 2)
        return compare_usage(c->paths, npaths, NULL);
    for (int k = 0; k < 2; k++) {
        if (compare_side_parse(&c->side[k], c->paths[k], why, sizeof why)) {
            fprintf(stderr, "accubench: compare: %s\n", why);
            compare_side_free(&c->side[0]);
            compare_side_free(&c->side[1]);
            return 2;
        }
        c->paths[k] = c->side[k].paths[0];
    }
    if (c->dtypes[0][0] && (c->side[0].n > 1 || c->side[1].n > 1)) {
        fprintf(stderr, "accubench: compare: --dtypes compares one run a side\n");
        compare_side_free(&c->side[0]);
        compare_side_free(&c->side[1]);
        return 2;
    }
    if (compare_sides_distinct(c->side, why, sizeof why)) {
        fprintf(stderr, "accubench: compare: %s\n", why);
        compare_side_free(&c->side[0]);
        compare_side_free(&c->side[1]);
        return 2;
    }
    return -1;
}
