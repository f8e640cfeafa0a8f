#include "usage.h"

#include <string.h>

#include "attention_kind.h"
#include "backend_registry.h"
#include "compare.h"
#include "modes.h"
#include "nearest.h"
#include "options.h"
#include "plan.h"
#include "reduction.h"
#include "registry.h"
#include "report.h"

const char USAGE_COMMANDS[] = "run, plan, report, compare, help";

static const char USAGE[] =
    "usage: accubench COMMAND [options]   (accubench help COMMAND: its options)\n"
    "\n"
    "commands:\n"
    "  run       sweep micro-batch x accumulation x model at a fixed effective batch\n"
    "  plan      a split's arithmetic, the largest micro-batch under a cap, the\n"
    "            fastest split under it, the noise scale, the time to a target loss\n"
    "  report    FILE.csv [--out DIR] [--mem-cap BYTES] [--target-loss X] [--no-charts]:\n"
    "            Markdown, HTML and JSON\n"
    "  compare   BASE.csv[,BASE2.csv...] NEW.csv[,NEW2.csv...] [--ignore-device]\n"
    "            [--ignore-optimizer] [--min-diff PCT] [--dtypes BASE,NEW]: exit 1 if\n"
    "            slower\n"
    "  help      COMMAND: that command's help\n";

static const char RUN_USAGE[] = "usage: accubench run [--profile NAME|FILE] [--key value ...]\n";

static const char *auto_dtype_of(const backend_entry *e) { return dtype_name(e->auto_dtype); }
static const char *auto_optimizer_at_of(const backend_entry *e)
{
    return optimizer_at_name(e->auto_optimizer_at);
}

/* "auto: X on cpu, Y on cuda": what auto picks on each backend, from its
 * row. */
static void auto_defaults(char *out, size_t n, const char *(*pick)(const backend_entry *))
{
    int used = snprintf(out, n, "auto:");
    for (size_t i = 0; i < backend_table_count && used < (int)n; i++)
        used += snprintf(out + used, n - (size_t)used, "%s %s on %s", i ? "," : "",
                         pick(&backend_table[i]), backend_table[i].name);
}

void usage_edit(const option_def *d, char *help, size_t help_len, char *shown,
                size_t shown_len)
{
    if (d->tag == RUN_TAG_AUTO_DTYPE)
        auto_defaults(shown, shown_len, auto_dtype_of);
    if (d->tag == RUN_TAG_AUTO_OPTIMIZER_AT)
        auto_defaults(shown, shown_len, auto_optimizer_at_of);
    if (d->tag == RUN_TAG_BACKEND) {
        char names[256], rest[300];
        backend_names(names, sizeof names, "|", 1);
        snprintf(rest, sizeof rest, "%s", help);
        snprintf(help, help_len, "%s: %s", names, rest);
    }
}

static void print_profile(const char *name, const char *summary, void *ctx)
{
    FILE *f = ctx;
    fprintf(f, "  %-12s %s\n", name, summary);
}

/* Each preset: its kind's shape and its parameter count. */
static void print_presets(FILE *f)
{
    int n_kinds;
    const model_kind *const *kinds = model_kinds(&n_kinds);
    fputs("\nmodel presets (--model NAME; or a kind and its shape, kind:key=N,...):\n", f);
    for (int k = 0; k < n_kinds; k++)
        for (int p = 0; p < kinds[k]->n_presets; p++) {
            const model_preset *pr = &kinds[k]->presets[p];
            model_spec spec;
            if (model_spec_parse(pr->name, &spec, NULL, 0))
                continue;
            char shape[200];
            int used = snprintf(shape, sizeof shape, "%s:", kinds[k]->name);
            for (int i = 0; i < kinds[k]->n_dims && used < (int)sizeof shape; i++)
                used += snprintf(shape + used, sizeof shape - (size_t)used, "%s%s=%d",
                                 i ? "," : "", kinds[k]->dims[i].key, pr->dims[i]);
            double params = (double)model_param_count(&spec);
            fprintf(f, "  %-12s %s, %.3g%s parameters\n", pr->name, shape,
                    params >= 1e9 ? params / 1e9 : params >= 1e6 ? params / 1e6 : params / 1e3,
                    params >= 1e9 ? "B" : params >= 1e6 ? "M" : "K");
        }
}

void usage_run(FILE *f)
{
    fputs(RUN_USAGE, f);
    fputs("\nrun options (command-line values override the profile's):\n", f);
    option_usage(f, &run_option_table, usage_edit);
    const backend_entry *fallback = backend_first(0);
    fprintf(f, "\nbackends (auto: the first GPU backend that answers, else %s):\n",
            fallback ? fallback->name : "none");
    for (size_t i = 0; i < backend_table_count; i++) {
        const backend_entry *e = &backend_table[i];
        fprintf(f, "  %-8s %s%s\n", e->name, e->description,
                e->create ? "" : " (not in this build)");
    }
    fputs("\nprofiles (--profile NAME, in profiles/):\n", f);
    if (options_list_profiles(print_profile, f) == 0)
        fputs("  (none found: set ACCUBENCH_ROOT to the repository)\n", f);
    print_presets(f);
    fputs("\nexit status: 0 a config ran and none failed; 1 a config failed or none ran, the "
          "device\n  was lost, the peak GEMM was not measured or --dump/--trace not written; 2 "
          "input\n  refused or the CSV not written; 130/143/129/141 interrupted (SIGINT, SIGTERM, "
          "SIGHUP,\n  SIGPIPE: the rows measured kept; docs/running.md)\n", f);
}

void usage_all(FILE *f)
{
    fputs(USAGE, f);
    fputc('\n', f);
    usage_run(f);
    fputc('\n', f);
    plan_usage(f, usage_edit);
}

int usage_help_command(const char *command)
{
    char *help[] = {(char *)command, "--help", NULL};
    if (strcmp(command, "run") == 0) {
        usage_run(stdout);
        return 0;
    }
    if (strcmp(command, "plan") == 0) {
        plan_usage(stdout, usage_edit);
        return 0;
    }
    if (strcmp(command, "report") == 0)
        return report_main(2, help);
    if (strcmp(command, "compare") == 0)
        return compare_main(2, help);
    if (strcmp(command, "help") == 0) {
        usage_all(stdout);
        return 0;
    }
    char why[300];
    snprintf(why, sizeof why, "accubench: help: unknown command '%s' (known: %s)", command,
             USAGE_COMMANDS);
    nearest_suggest(why, sizeof why, command, USAGE_COMMANDS);
    fprintf(stderr, "%s\n", why);
    return 2;
}

/* Every mode row the backend can run (mode_check_backend), one a line. */
static int list_modes(const char *backend_name)
{
    char note[400], why[600];
    const backend_entry *entry;
    backend *b;
    if (backend_open(backend_name, DTYPE_AUTO, &b, &entry, note, sizeof note, why,
                     sizeof why) != BK_OK) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    for (int m = 0; m < mode_axis.count; m++)
        if (!mode_check_backend(m, b, why, sizeof why))
            printf("%s\n", mode_name(m));
    b->ops->destroy(b);
    return 0;
}

/* The settings that run the backend's attention in each arrangement but
 * its default, "VAR=NAME" one a line (none where it has one arrangement):
 * what scripts/check_gpu.sh times beside the default, learnt from the
 * backend's row rather than from names of the script's own. Nothing is
 * opened: the setting is the row's, a device or not. */
static int list_attention(const char *name)
{
    const backend_entry *e = name ? backend_find(name) : NULL;
    if (!e) {
        char known[128];
        backend_names(known, sizeof known, ", ", 0);
        fprintf(stderr, "accubench: --list-attention: unknown backend '%s' (known: %s)\n",
                name ? name : "", known);
        return 2;
    }
    for (int k = 0; e->attention_env && k < attention_axis.count; k++)
        if (k != e->attention_default)
            printf("%s=%s\n", e->attention_env, attention_name(k));
    return 0;
}

/* Every row of run's axis option `key` (--recompute, --sync, ...), one a
 * line, in the table's order: what a script or a test loops over rather
 * than a list of names of its own. */
static int list_values(const char *key)
{
    const option_def *d = key ? option_find(&run_option_table, key) : NULL;
    const axis_option *ax = d ? d->ctx : NULL;
    if (!ax) {
        fprintf(stderr, "accubench: --list-values: '%s' is not an axis of run (one of its "
                        "options that takes a list of a table's rows)\n", key ? key : "");
        return 2;
    }
    for (int i = 0; i < ax->ax->count; i++)
        printf("%s\n", axis_name(ax->ax, i));
    return 0;
}

int usage_list(const char *what, const char *command)
{
    if (strcmp(what, "presets") == 0) {
        int n_kinds;
        const model_kind *const *kinds = model_kinds(&n_kinds);
        for (int k = 0; k < n_kinds; k++)
            for (int p = 0; p < kinds[k]->n_presets; p++)
                printf("%s\n", kinds[k]->presets[p].name);
        return 0;
    }
    if (strcmp(what, "modes") == 0) /* the rows a backend can run: check_gpu.sh's */
        return list_modes(command ? command : "auto");
    if (strcmp(what, "values") == 0)
        return list_values(command);
    if (strcmp(what, "attention") == 0)
        return list_attention(command);
    if (strcmp(what, "reductions") == 0) { /* the rows the PyTorch peer runs */
        for (int r = 0; r < REDUCTION_COUNT; r++) {
            char rule[64];
            printf("%s %s %s\n", reduction_name(r), reduction_info_of(r)->exact ? "exact"
                   : "inexact", reduction_rule(r, rule, sizeof rule));
        }
        return 0;
    }
    if (command && strcmp(command, "plan") == 0) {
        plan_print_keys(stdout);
        return 0;
    }
    if (command && strcmp(command, "run") != 0) {
        fprintf(stderr, "accubench: --list-options: run or plan, not '%s'\n", command);
        return 2;
    }
    for (int i = 0; i < run_option_table.count; i++)
        printf("%s\n", run_option_table.defs[i].key);
    return 0;
}
