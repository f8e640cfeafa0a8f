/* accubench: what gradient accumulation costs, measured.
 *
 *   accubench run [--profile NAME|FILE] [--key value ...]
 *   accubench plan --effective N --max-micro N [--devices N]
 *   accubench report FILE.csv | compare BASE.csv NEW.csv
 *   accubench [COMMAND] --help | --version
 *
 * The program owns the backend table (backend_registry.c): it checks
 * --backend against it, opens the backend and its activity collector, and
 * hands them to the sweep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "backend_registry.h"
#include "compare.h"
#include "dp_launch.h"
#include "dp_projection.h"
#include "dump.h"
#include "name_list.h"
#include "noise_plan.h"
#include "options.h"
#include "parse.h"
#include "split.h"
#include "probe.h"
#include "registry.h"
#include "report.h"
#include "sweep.h"
#include "version.h"

#ifndef ACCUBENCH_GIT_REV
#define ACCUBENCH_GIT_REV "unknown"
#endif

static const char USAGE[] =
    "usage: accubench COMMAND [options]   (accubench COMMAND --help: its options)\n"
    "\n"
    "commands:\n"
    "  run       sweep micro-batch x accumulation x model at a fixed effective batch\n"
    "  plan      the arithmetic: accumulation steps for an effective batch\n"
    "  report    FILE.csv [--out DIR] [--mem-cap BYTES] [--no-charts]: Markdown + HTML\n"
    "  compare   BASE.csv NEW.csv [--ignore-device] [--ignore-optimizer] [--min-diff PCT]:\n"
    "            exit 1 if slower\n";

static const char RUN_USAGE[] = "usage: accubench run [--profile NAME|FILE] [--key value ...]\n";

/* The lines of the sweep's axes (model, dtype, mode, reduction, optimizer,
 * backend) are made from their tables (print_run_options). */
static const char RUN_OPTIONS[] =
    "run options (command-line values override the profile's):\n"
    "  --profile NAME|FILE   a sweep definition from profiles/ (abc, quick, default)\n"
    "  --effective LIST      effective batch sizes, e.g. 64 or 64,256\n"
    "  --micro LIST|pow2     micro-batch sizes; pow2 = every power of two up to E\n";
static const char RUN_OPTIONS_AFTER_AXES[] =
    "  --lr X                the learning rate (default 0.001)\n";
static const char RUN_OPTIONS_REST[] =
    "  --steps N             time exactly N steps (default: adaptive)\n"
    "  --budget-s S          time budget of a config's timed steps (default 2); warm-up\n"
    "                        and the trace pass keep to it too, the checks run whole\n"
    "  --max-noise PCT       stop once the relative noise is under PCT (default 2)\n"
    "  --max-step-s S        skip configs whose step would take longer (default 10)\n"
    "  --min-samples N --max-samples N --warmup N\n"
    "  --seed N --buffers N  synthetic data seed; input buffers rotated (default 3)\n"
    "  --mem-cap BYTES       emulate a smaller device (K, M, G, T suffixes; 0 = none)\n"
    "  --out DIR             where the CSV goes (default results/)\n"
    "  --csv FILE            the CSV's exact path\n"
    "  --trace FILE          one step of the first config as Chrome trace JSON\n"
    "  --trace-steps N       steps in the trace pass (default 3; 0 = none)\n"
    "  --noise-windows N     windows of the gradient noise scale, measured beside the\n"
    "                        gradient check (default 32; 0 = none; docs/noise-scale.md)\n"
    "  --train-steps N       N optimizer steps from the starting weights per config on\n"
    "                        learnable data; each step's loss into NAME.curves.csv\n"
    "  --dump DIR            the first config's window and gradient as .npy files for\n"
    "                        checks with other frameworks (docs/dump.md)\n"
    "  --no-cupti            no activity collector (for Nsight Systems)\n"
    "  --quiet               nothing on stdout (errors still go to stderr)\n";

static const char PLAN_USAGE[] =
    "usage: accubench plan --effective N --max-micro N [--devices N]\n"
    "       accubench plan --find-max-micro --model NAME [options]\n"
    "       accubench plan --fit FILE.csv [--devices N] [--fit-devices LIST]\n"
    "       accubench plan --noise FILE.csv   (E against the measured noise scale)\n"
    "                      [--bw GBPS --latency-us US]\n";

static const char PLAN_OPTIONS[] =
    "plan options:\n"
    "  --effective N --max-micro N [--devices N]\n"
    "  --find-max-micro --model NAME [--mem-cap BYTES] [--effective N] [--dtype D]\n"
    "                   [--backend B]: the largest micro-batch that fits, by probing\n"
    "  --fit FILE.csv    data parallel past this machine: a ring all-reduce model fitted\n"
    "                    to the all-reduces FILE measured (--fit-devices: only at these\n"
    "                    counts; the others check it), or --bw/--latency-us as given, and\n"
    "                    per measured split the predicted step time and communication\n"
    "                    share at --devices N (default 8 to 1024), per micro-batch and\n"
    "                    per window\n";

static void option_line(FILE *f, const char *option, const char *what)
{
    fprintf(f, "  %-21s %s\n", option, what);
}

static const char *dtype_at(int i) { return dtype_name((dtype)i); }
static const char *mode_at(int i) { return mode_name((exec_mode)i); }
static const char *reduction_at(int i) { return reduction_name((reduction)i); }
static const char *optimizer_name_at(int i) { return optimizer_name((optimizer_kind)i); }
static const char *optimizer_place_at(int i) { return optimizer_at_name((optimizer_at)i); }
static const char *sync_at(int i) { return sync_name((sync_mode)i); }

static const char *auto_dtype_of(const backend_entry *e) { return dtype_name(e->auto_dtype); }
static const char *auto_optimizer_at_of(const backend_entry *e)
{
    return optimizer_at_name(e->auto_optimizer_at);
}

/* "HEAD (default auto: X on cpu, Y on cuda)": what auto picks on each
 * backend, from its row. */
static const char *with_auto_defaults(char *out, size_t n, const char *head,
                                      const char *(*pick)(const backend_entry *))
{
    int used = snprintf(out, n, "%s (default auto:", head);
    for (size_t i = 0; i < backend_table_count && used < (int)n; i++)
        used += snprintf(out + used, n - (size_t)used, "%s %s on %s", i ? "," : "",
                         pick(&backend_table[i]), backend_table[i].name);
    if (used < (int)n)
        snprintf(out + used, n - (size_t)used, ")");
    return out;
}

/* run's options; the axes and the backends from their tables. */
static void print_run_options(FILE *f)
{
    char list[512], head[560], what[600];
    fputs(RUN_OPTIONS, f);
    option_line(f, "--model LIST", model_names());
    snprintf(head, sizeof head, "%s|%s", dtype_name(DTYPE_AUTO),
             name_list(list, sizeof list, DTYPE_COUNT, dtype_at, "|"));
    option_line(f, "--dtype NAME", with_auto_defaults(what, sizeof what, head, auto_dtype_of));
    option_line(f, "--mode LIST", name_list(list, sizeof list, MODE_COUNT, mode_at, ", "));
    snprintf(what, sizeof what, "%s (%s is right; the others are known bugs)",
             name_list(list, sizeof list, REDUCTION_COUNT, reduction_at, ", "),
             reduction_name(REDUCTION_SUM));
    option_line(f, "--reduction LIST", what);
    option_line(f, "--optimizer NAME",
                name_list(list, sizeof list, OPT_COUNT, optimizer_name_at, "|"));
    snprintf(head, sizeof head, "auto|%s: after the window, or per layer in the last backward "
             "(one device)", name_list(list, sizeof list, OPT_AT_COUNT, optimizer_place_at, "|"));
    option_line(f, "--optimizer-at WHERE",
                with_auto_defaults(what, sizeof what, head, auto_optimizer_at_of));
    option_line(f, "--devices LIST", "data parallel, under mpirun: each count on that many "
                "ranks (default: all)");
    snprintf(what, sizeof what, "%s: when the gradient all-reduce runs (default %s)",
             name_list(list, sizeof list, SYNC_COUNT, sync_at, ", "), sync_name(SYNC_WINDOW));
    option_line(f, "--sync LIST", what);
    fputs(RUN_OPTIONS_AFTER_AXES, f);
    backend_names(list, sizeof list, "|", 1);
    option_line(f, "--backend NAME", list);
    fputs(RUN_OPTIONS_REST, f);
    const backend_entry *fallback = backend_first(0);
    fprintf(f, "\nbackends (auto: the first GPU backend that answers, else %s):\n",
            fallback ? fallback->name : "none");
    for (size_t i = 0; i < backend_table_count; i++) {
        const backend_entry *e = &backend_table[i];
        fprintf(f, "  %-8s %s%s\n", e->name, e->description,
                e->create ? "" : " (not in this build)");
    }
}

static void print_usage(FILE *f)
{
    fputs(USAGE, f);
    fputc('\n', f);
    print_run_options(f);
    fputc('\n', f);
    fputs(PLAN_OPTIONS, f);
}

static void usage_error(const char *msg)
{
    fprintf(stderr, "accubench: %s (see accubench --help)\n", msg);
}

/* A command's --help: its usage on stdout, exit 0. */
static int help_run(void)
{
    fputs(RUN_USAGE, stdout);
    fputc('\n', stdout);
    print_run_options(stdout);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    /* Each line as it is printed, into a pipe or a file too: the header
     * and every row show up while the sweep runs, not at its end. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    run_options o;
    options_defaults(&o);
    char why[600];
    args a;
    arg_kind k;
    /* The profile first, so the command line overrides it; the first pass
     * also finds every malformed argument and --help. */
    args_init(&a, argc, argv, options_is_flag);
    while ((k = args_next(&a, why, sizeof why)) != ARG_END) {
        if (k == ARG_HELP)
            return help_run();
        if (k == ARG_POSITIONAL)
            snprintf(why, sizeof why, "unexpected argument '%s'", a.value);
        if (k == ARG_ERROR || k == ARG_POSITIONAL ||
            (strcmp(a.key, "profile") == 0 &&
             options_load_profile(&o, a.value ? a.value : "", argv[0], why, sizeof why))) {
            usage_error(why);
            return 2;
        }
    }
    args_init(&a, argc, argv, options_is_flag);
    while (args_next(&a, why, sizeof why) == ARG_OPTION)
        if (strcmp(a.key, "profile") != 0 && options_set(&o, a.key, a.value, why, sizeof why)) {
            usage_error(why);
            return 2;
        }
    if (backend_check_name(o.backend, why, sizeof why) ||
        options_validate(&o, why, sizeof why) ||
        (o.dump_dir[0] && dump_check_target(o.dump_dir, why, sizeof why))) {
        usage_error(why);
        return 2;
    }
    if (o.note[0])
        fprintf(stderr, "accubench: note: %s\n", o.note);
    char command[2048] = "accubench";
    for (int i = 0; i < argc; i++) {
        size_t used = strlen(command);
        snprintf(command + used, sizeof command - used, " %s", argv[i]);
    }
    run_context ctx = {.argv0 = argv[0], .git_rev = ACCUBENCH_GIT_REV, .command_line = command};
    dp_launch ranks;
    int rc = dp_launch_start(&argc, &argv, &o, command, &ranks);
    if (rc)
        return rc;

    /* The device and its collector: opened here, from the backend table,
     * and handed to the sweep. */
    char note[400], source[320];
    const backend_entry *entry;
    backend *b;
    if (backend_open(o.backend, o.dtype, &b, &entry, note, sizeof note, why, sizeof why) !=
        BK_OK) {
        fprintf(stderr, "accubench: %s\n", why);
        dp_launch_end(&ranks, NULL);
        return 2;
    }
    comm *world = NULL;
    if ((rc = dp_launch_world(&ranks, entry, b, &world))) {
        b->ops->destroy(b);
        dp_launch_end(&ranks, NULL);
        return rc;
    }
    if (note[0] && !o.quiet)
        printf("%s\n", note);
    char dtype_note[300];
    if (o.dtype == DTYPE_AUTO) {
        o.dtype = b->dtype;
        snprintf(dtype_note, sizeof dtype_note, "dtype auto: %s, because %s",
                 dtype_name(b->dtype), entry->auto_dtype_why);
        if (!o.quiet)
            printf("%s\n", dtype_note);
    } else {
        snprintf(dtype_note, sizeof dtype_note, "%s, as asked", dtype_name(o.dtype));
    }
    char optimizer_note[300];
    if (o.optimizer_at_auto) {
        o.optimizer.at = entry->auto_optimizer_at;
        snprintf(optimizer_note, sizeof optimizer_note, "%s, because %s",
                 optimizer_at_name(o.optimizer.at), entry->auto_optimizer_at_why);
    } else {
        snprintf(optimizer_note, sizeof optimizer_note, "%s, as asked",
                 optimizer_at_name(o.optimizer.at));
    }
    collector *col = NULL;
    if (o.no_cupti)
        snprintf(source, sizeof source, "off (--no-cupti)");
    else
        col = backend_open_collector(entry, b, source, sizeof source);
    sweep_device dev = {.b = b, .col = col, .trace_source = source, .note = note,
                        .dtype_note = dtype_note, .optimizer_note = optimizer_note,
                        .world = world};
    rc = sweep_run(&o, &dev, &ctx);
    dp_launch_end(&ranks, world);
    if (col)
        col->ops->destroy(col);
    b->ops->destroy(b);
    return rc;
}

typedef struct plan_args {
    long long effective, max_micro, devices;
    int find_max_micro;
    int model_given;    /* --model was named (run's default, S, does not count) */
    run_options shared; /* model, dtype, optimizer, backend, mem-cap, buffers */
    projection_options proj; /* --fit and its options */
    const char *noise_csv;   /* --noise FILE.csv */
    int devices_given;
} plan_args;

/* A comma list of device counts into list (at most 32). */
static int device_list(const char *key, const char *value, int *list, int *n, char *why,
                       size_t len)
{
    char copy[512], *items[32];
    snprintf(copy, sizeof copy, "%s", value);
    int count = split_list(key, copy, items, 32, why, len);
    for (int i = 0; i < count; i++) {
        long long d;
        if (parse_int(key, items[i], 1, 1 << 20, &d, why, len))
            return -1;
        list[i] = (int)d;
    }
    *n = count < 0 ? 0 : count;
    return count < 0 ? -1 : 0;
}

/* plan's own keys here; the ones it shares with run go through the same
 * parser as run's, so they mean and refuse exactly the same. */
static int plan_arg(plan_args *a, const char *key, const char *value, char *why, size_t n)
{
    if (strcmp(key, "find-max-micro") == 0) {
        a->find_max_micro = 1;
        return 0;
    }
    if (strcmp(key, "fit") == 0) {
        if (!value || !*value) {
            snprintf(why, n, "--fit needs a CSV file");
            return -1;
        }
        a->proj.csv_path = value;
        return 0;
    }
    if (strcmp(key, "noise") == 0 && value && *value) {
        a->noise_csv = value;
        return 0;
    }
    if (strcmp(key, "fit-devices") == 0)
        return device_list(key, value, a->proj.fit_devices, &a->proj.n_fit_devices, why, n);
    if (strcmp(key, "bw") == 0)
        return parse_real(key, value, 1e-6, 1e6, &a->proj.bw_gbps, why, n);
    if (strcmp(key, "latency-us") == 0)
        return parse_real(key, value, 0, 1e9, &a->proj.latency_us, why, n);
    long long *number = strcmp(key, "effective") == 0   ? &a->effective
                        : strcmp(key, "max-micro") == 0 ? &a->max_micro
                        : strcmp(key, "devices") == 0   ? &a->devices
                                                        : NULL;
    if (number)
        return parse_int(key, value, 1, 1 << 20, number, why, n);
    const char *shared[] = {"model", "dtype", "optimizer", "backend", "mem-cap", "buffers"};
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
        if (strcmp(key, shared[i]) == 0)
            return options_set(&a->shared, key, value, why, n);
    snprintf(why, n, "unknown plan option '--%s'", key);
    return -1;
}

/* plan --find-max-micro: ask the device, allocation by allocation. */
static int plan_probe(const plan_args *a)
{
    const run_options *o = &a->shared;
    if (!a->model_given || o->n_models != 1) {
        usage_error("plan --find-max-micro needs one --model NAME");
        return 2;
    }
    const model_spec *model = &o->models[0];
    char note[400], why[400];
    const backend_entry *entry;
    backend *b;
    if (backend_open(o->backend, o->dtype, &b, &entry, note, sizeof note, why, sizeof why) !=
        BK_OK) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    if (note[0])
        printf("%s\n", note);
    b->mem_cap = (size_t)o->mem_cap;
    probe_request req = {model, b->dtype, o->optimizer.kind, (int)a->effective, o->buffers,
                         (int)a->max_micro};
    probe_result r;
    int rc = probe_find_max_micro(b, &req, &r);
    if (rc == BK_OK || rc == BK_OOM)
        probe_print(stdout, model->name, &req, &r, (size_t)o->mem_cap);
    if (rc != BK_OK)
        fprintf(stderr, "accubench: %s\n", b->error);
    b->ops->destroy(b);
    return rc == BK_OK ? 0 : rc == BK_OOM ? 1 : 2;
}

/* plan: the arithmetic of one split. */
static int plan_split(const plan_args *a)
{
    char why[300];
    if (!a->effective || !a->max_micro) {
        usage_error("plan needs --effective N and --max-micro N (or --find-max-micro)");
        return 2;
    }
    if (a->effective % a->devices) {
        snprintf(why, sizeof why, "effective batch %lld does not split evenly over %lld devices",
                 a->effective, a->devices);
        usage_error(why);
        return 2;
    }
    long long per_device = a->effective / a->devices;
    long long micro = a->max_micro < per_device ? a->max_micro : per_device;
    split sp;
    if (split_make((int)per_device, (int)micro, (int)a->devices, &sp, why, sizeof why)) {
        usage_error(why);
        return 2;
    }
    printf("effective batch:    %lld\n", a->effective);
    printf("devices:            %d\n", sp.devices);
    printf("micro-batch:        %d\n", sp.micro);
    printf("accumulation steps: %d\n", sp.accum);
    if (sp.last != sp.micro)
        printf("last micro-batch:   %d (the division is not whole)\n", sp.last);
    printf("effective reached:  %lld = ", (long long)sp.effective * sp.devices);
    if (sp.last != sp.micro)
        printf("(%d x %d + %d)", sp.micro, sp.accum - 1, sp.last);
    else
        printf("%d x %d", sp.micro, sp.accum);
    if (sp.devices > 1)
        printf(" x %d devices", sp.devices);
    printf("\n");
    return 0;
}

static int cmd_plan(int argc, char **argv)
{
    plan_args a = {.devices = 1, .proj = {.latency_us = -1}};
    options_defaults(&a.shared);
    char why[400];
    args in;
    arg_kind k;
    args_init(&in, argc, argv, options_is_flag);
    while ((k = args_next(&in, why, sizeof why)) != ARG_END) {
        if (k == ARG_HELP) {
            fputs(PLAN_USAGE, stdout);
            fputc('\n', stdout);
            fputs(PLAN_OPTIONS, stdout);
            return 0;
        }
        if (k == ARG_POSITIONAL)
            snprintf(why, sizeof why, "unexpected argument '%s'", in.value);
        if (k != ARG_OPTION || plan_arg(&a, in.key, in.value, why, sizeof why)) {
            usage_error(why);
            return 2;
        }
        a.model_given |= strcmp(in.key, "model") == 0;
        a.devices_given |= strcmp(in.key, "devices") == 0;
    }
    if (a.noise_csv)
        return noise_plan_main(stdout, a.noise_csv);
    if (a.proj.csv_path) {
        if ((a.proj.bw_gbps > 0) != (a.proj.latency_us >= 0)) {
            usage_error("plan --fit takes --bw and --latency-us together, or neither");
            return 2;
        }
        if (a.devices_given) {
            a.proj.devices[a.proj.n_devices++] = (int)a.devices;
        } else {
            for (int d = 8; d <= 1024; d *= 2)
                a.proj.devices[a.proj.n_devices++] = d;
        }
        return projection_main(stdout, &a.proj);
    }
    if (backend_check_name(a.shared.backend, why, sizeof why)) {
        usage_error(why);
        return 2;
    }
    if (a.shared.note[0])
        fprintf(stderr, "accubench: note: %s\n", a.shared.note);
    return a.find_max_micro ? plan_probe(&a) : plan_split(&a);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("accubench %s (%s)\n", ACCUBENCH_VERSION, ACCUBENCH_GIT_REV);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "plan") == 0)
        return cmd_plan(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return report_main(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return compare_main(argc - 1, argv + 1);
    char why[300];
    snprintf(why, sizeof why, "unknown command '%s'", cmd);
    usage_error(why);
    return 2;
}
