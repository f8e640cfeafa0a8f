#include "plan.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "backend_registry.h"
#include "csv_lock.h"
#include "dp_projection.h"
#include "goodput_plan.h"
#include "noise_plan.h"
#include "options.h"
#include "output_path.h"
#include "parse.h"
#include "plan_jobs.h"
#include "plan_probe.h"
#include "plan_recommend.h"
#include "plan_split.h"

typedef struct plan_args {
    int effective, max_micro, devices;
    int find_max_micro;
    int recommend;      /* --recommend */
    int dtype_given;
    int budget_given;   /* --budget-s: the measuring run's, not the default */
    int model_given;    /* --model was named (run's default, S, does not count) */
    int devices_given;
    int recompute_given;
    uint64_t reserve;   /* --reserve: kept from --mem-cap in a plan from the arithmetic */
    run_options shared; /* model, dtype, optimizer, backend, mem-cap, buffers, recompute */
    projection_options proj; /* --fit and its options */
    const char *noise_csv;   /* --noise FILE.csv */
    const char *from_csv;    /* --recommend --from FILE.csv */
    const char *time_csv;    /* --time-to-target FILE.csv */
    double target_loss;      /* --target-loss; NAN: the highest final loss among the E */
    int table;               /* --table */
    int curve_table;         /* --curve-table */
    const char *goal;        /* --goal: step (default) or time */
} plan_args;

/* The keys plan shares with run: run's rows parse them into a->shared. */
static const char *const SHARED[] = {"model",     "dtype", "optimizer", "backend",
                                     "mem-cap",   "buffers", "recompute", "csv",
                                     "append",    "replace", "budget-s"};
#define N_SHARED (sizeof SHARED / sizeof SHARED[0])

static int set_fit(void *target, const option_def *d, const char *value, char *why, size_t n)
{
    plan_args *a = target;
    if (!*value) {
        snprintf(why, n, "--%s needs a CSV file", d->key);
        return -1;
    }
    if (strcmp(d->key, "noise") == 0)
        a->noise_csv = value; /* argv outlives the plan */
    else if (strcmp(d->key, "from") == 0)
        a->from_csv = value;
    else if (strcmp(d->key, "time-to-target") == 0)
        a->time_csv = value;
    else
        a->proj.csv_path = value;
    return 0;
}

static int set_goal(void *target, const option_def *d, const char *value, char *why,
                    size_t n)
{
    if (strcmp(value, "step") && strcmp(value, "time")) {
        snprintf(why, n, "--%s must be step or time, got '%s'", d->key, value);
        return -1;
    }
    ((plan_args *)target)->goal = value; /* argv outlives the plan */
    return 0;
}

/* A comma list of device counts (at most 32). */
static int set_fit_devices(void *target, const option_def *d, const char *value, char *why,
                           size_t n)
{
    plan_args *a = target;
    char copy[512], *items[32];
    if (strlen(value) >= sizeof copy) {
        snprintf(why, n, "--%s: a list of at most %zu characters, got %zu", d->key,
                 sizeof copy - 1, strlen(value)); /* never cut: 2,000...016 is not 2,1 */
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", value);
    int count = split_list(d->key, copy, items, 32, why, n);
    for (int i = 0; i < count; i++) {
        long long x;
        if (parse_int(d->key, items[i], 1, 1 << 20, &x, why, n))
            return -1;
        a->proj.fit_devices[i] = (int)x;
    }
    a->proj.n_fit_devices = count < 0 ? 0 : count;
    return count < 0 ? -1 : 0;
}

#define PLAN_INT(k, f, h) .key = k, .arg = "N", .type = OPTION_INT, \
                          .offset = offsetof(plan_args, f), .min = 1, .max = 1 << 20, .help = h

static const option_def PLAN_OPTIONS[] = {
    {PLAN_INT("effective", effective, "the effective batch")},
    {PLAN_INT("max-micro", max_micro, "the largest micro-batch that fits")},
    {PLAN_INT("devices", devices, "devices the effective batch is split over; with --fit, "
                                  "the count to predict at"),
     .shown = "1; with --fit 8 to 1024"},
    {.key = "find-max-micro", .type = OPTION_FLAG, .offset = offsetof(plan_args, find_max_micro),
     .help = "the largest micro-batch that fits, by probing the device: with --model, and "
             "--mem-cap, --effective, --dtype, --backend, --recompute (one answer each)"},
    {.key = "reserve", .arg = "BYTES", .type = OPTION_BYTES, .offset = offsetof(plan_args, reserve),
     .shown = "0",
     .help = "with --find-max-micro and --mem-cap: bytes of the cap kept for what the need "
             "does not count (the runtime's context, the GEMM workspace, the allocator's "
             "reserve), as a GPU that is not here needs (its answer comes from the exact "
             "need); a run on that device measures it as mem_held_bytes - mem_need_bytes"},
    {.key = "fit", .arg = "FILE.csv", .type = OPTION_CUSTOM, .set = set_fit,
     .help = "data parallel past this machine: a ring all-reduce model fitted to the "
             "all-reduces FILE measured, and per measured split the predicted step time and "
             "communication share at --devices, per micro-batch and per window"},
    {.key = "recommend", .type = OPTION_FLAG, .offset = offsetof(plan_args, recommend),
     .help = "the configurations that reach --effective within --mem-cap, fastest first, "
             "and why each faster one was left out: from --from's rows, or measured briefly "
             "here (into --csv, a new results/recommend-DATE.csv by default)"},
    {.key = "from", .arg = "FILE.csv", .type = OPTION_CUSTOM, .set = set_fit,
     .help = "with --recommend: the measured rows to rank"},
    {.key = "noise", .arg = "FILE.csv", .type = OPTION_CUSTOM, .set = set_fit,
     .help = "each effective batch of FILE against the gradient noise scale measured at it"},
    {.key = "time-to-target", .arg = "FILE.csv", .type = OPTION_CUSTOM, .set = set_fit,
     .help = "is E right: per effective batch of FILE's --train-steps curves, the steps and "
             "examples to a target loss, the fitted critical batch beside the noise scale, and "
             "the time to target at the fastest split within --mem-cap"},
    {.key = "target-loss", .arg = "X", .type = OPTION_REAL,
     .offset = offsetof(plan_args, target_loss), .lo = 1e-30, .hi = 1e30,
     .shown = "the highest final loss among the E", .help = "with --time-to-target: the loss to reach"},
    {.key = "goal", .arg = "step|time", .type = OPTION_CUSTOM, .set = set_goal,
     .shown = "step",
     .help = "with --recommend: step ranks the ways to --effective by step time; time ranks "
             "the effective batches of --from's --train-steps curves by time to a target "
             "loss (--target-loss), each at its fastest split within --mem-cap"},
    {.key = "table", .type = OPTION_FLAG, .offset = offsetof(plan_args, table),
     .help = "with --time-to-target: a CSV table (the chart's) instead of the text"},
    {.key = "curve-table", .type = OPTION_FLAG, .offset = offsetof(plan_args, curve_table),
     .help = "with --time-to-target: each E's kept curve (its best rate) against the "
             "examples seen, a CSV (the loss chart's) instead of the text"},
    {.key = "fit-devices", .arg = "LIST", .type = OPTION_CUSTOM, .set = set_fit_devices,
     .shown = "every count in the file",
     .help = "fit only at these counts; the others check it"},
    {.key = "bw", .arg = "GBPS", .type = OPTION_REAL, .offset = offsetof(plan_args, proj.bw_gbps),
     .lo = 1e-6, .hi = 1e6, .help = "with --latency-us: the model as given, not fitted"},
    {.key = "latency-us", .arg = "US", .type = OPTION_REAL,
     .offset = offsetof(plan_args, proj.latency_us), .lo = 0, .hi = 1e9,
     .help = "with --bw: the all-reduce's latency"},
};
static const option_table plan_table = {PLAN_OPTIONS,
                                        (int)(sizeof PLAN_OPTIONS / sizeof PLAN_OPTIONS[0])};

static const char PLAN_USAGE[] =
    "usage: accubench plan --effective N --max-micro N [--devices N]\n"
    "       accubench plan --find-max-micro --model NAME [options]\n"
    "       accubench plan --fit FILE.csv [--devices N] [--fit-devices LIST]\n"
    "                      [--bw GBPS --latency-us US]\n"
    "       accubench plan --noise FILE.csv\n"
    "       accubench plan --time-to-target FILE.csv [--target-loss X] [--mem-cap BYTES]\n"
    "                      [--table | --curve-table]\n"
    "       accubench plan --recommend --effective N --mem-cap BYTES [--devices N]\n"
    "                      [--from FILE.csv | --dtype LIST] [--model NAME]\n"
    "       accubench plan --recommend --goal time --from FILE.csv [--mem-cap BYTES]\n"
    "                      [--target-loss X]\n";

/* run's rows as run says them (run_usage_edit), but for --budget-s: in plan
 * it is the measuring run's, whose default is shorter than run's. */
static option_usage_edit run_usage_edit;
static void plan_shared_edit(const option_def *d, char *help, size_t help_len, char *shown,
                             size_t shown_len)
{
    if (run_usage_edit)
        run_usage_edit(d, help, help_len, shown, shown_len);
    if (strcmp(d->key, "budget-s") == 0) {
        snprintf(help, help_len, "with --recommend: the measuring run's time budget a config");
        snprintf(shown, shown_len, "%s", MEASURE_BUDGET_DEFAULT);
    }
    /* run's words say how a sweep runs its dtypes; plan answers per dtype */
    if (strcmp(d->key, "dtype") == 0) {
        /* run's words up to their colon name the dtypes (the dtype table's),
         * and its default names each backend's own (the backend table's) */
        char names[300], backends_own[300];
        snprintf(names, sizeof names, "%.*s", (int)strcspn(help, ":"), help);
        snprintf(backends_own, sizeof backends_own, "%s", shown);
        snprintf(help, help_len, "%s: with --find-max-micro one answer per dtype; a measuring "
                                 "--recommend ranks every dtype listed, timed in the same "
                                 "rounds", names);
        snprintf(shown, shown_len, "%s with --find-max-micro, every dtype the backend "
                                   "computes in with --recommend", backends_own);
    }
    /* plan answers for one model: --find-max-micro needs it named, and
     * --recommend --from takes the file's one model unless named */
    if (strcmp(d->key, "model") == 0) {
        char all[600];
        snprintf(all, sizeof all, "%s", help);
        snprintf(help, help_len, "one model: %s", all);
        snprintf(shown, shown_len, "S where --recommend measures; none elsewhere");
    }
}

void plan_usage(FILE *f, option_usage_edit edit)
{
    fputs(PLAN_USAGE, f);
    fputs("\nplan options:\n", f);
    option_usage(f, &plan_table, edit);
    fputs("as for run:\n", f);
    option_shared shared = {&run_option_table, SHARED, (int)N_SHARED, NULL};
    run_usage_edit = edit;
    option_usage_shared(f, &shared, plan_shared_edit);
}

void plan_print_keys(FILE *f)
{
    for (int i = 0; i < plan_table.count; i++)
        fprintf(f, "%s\n", plan_table.defs[i].key);
    for (size_t i = 0; i < N_SHARED; i++)
        fprintf(f, "%s\n", SHARED[i]);
}

static int is_shared(const char *key)
{
    for (size_t i = 0; i < N_SHARED; i++)
        if (strcmp(key, SHARED[i]) == 0)
            return 1;
    return 0;
}

/* plan's own flags, and run's among the shared keys (--append, --replace). */
static int plan_is_flag(const char *key)
{
    return option_is_flag(&plan_table, key) || (is_shared(key) && options_is_flag(key));
}

static int plan_is_known(const char *key)
{
    return is_shared(key) || option_find(&plan_table, key) != NULL;
}

/* plan's own rows only: a row shared with run may take one value here
 * where run takes a list (one --model). */
static int plan_takes_list(const char *key)
{
    return option_takes_list(&plan_table, key);
}

/* plan's own rows, else run's for a shared key (into a->shared). */
static int plan_set(plan_args *a, const char *key, const char *value, char *why, size_t n)
{
    option_shared shared = {&run_option_table, SHARED, (int)N_SHARED, &a->shared};
    return option_set_with(&plan_table, a, &shared, "plan", key, value, why, n);
}

/* plan: the arithmetic of one split. */
static int plan_split(const plan_args *a)
{
    char why[300];
    if (!a->effective || !a->max_micro) {
        plan_usage_error("plan needs --effective N and --max-micro N (or --find-max-micro)");
        return 2;
    }
    if (plan_split_write(stdout, a->effective, a->max_micro, a->devices, why, sizeof why)) {
        plan_usage_error(why);
        return 2;
    }
    return 0;
}

/* The measured rows' default place, as run names its own: a new file in
 * results/ (made when missing, as run makes its --out), never one that
 * is there (csv_claim_new). 0, or -1 with the reason. */
static int claim_default_csv(char *path, size_t cap, char *why, size_t n)
{
    char stem[64], stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
    snprintf(stem, sizeof stem, "results/recommend-%s", stamp);
    if (output_path_check("the measured rows' default folder", "results", OUTPUT_DIR, why, n))
        return -1;
    return csv_claim_new(stem, path, cap, why, n);
}

/* plan --recommend: its own checks are in plan_recommend.c. */
static int plan_recommend_of(const plan_args *a, char *why, size_t n)
{
    if (backend_check_name(a->shared.backend, why, n)) {
        plan_usage_error(why);
        return 2;
    }
    if (!a->from_csv && (a->shared.append || a->shared.replace) && !a->shared.csv_path[0]) {
        plan_usage_error("--append and --replace go with --csv FILE");
        return 2;
    }
    char claimed[1300] = "";
    if (!a->from_csv && !a->shared.csv_path[0] &&
        claim_default_csv(claimed, sizeof claimed, why, n)) {
        plan_usage_error(why);
        return 2;
    }
    recommend_args r = {.effective = a->effective, .devices = a->devices,
                        .shared = &a->shared, .model_given = a->model_given,
                        .dtype_given = a->dtype_given, .budget_given = a->budget_given,
                        .from = a->from_csv,
                        .out_csv = claimed[0] ? claimed : a->shared.csv_path};
    int rc = plan_recommend(&r);
    struct stat st;
    /* A name claimed here and never written (refused before measuring) is
     * given up again. */
    if (claimed[0] && stat(claimed, &st) == 0 && st.st_size == 0)
        unlink(claimed);
    return rc;
}

/* plan does one job a call: two named would leave one silently undone. */
static int one_job(const plan_args *a, char *why, size_t n)
{
    const struct {
        int given;
        const char *name;
    } jobs[] = {{a->recommend, "--recommend"},       {a->find_max_micro, "--find-max-micro"},
                {a->noise_csv != NULL, "--noise"},   {a->time_csv != NULL, "--time-to-target"},
                {a->proj.csv_path != NULL, "--fit"}};
    const char *first = NULL;
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        if (!jobs[i].given)
            continue;
        if (first) {
            snprintf(why, n, "%s and %s are two jobs: give one a call", first, jobs[i].name);
            return -1;
        }
        first = jobs[i].name;
    }
    return 0;
}

/* The job the options chose (one_job() has refused two). --goal time and
 * --from choose theirs too: given without --recommend, plan_job_reads()
 * says what they go with. */
static plan_job job_of(const plan_args *a)
{
    if (a->goal && !strcmp(a->goal, "time"))
        return PLAN_GOAL_TIME;
    if (a->from_csv)
        return PLAN_RECOMMEND_FROM;
    if (a->recommend)
        return PLAN_RECOMMEND;
    if (a->find_max_micro)
        return PLAN_PROBE;
    if (a->noise_csv)
        return PLAN_NOISE;
    if (a->time_csv)
        return PLAN_TIME;
    return a->proj.csv_path ? PLAN_FIT : PLAN_SPLIT;
}

int plan_main(int argc, char **argv, option_usage_edit help_edit)
{
    plan_args a = {.devices = 1, .proj = {.latency_us = -1}, .target_loss = NAN};
    options_defaults(&a.shared);
    char why[600];
    args in;
    arg_kind k;
    plan_given given = {.n = 0};
    args_init(&in, argc, argv, plan_is_flag);
    in.is_known = plan_is_known;
    in.takes_list = plan_takes_list;
    while ((k = args_next(&in, why, sizeof why)) != ARG_END) {
        if (k == ARG_HELP) {
            plan_usage(stdout, help_edit);
            return 0;
        }
        if (k == ARG_POSITIONAL)
            snprintf(why, sizeof why, "unexpected argument '%s'", in.value);
        if (k != ARG_OPTION || plan_set(&a, in.key, in.value, why, sizeof why)) {
            plan_usage_error(why);
            return 2;
        }
        plan_given_add(&given, in.key);
        a.model_given |= strcmp(in.key, "model") == 0;
        a.devices_given |= strcmp(in.key, "devices") == 0;
        a.recompute_given |= strcmp(in.key, "recompute") == 0;
        a.dtype_given |= strcmp(in.key, "dtype") == 0;
        a.budget_given |= strcmp(in.key, "budget-s") == 0;
    }
    if (one_job(&a, why, sizeof why)) {
        plan_usage_error(why);
        return 2;
    }
    /* which option goes with which job: plan_jobs.c's table */
    plan_job job = job_of(&a);
    if (plan_job_reads(job, &given, why, sizeof why)) {
        plan_usage_error(why);
        return 2;
    }
    if (a.reserve && a.reserve >= a.shared.mem_cap) {
        snprintf(why, sizeof why, "--reserve %llu leaves nothing of --mem-cap %llu",
                 (unsigned long long)a.reserve, (unsigned long long)a.shared.mem_cap);
        plan_usage_error(why);
        return 2;
    }
    switch (job) {
    case PLAN_GOAL_TIME: {
        goodput_plan_args g = {.csv_path = a.from_csv, .target = a.target_loss,
                               .mem_cap = a.shared.mem_cap ? (int64_t)a.shared.mem_cap : -1,
                               .rank = 1};
        return goodput_plan_main(stdout, &g);
    }
    case PLAN_RECOMMEND:
    case PLAN_RECOMMEND_FROM:
        return plan_recommend_of(&a, why, sizeof why);
    case PLAN_NOISE:
        return noise_plan_main(stdout, a.noise_csv);
    case PLAN_TIME: {
        if (a.table && a.curve_table) {
            plan_usage_error("--table and --curve-table: one table at a time");
            return 2;
        }
        goodput_plan_args g = {.csv_path = a.time_csv, .target = a.target_loss,
                               .mem_cap = a.shared.mem_cap ? (int64_t)a.shared.mem_cap : -1,
                               .table = a.table, .curve_table = a.curve_table};
        return goodput_plan_main(stdout, &g);
    }
    case PLAN_FIT:
        if ((a.proj.bw_gbps > 0) != (a.proj.latency_us >= 0)) {
            plan_usage_error("plan --fit takes --bw and --latency-us together, or neither");
            return 2;
        }
        if (a.devices_given) {
            a.proj.devices[a.proj.n_devices++] = a.devices;
        } else {
            for (int d = 8; d <= 1024; d *= 2)
                a.proj.devices[a.proj.n_devices++] = d;
        }
        return projection_main(stdout, &a.proj);
    case PLAN_SPLIT:
    case PLAN_PROBE:
        break;
    }
    if (backend_check_name(a.shared.backend, why, sizeof why)) {
        plan_usage_error(why);
        return 2;
    }
    if (a.shared.note[0])
        fprintf(stderr, "accubench: note: %s\n", a.shared.note);
    if (job == PLAN_PROBE)
        return plan_probe(&(probe_args){.shared = &a.shared, .effective = a.effective,
                                        .max_micro = a.max_micro, .devices = a.devices,
                                        .model_given = a.model_given,
                                        .recompute_given = a.recompute_given,
                                        .reserve = a.reserve});
    return plan_split(&a);
}
