/* accubench report: options, charts, and the three output files (see
 * report.h). The content is built in report_build.c and written by the
 * Markdown (report_doc.c) and HTML (report_html.c) writers; the record
 * itself, typed, by the JSON writer (report_json.c). */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "args.h"
#include "atomic_file.h"
#include "csv_load.h"
#include "csv_rows.h"
#include "option_table.h"
#include "output_path.h"
#include "parse.h"
#include "repo_path.h"

/* PATH without its empty and relative entries, for the chart script and
 * the programs it runs (awk, gnuplot, this one): with "." or "" on PATH,
 * an `sh` or a `gnuplot` in the folder the report was asked from ran in
 * their place. */
static void path_absolute_only(void)
{
    const char *path = getenv("PATH");
    char *kept = path ? malloc(strlen(path) + 1) : NULL, *copy = path ? strdup(path) : NULL;
    if (kept && copy) {
        size_t used = 0;
        for (char *save = NULL, *e = strtok_r(copy, ":", &save); e; e = strtok_r(NULL, ":", &save))
            if (e[0] == '/')
                used += (size_t)sprintf(kept + used, "%s%s", used ? ":" : "", e);
        setenv("PATH", used ? kept : "/usr/bin:/bin", 1);
    }
    free(kept);
    free(copy);
}

/* A memory cap as `accubench run --mem-cap` takes it (parse_bytes: K, M,
 * G, T suffixes); "0" is no cap, as in backend.h. Sets *cap to -1 for none. */
static int mem_cap_parse(const char *what, const char *s, int64_t *cap, char *why,
                         size_t why_len)
{
    uint64_t v = 0;
    *cap = -1;
    if (parse_bytes(what, s, &v, why, why_len))
        return -1;
    *cap = v ? (int64_t)v : -1;
    return 0;
}

/* Runs `sh plots.sh CSV PREFIX` with its stdout silenced (the report says
 * where things went), the report's cap in ACCUBENCH_MEM_CAP for the
 * frontier chart to draw (cap < 0: none, and none inherited). Returns 0,
 * or -1 with the reason in why. */
static int render_charts(const char *csv, const char *prefix, int64_t cap, double target,
                         char *why, size_t why_len)
{
    char script[4200];
    if (repo_path_find("scripts/plots.sh", script, sizeof script)) {
        snprintf(why, why_len, "scripts/plots.sh not found (set ACCUBENCH_ROOT to the repo)");
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_len, "cannot start scripts/plots.sh: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* The charts belong to this report: a report killed (kill PID
         * reaches it alone, not its process group) takes them along, and
         * plots.sh's trap removes its private folder, rather than drawing
         * on for seconds after the report is gone. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(143); /* it died before the line above */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, STDOUT_FILENO);
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%lld", (long long)cap);
        if (cap > 0)
            setenv("ACCUBENCH_MEM_CAP", bytes, 1);
        else
            unsetenv("ACCUBENCH_MEM_CAP");
        /* the time-to-target chart's target, and this program to compute it
         * (plots.sh asks it for the table: the same numbers as the report) */
        char loss[64];
        snprintf(loss, sizeof loss, "%.17g", target);
        if (target > 0)
            setenv("ACCUBENCH_TARGET_LOSS", loss, 1);
        else
            unsetenv("ACCUBENCH_TARGET_LOSS");
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len > 0) {
            self[len] = '\0';
            setenv("ACCUBENCH_BIN", self, 1);
        }
        path_absolute_only();
        execl("/bin/sh", "sh", script, csv, prefix, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, why_len, "waiting for scripts/plots.sh: %s", strerror(errno));
            return -1;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        snprintf(why, why_len, "scripts/plots.sh %s failed (exit %d): some charts are missing",
                 csv, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return -1;
    }
    return 0;
}

typedef enum { OUT_MD, OUT_HTML } out_kind;

typedef struct output_job {
    out_kind kind;
    const doc *d;
    const char *title, *chart_base, *chart_prefix;
} output_job;

static int write_report_job(FILE *f, void *ctx, char *why, size_t why_len)
{
    const output_job *j = ctx;
    (void)why;
    (void)why_len;
    if (j->kind == OUT_MD)
        doc_write_md(j->d, f, j->chart_base);
    else
        doc_write_html(j->d, f, j->title, j->chart_prefix);
    return 0;
}

/* The one error line on stderr; returns the exit code for bad input. */
__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("accubench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

#define USAGE "usage: accubench report FILE.csv [--out DIR] [--mem-cap BYTES] [--target-loss X] " \
              "[--no-charts]"

/* What report's options set; each key is a row of REPORT_OPTIONS. */
typedef struct report_args {
    const char *out_dir, *cap_text; /* the arguments themselves; NULL: not given */
    int no_charts;
    double target_loss; /* NAN: each series' default */
} report_args;

/* Keeps the argument's text (argv outlives the report); read after. */
static int keep_text(void *target, const option_def *d, const char *value, char *why,
                     size_t n)
{
    (void)why;
    (void)n;
    *(const char **)(void *)((char *)target + d->offset) = value;
    return 0;
}

static const option_def REPORT_OPTIONS[] = {
    {.key = "out", .arg = "DIR", .type = OPTION_CUSTOM, .set = keep_text,
     .offset = offsetof(report_args, out_dir),
     .shown = "the CSV's folder; created when missing",
     .help = "where NAME.md, NAME.html and NAME.json go"},
    {.key = "mem-cap", .arg = "BYTES", .type = OPTION_CUSTOM, .set = keep_text,
     .offset = offsetof(report_args, cap_text), .shown = "the run's own cap",
     .help = "the memory cap the advice assumes (K, M, G, T suffixes; 0 = none)"},
    {.key = "target-loss", .arg = "X", .type = OPTION_REAL,
     .offset = offsetof(report_args, target_loss), .lo = 1e-30, .hi = 1e30,
     .shown = "the highest final loss among the E",
     .help = "the loss \"Is E right?\" times each effective batch to (--train-steps curves)"},
    {.key = "no-charts", .type = OPTION_FLAG, .offset = offsetof(report_args, no_charts),
     .help = "do not render the charts (scripts/plots.sh) first"},
};
static const option_table report_table = {
    REPORT_OPTIONS, (int)(sizeof REPORT_OPTIONS / sizeof REPORT_OPTIONS[0])};

static int report_help(void)
{
    printf("%s\n\n  %-21s a CSV that accubench run wrote\n", USAGE, "FILE.csv");
    option_usage(stdout, &report_table, NULL);
    return 0;
}

/* Reads report's arguments: the CSV into *csv, the options into *ra.
 * Returns -1 to go on, else the exit code to return at once (help shown,
 * or the one error line for bad arguments already printed). */
static int parse_report_args(int argc, char **argv, const char **csv, report_args *ra)
{
    char arg_why[300];
    args a;
    arg_kind kind;
    *csv = NULL;
    args_init_table(&a, argc, argv, &report_table);
    while ((kind = args_next(&a, arg_why, sizeof arg_why)) != ARG_END) {
        if (kind == ARG_HELP)
            return report_help();
        if (kind == ARG_ERROR || (kind == ARG_OPTION && option_set(&report_table, ra, a.key,
                                                                  a.value, arg_why,
                                                                  sizeof arg_why)))
            return fail("report: %s (see accubench help report)", arg_why);
        if (kind == ARG_POSITIONAL && *csv)
            return fail("report: one CSV at a time, got '%s' and then '%s' (see accubench "
                        "help report)", *csv, a.value);
        if (kind == ARG_POSITIONAL)
            *csv = a.value;
    }
    if (!*csv)
        return fail("report: no CSV named (%s)", USAGE);
    return -1;
}

/* Loads the CSV into *t and *rows, the curves beside it (if any) into
 * *curves, and fills in's table, curves and memory cap:
 * --mem-cap (checked before the CSV is read, so a bad cap fails fast),
 * else the run's own mem_cap_bytes when it parses (an unreadable one is
 * no cap rather than an error: the report still has much to say).
 * Returns 0, or -1 with the reason in why. */
static int load_report_input(const char *csv, const char *cap_text, report_input *in,
                             csv_table *t, csv_row **rows, curves_table *curves, char *why,
                             size_t why_len)
{
    if (cap_text) {
        if (mem_cap_parse("--mem-cap", cap_text, &in->mem_cap, why, why_len))
            return -1;
        in->mem_cap_from = "--mem-cap";
    }
    if (csv_load(csv, csv_required_columns, t, rows, why, why_len))
        return -1;
    /* a file from before a key column reads as every row then ran (as
     * compare reads it): RUN.json's rows and verdicts give recompute
     * "none" and grad_dtype "fp32", the values a run writes today, where
     * they said null, "not measured", of settings that had one value */
    char filled[200];
    csv_key_defaults(t, *rows, NULL, filled, sizeof filled);
    in->t = t;
    in->rows = *rows;
    /* the curves beside it are input too: a damaged one is refused as
     * the CSV is, not reported on */
    char curves_path[4200];
    curves_path_beside(csv, curves_path, sizeof curves_path);
    int rc = curves_read(curves_path, curves, why, why_len);
    /* a target with no curves to reach it would be dropped unsaid */
    if (rc > 0 && !isnan(in->target_loss))
        snprintf(why, why_len, "--target-loss %g: no curves file beside %s (%s: a run with "
                 "--train-steps writes it)", in->target_loss, csv, curves_path);
    if (rc < 0 || (rc > 0 && !isnan(in->target_loss))) {
        free(*rows);
        *rows = NULL;
        csv_free(t);
        return -1;
    }
    in->curves = rc ? NULL : curves;
    if (in->mem_cap < 0) {
        const char *m = csv_meta_get(t, "mem_cap_bytes");
        if (m && *m && mem_cap_parse("mem_cap_bytes", m, &in->mem_cap, why, why_len) == 0)
            in->mem_cap_from = "the run's mem_cap_bytes";
    }
    return 0;
}

/* Where the report goes: DIR/NAME.md, DIR/NAME.html, the record as
 * DIR/NAME.json, charts DIR/NAME.CHART.svg|png (NAME: the CSV's name less
 * .csv). */
typedef struct report_paths {
    char base[1024], prefix[4096], md[4200], html[4200], json[4200];
} report_paths;

/* Fills *p from the CSV's path and --out (NULL: the CSV's folder), and
 * checks every output before any is written: the folder (created when
 * missing, as run --out does), then the two files, whose stale temporary
 * files are then removed. Returns 0, or -1 with the reason in why. */
static int report_paths_prepare(const char *csv, const char *out_dir, report_paths *p,
                                char *why, size_t why_len)
{
    int rc = -1;
    /* basename and dirname may change their argument: one copy each. */
    char *csv_copy = strdup(csv), *csv_copy2 = strdup(csv);
    if (!csv_copy || !csv_copy2) {
        snprintf(why, why_len, "out of memory");
        goto done;
    }
    snprintf(p->base, sizeof p->base, "%s", basename(csv_copy));
    size_t bl = strlen(p->base);
    if (bl > 4 && !strcmp(p->base + bl - 4, ".csv"))
        p->base[bl - 4] = '\0';
    const char *dir_what = out_dir ? "--out" : "the CSV's folder";
    if (!out_dir)
        out_dir = dirname(csv_copy2);
    if (output_path_check(dir_what, out_dir, OUTPUT_DIR, why, why_len))
        goto done;
    snprintf(p->prefix, sizeof p->prefix, "%s/%s", out_dir, p->base);
    snprintf(p->md, sizeof p->md, "%s.md", p->prefix);
    snprintf(p->html, sizeof p->html, "%s.html", p->prefix);
    snprintf(p->json, sizeof p->json, "%s.json", p->prefix);
    if (output_path_check("report", p->md, OUTPUT_FILE, why, why_len) ||
        output_path_check("report", p->html, OUTPUT_FILE, why, why_len) ||
        output_path_check("report", p->json, OUTPUT_FILE, why, why_len))
        goto done;
    atomic_file_remove_stale(p->md);
    atomic_file_remove_stale(p->html);
    atomic_file_remove_stale(p->json);
    rc = 0;
done:
    free(csv_copy);
    free(csv_copy2);
    return rc;
}

/* Renders the charts (unless --no-charts) and points in at them. A chart
 * that fails is a warning, not an error: the report says so in its note
 * (kept in chart_why, which must outlive the report's build). */
static void report_charts(const char *csv, const report_paths *p, int charts,
                          report_input *in, char *chart_why, size_t chart_why_len)
{
    if (!charts) {
        in->charts_note = "Charts were not rendered for this report (--no-charts); any shown "
                          "are from an earlier run of make plots.";
    } else if (render_charts(csv, p->prefix, in->mem_cap, in->target_loss, chart_why, chart_why_len)) {
        fprintf(stderr, "accubench: warning: %s\n", chart_why);
        in->charts_note = chart_why;
    }
    in->chart_base = p->base;
    in->chart_prefix = p->prefix;
}

/* Builds the report and writes its three files. Returns the exit code. */
static int report_write(const report_input *in, const report_paths *p)
{
    char why[4400];
    int rc = 2;
    doc d = {0};
    if (report_build(in, &d)) {
        fail("out of memory building the report");
        doc_free(&d);
        return rc;
    }
    /* The three files as one set (atomic_file.h): a full disk while
     * writing the last leaves all three as they were, never a new md and
     * html beside an old json. */
    output_job md = {OUT_MD, &d, p->base, p->base, p->prefix};
    output_job html = {OUT_HTML, &d, p->base, p->base, p->prefix};
    atomic_file_job files[] = {{p->md, write_report_job, &md},
                               {p->html, write_report_job, &html},
                               {p->json, report_json_write, (void *)in}};
    if (atomic_write_files(files, 3, why, sizeof why)) {
        fail("%s", why);
    } else {
        printf("report: wrote %s, %s and %s\n", p->md, p->html, p->json);
        rc = report_console(in, stdout) ? fail("out of memory printing the verdicts") : 0;
    }
    doc_free(&d);
    return rc;
}

int report_main(int argc, char **argv)
{
    const char *csv;
    report_args ra = {.target_loss = NAN};
    int rc = parse_report_args(argc, argv, &csv, &ra);
    if (rc >= 0)
        return rc;

    report_input in = {.csv_path = csv, .mem_cap = -1, .target_loss = ra.target_loss};
    char why[4400];
    csv_table t;
    csv_row *rows = NULL;
    curves_table curves;
    if (load_report_input(csv, ra.cap_text, &in, &t, &rows, &curves, why, sizeof why))
        return fail("%s", why);

    rc = 2;
    report_paths paths;
    char chart_why[4400];
    if (report_paths_prepare(csv, ra.out_dir, &paths, why, sizeof why)) {
        fail("%s", why);
    } else {
        report_charts(csv, &paths, !ra.no_charts, &in, chart_why, sizeof chart_why);
        rc = report_write(&in, &paths);
    }
    curves_table_free(&curves);
    free(rows);
    csv_free(&t);
    return rc;
}
