/* accubench: what gradient accumulation costs, measured.
 *
 *   accubench run [--profile NAME|FILE] [--key value ...]
 *   accubench plan --effective N --max-micro N [--devices N]
 *   accubench report FILE.csv | compare BASE.csv NEW.csv
 *   accubench help [COMMAND] | [COMMAND] --help | --version
 *
 * The program owns the backend table (backend_registry.c): it checks
 * --backend against it, opens the backend and its activity collector, and
 * hands them to the sweep. Every option is a row of a table (run's in
 * harness/run/setup/options.c, plan's in plan.c); usage.c prints them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "backend_registry.h"
#include "compare.h"
#include "csv_load.h"
#include "csv_read.h"
#include "dp_launch.h"
#include "dump.h"
#include "io_setup.h"
#include "nearest.h"
#include "options.h"
#include "plan.h"
#include "report.h"
#include "sweep.h"
#include "usage.h"
#include "version.h"

#ifndef ACCUBENCH_GIT_REV
#define ACCUBENCH_GIT_REV "unknown"
#endif

/* The program as it was started (build/accubench): hints name it so. */
static const char *program = "accubench";

/* Bad input is the same on every rank mpirun starts: rank 0 says it. */
static void say_usage_error(const char *msg)
{
    if (dp_launch_env_rank() == 0)
        fprintf(stderr, "accubench: %s (see accubench help run)\n", msg);
}

/* "FIRST arg arg ...": the command line, for the CSV and for hints. */
static void join_command(char *out, size_t n, const char *first, int argc, char **argv)
{
    snprintf(out, n, "%s", first);
    for (int i = 0; i < argc; i++) {
        size_t used = strlen(out);
        snprintf(out + used, n - used, " %s", argv[i]);
    }
}

static int run_is_known(const char *key)
{
    return option_find(&run_option_table, key) != NULL;
}

static int run_takes_list(const char *key)
{
    return option_takes_list(&run_option_table, key);
}

/* run's options: the profile first, so that the command line overrides
 * it; the first pass also finds every malformed argument and --help.
 * 0: run; 1: the help was printed; 2: bad usage, said on stderr. */
static int read_run_options(int argc, char **argv, run_options *o)
{
    char why[600];
    args a;
    arg_kind k;
    options_defaults(o);
    args_init(&a, argc, argv, options_is_flag);
    a.is_known = run_is_known;
    a.takes_list = run_takes_list;
    int existing_asked = 0; /* the command line says --append or --replace */
    while ((k = args_next(&a, why, sizeof why)) != ARG_END) {
        if (k == ARG_OPTION && (!strcmp(a.key, "append") || !strcmp(a.key, "replace")))
            existing_asked = 1;
        if (k == ARG_HELP) {
            usage_run(stdout);
            return 1;
        }
        if (k == ARG_POSITIONAL)
            snprintf(why, sizeof why, "unexpected argument '%s'", a.value);
        if (k == ARG_ERROR || k == ARG_POSITIONAL ||
            (strcmp(a.key, "profile") == 0 &&
             options_load_profile(o, a.value ? a.value : "", why, sizeof why))) {
            say_usage_error(why);
            return 2;
        }
    }
    /* --append and --replace are one setting (what an existing CSV gets):
     * the command line's either one overrides the profile's other */
    if (existing_asked)
        o->append = o->replace = 0;
    args_init(&a, argc, argv, options_is_flag);
    a.is_known = run_is_known;
    a.takes_list = run_takes_list;
    while (args_next(&a, why, sizeof why) == ARG_OPTION)
        if (strcmp(a.key, "profile") != 0 && options_set(o, a.key, a.value, why, sizeof why)) {
            say_usage_error(why);
            return 2;
        }
    options_note_unused(o);
    if (backend_check_name(o->backend, why, sizeof why) ||
        options_validate(o, why, sizeof why) ||
        (o->dump_dir[0] && dump_check_target(o->dump_dir, why, sizeof why))) {
        say_usage_error(why);
        return 2;
    }
    return 0;
}

/* dtype and optimizer-at "auto": the backend's own, and why, for the CSV. */
static void resolve_auto(run_options *o, const backend_entry *entry, const backend *b,
                         char *dtype_note, char *optimizer_note, size_t n)
{
    if (o->dtypes[0] == DTYPE_AUTO) {
        o->dtypes[0] = b->dtype;
        snprintf(dtype_note, n, "dtype auto: %s, because %s", dtype_name(b->dtype),
                 entry->auto_dtype_why);
        if (!o->quiet)
            printf("%s\n", dtype_note);
    } else {
        size_t used = 0; /* "fp32, bf16, as asked" */
        for (int i = 0; i < o->n_dtypes && used < n; i++)
            used += (size_t)snprintf(dtype_note + used, n - used, "%s, ",
                                     dtype_name(o->dtypes[i]));
        if (used < n)
            snprintf(dtype_note + used, n - used, "as asked");
    }
    if (o->optimizer_at_auto) {
        o->optimizer.at = entry->auto_optimizer_at;
        snprintf(optimizer_note, n, "%s, because %s", optimizer_at_name(o->optimizer.at),
                 entry->auto_optimizer_at_why);
    } else {
        snprintf(optimizer_note, n, "%s, as asked", optimizer_at_name(o->optimizer.at));
    }
}

/* The device and its collector: opened here, from the backend table, and
 * handed to the sweep. */
static int run_on_device(run_options *o, dp_launch *ranks, const run_context *ctx)
{
    char note[400], why[600], source[320], dtype_note[300], optimizer_note[300];
    const backend_entry *entry;
    backend *b;
    /* opened in the first dtype; the sweep refuses the others it cannot run */
    if (backend_open(o->backend, o->dtypes[0], &b, &entry, note, sizeof note, why, sizeof why) !=
        BK_OK) {
        fprintf(stderr, "accubench: %s\n", why);
        return dp_launch_fail(ranks, 2); /* the other ranks would wait for this one */
    }
    comm *world = NULL;
    int rc = dp_launch_world(ranks, entry, b, &world);
    if (rc) {
        b->ops->destroy(b);
        return dp_launch_fail(ranks, rc);
    }
    if (note[0] && !o->quiet)
        printf("%s\n", note);
    resolve_auto(o, entry, b, dtype_note, optimizer_note, sizeof dtype_note);
    collector *col = NULL;
    if (o->no_cupti)
        snprintf(source, sizeof source, "off (--no-cupti)");
    else
        col = backend_open_collector(entry, b, source, sizeof source);
    sweep_device dev = {.b = b, .col = col, .trace_source = source, .note = note,
                        .dtype_note = dtype_note, .optimizer_note = optimizer_note,
                        .world = world};
    rc = sweep_run(o, &dev, ctx);
    if (world)
        world->ops->destroy(world);
    if (col)
        col->ops->destroy(col);
    b->ops->destroy(b);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    /* Each line as it is printed, into a pipe or a file too: the header
     * and every row show up while the sweep runs, not at its end. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    run_options o;
    int rc = read_run_options(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (o.note[0] && dp_launch_env_rank() == 0)
        fprintf(stderr, "accubench: note: %s\n", o.note);
    char command[2048], launch[2048];
    join_command(command, sizeof command, "accubench", argc, argv);
    join_command(launch, sizeof launch, program, argc, argv);
    run_context ctx = {.argv0 = program, .git_rev = ACCUBENCH_GIT_REV,
                       .command_line = command};
    dp_launch ranks;
    if ((rc = dp_launch_start(&argc, &argv, &o, launch, &ranks)))
        return rc;
    rc = run_on_device(&o, &ranks, &ctx);
    dp_launch_end(&ranks, NULL);
    return rc;
}

/* hidden: `--check-csv FILE [COLUMN ...]`, what scripts/plots.sh asks
 * before it charts a CSV: FILE reads as `accubench report` reads it (the
 * same refusals: a folder, no header row, a row cut short, a cell that is
 * not a number, a column the report needs) and has each COLUMN too.
 * Prints nothing and exits 0, or prints the one-line reason on stdout and
 * exits 2 (stdout, so a script can tell a refusal from a binary that does
 * not know this command). */
static int check_csv(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "accubench: --check-csv FILE [COLUMN ...]\n");
        return 2;
    }
    int base = 0;
    while (csv_required_columns[base])
        base++;
    int n = base + argc - 3;
    const char **required = malloc((size_t)(n + 1) * sizeof *required);
    if (!required) {
        printf("%s: out of memory\n", argv[2]);
        return 2;
    }
    for (int i = 0; i < base; i++)
        required[i] = csv_required_columns[i];
    for (int i = 3; i < argc; i++)
        required[base + i - 3] = argv[i];
    required[n] = NULL;
    char why[600];
    csv_table t;
    csv_row *rows;
    int rc = csv_load(argv[2], required, &t, &rows, why, sizeof why);
    free(required);
    if (rc) {
        printf("%s\n", why);
        return 2;
    }
    free(rows);
    csv_free(&t);
    return 0;
}

/* Whether stdout took everything written to it: 0, or the errno of the
 * failure (-1 where none was set). A reader gone (EPIPE: the reader of a
 * pipe chose to stop) is no failure. An earlier write's error leaves no
 * errno behind, only the stream's error flag: on a pipe or a socket that
 * is a reader gone too (`run | head -n 30`, SIGPIPE ignored by then). */
static int stdout_failed(void)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    int e = errno;
    struct stat st;
    if (e == EPIPE || (fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) ||
                                                          S_ISSOCK(st.st_mode))))
        return 0;
    return e ? e : -1;
}

/* plan's and compare's answer is their stdout: written to a file on a
 * full disk it was cut short and the command exited 0 (scripts/plots.sh
 * charts plan's table from such a file). So is the help's and the
 * version's. A stream that could not be written is one line and exit 2. */
static int stdout_kept(int rc)
{
    int e = stdout_failed();
    if (!e)
        return rc;
    fprintf(stderr, "accubench: cannot write the output (stdout): %s\n",
            e > 0 ? strerror(e) : "a write failed");
    return rc > 2 ? rc : 2;
}

/* run's answer is its CSV; the console table beside it is what a user
 * reads. Lost to a full disk, it was lost in silence with exit 0: one
 * line says so, and the status is 1 (it measured, the answer is not
 * whole), as for a trace not written; the rows stay in the CSV. A run
 * its reader left (141, SIGPIPE) has said so already. */
static int run_stdout_kept(int rc)
{
    int e = rc == 141 ? 0 : stdout_failed();
    if (!e)
        return rc;
    fprintf(stderr, "accubench: the console table could not be written (stdout): %s; the "
                    "rows measured are in the CSV\n", e > 0 ? strerror(e) : "a write failed");
    return rc ? rc : 1;
}

int main(int argc, char **argv)
{
    io_setup(); /* before anything opens a file */
    program = argv[0];
    if (argc < 2) {
        usage_all(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        (strcmp(cmd, "help") == 0 && argc == 2)) {
        usage_all(stdout);
        return stdout_kept(0);
    }
    if (strcmp(cmd, "help") == 0 && argc > 3) { /* the rest would go unread */
        fprintf(stderr, "accubench: help takes one command, got '%s' and then '%s' "
                        "(see accubench --help)\n", argv[2], argv[3]);
        return 2;
    }
    if (strcmp(cmd, "help") == 0)
        return stdout_kept(usage_help_command(argv[2]));
    if (strcmp(cmd, "--version") == 0) {
        printf("accubench %s (%s)\n", ACCUBENCH_VERSION, ACCUBENCH_GIT_REV);
        return stdout_kept(0);
    }
    /* hidden: what the tests compare the help with */
    if (strcmp(cmd, "--list-options") == 0)
        return usage_list("options", argc > 2 ? argv[2] : NULL);
    if (strcmp(cmd, "--list-presets") == 0)
        return usage_list("presets", NULL);
    if (strcmp(cmd, "--list-modes") == 0)
        return usage_list("modes", argc > 2 ? argv[2] : NULL);
    if (strcmp(cmd, "--list-values") == 0)
        return usage_list("values", argc > 2 ? argv[2] : NULL);
    if (strcmp(cmd, "--list-attention") == 0)
        return usage_list("attention", argc > 2 ? argv[2] : NULL);
    if (strcmp(cmd, "--list-reductions") == 0)
        return usage_list("reductions", NULL);
    if (strcmp(cmd, "--check-csv") == 0)
        return check_csv(argc, argv);
    if (strcmp(cmd, "run") == 0)
        return run_stdout_kept(cmd_run(argc - 1, argv + 1));
    if (strcmp(cmd, "plan") == 0)
        return stdout_kept(plan_main(argc - 1, argv + 1, usage_edit));
    if (strcmp(cmd, "report") == 0)
        return report_main(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return stdout_kept(compare_main(argc - 1, argv + 1));
    char why[300];
    snprintf(why, sizeof why, "unknown command '%s'", cmd);
    nearest_suggest(why, sizeof why, cmd, USAGE_COMMANDS);
    fprintf(stderr, "accubench: %s (see accubench --help)\n", why);
    return 2;
}
