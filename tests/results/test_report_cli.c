/* The report and compare commands end to end, through their entry points.
 *
 * With arguments this program is a stand-in for `accubench report|compare`
 * (until bench/main.c wires them, and for running tests/e2e_report.sh and
 * e2e_compare.sh against the entry points alone):
 *     build/tests/test_report_cli report FILE.csv ...
 * Without arguments it runs its checks: exit codes, one-line errors, the
 * report's numbers against the CSV's, and compare's verdicts. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "test_files.h"
#include "compare.h"
#include "csv_load.h"
#include "csv_read.h"
#include "split_text.h"
#include "report.h"
#include "report_parts.h"

static char tmpdir[] = "/tmp/accubench-report-XXXXXX";

/* Runs main_fn with stderr captured; returns its exit code and the number
 * of lines it wrote on stderr (in *lines), the first line in first[]. */
static int run_captured(int (*main_fn)(int, char **), int argc, char **argv, int *lines,
                        char *first, size_t first_len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stderr.txt", tmpdir);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
    int rc = main_fn(argc, argv);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    FILE *f = fopen(path, "r");
    *lines = 0;
    first[0] = '\0';
    char buf[4096];
    while (f && fgets(buf, sizeof buf, f)) {
        if (!(*lines)++)
            snprintf(first, first_len, "%s", buf);
    }
    if (f)
        fclose(f);
    return rc;
}

/* Bad input: exit 2 and one line on stderr that starts "accubench: ". */
static void expect_bad(int (*main_fn)(int, char **), const char *what, int argc, char **argv)
{
    int lines;
    char first[4096];
    int rc = run_captured(main_fn, argc, argv, &lines, first, sizeof first);
    CHECK(rc == 2);
    CHECK(lines == 1);
    CHECK(!strncmp(first, "accubench: ", 11));
    if (rc != 2 || lines != 1)
        fprintf(stderr, "  %s: rc %d, %d stderr lines, first: %s\n", what, rc, lines, first);
}

/* A copy of `src` at `dst` in which the row of `model` at micro-batch
 * `micro` (mode async) has its step times multiplied by `factor`. */
static void write_slower_copy(const char *src, const char *dst, const char *model, int micro,
                              double factor)
{
    csv_table t;
    char why[256];
    if (csv_read(src, &t, why, sizeof why))
        return;
    FILE *f = fopen(dst, "w");
    for (size_t m = 0; f && m < t.meta_count; m++)
        fprintf(f, "# %s: %s\n", t.meta[m].key, t.meta[m].value);
    for (size_t c = 0; f && c < t.cols; c++)
        fprintf(f, "%s%s", c ? "," : "", t.header[c]);
    if (f)
        fputc('\n', f);
    int cm = csv_column(&t, "model"), cmb = csv_column(&t, "micro_batch"),
        cmode = csv_column(&t, "mode");
    for (size_t r = 0; f && r < t.rows; r++) {
        int hit = !strcmp(csv_cell(&t, r, cm), model) && atoi(csv_cell(&t, r, cmb)) == micro &&
                  !strcmp(csv_cell(&t, r, cmode), "async");
        for (size_t c = 0; c < t.cols; c++) {
            const char *name = t.header[c], *v = csv_cell(&t, r, (int)c);
            fputs(c ? "," : "", f);
            if (hit && !strncmp(name, "step_ms_", 8) && *v) /* unmeasured stays so */
                fprintf(f, "%.4f", strtod(v, NULL) * factor);
            else
                fputs(v, f);
        }
        fputc('\n', f);
    }
    if (f)
        fclose(f);
    csv_free(&t);
}

/* The Markdown table row of the report that starts with "| SPLIT " in the
 * table whose heading names model and E; its cells split at '|'. */
static int report_row(const char *md, const char *heading, const char *split, char cells[16][64])
{
    const char *h = strstr(md, heading);
    if (!h)
        return 0;
    char want[80];
    snprintf(want, sizeof want, "\n| %s ", split);
    const char *row = strstr(h, want);
    const char *next_heading = strstr(h + 1, "\n#");
    if (!row || (next_heading && row > next_heading))
        return 0;
    row += 2;
    int n = 0;
    for (const char *p = row + 1; *p && *p != '\n' && n < 16;) {
        const char *bar = strchr(p, '|');
        if (!bar)
            break;
        size_t len = (size_t)(bar - p);
        while (len && p[len - 1] == ' ')
            len--;
        while (len && *p == ' ')
            p++, len--;
        snprintf(cells[n++], 64, "%.*s", (int)len, p);
        p = bar + 1;
    }
    return n;
}

/* Every ok row of the CSV appears in the report's table with the CSV's
 * numbers (to the 4 significant digits printed). */
static void check_report_numbers(const char *csv, const char *md_path)
{
    csv_table t;
    csv_row *rows = NULL;
    char why[256];
    const char *md = test_slurp(md_path);
    CHECK(md != NULL);
    if (!md || csv_load(csv, csv_required_columns, &t, &rows, why, sizeof why))
        return;
    int checked = 0;
    for (size_t i = 0; i < t.rows; i++) {
        const csv_row *r = &rows[i];
        char heading[640], split[64], cells[16][64];
        snprintf(heading, sizeof heading, "Effective batch %lld: model %s, %s, %s reduction",
                 (long long)r->effective_batch, r->model, r->mode, r->reduction);
        split_text(split, sizeof split, (long long)r->micro_batch, (long long)r->accum_steps,
                   (long long)r->last_micro_batch);
        int n = report_row(md, heading, split, cells);
        CHECK(n == 15);
        if (n != 15) {
            fprintf(stderr, "  no report row for %s %s\n", heading, split);
            continue;
        }
        if (strcmp(r->status, "ok")) {
            /* listed with its status here and its reason below, not dropped */
            CHECK(strcmp(cells[1], r->status) == 0);
            CHECK(strstr(md, r->note) != NULL);
            continue;
        }
        double rel = 6e-4; /* 4 significant digits */
        CHECK_NEAR(strtod(cells[1], NULL), r->step_ms_median, r->step_ms_median * rel);
        if (split_is_ragged((long long)r->micro_batch, (long long)r->last_micro_batch)) {
            /* the last pass is of another size, never timed: no estimate */
            CHECK(!strcmp(cells[3], "-") && !strcmp(cells[4], "-"));
        } else {
            CHECK_NEAR(strtod(cells[3], NULL), r->accum_steps * r->pass_ms,
                       r->accum_steps * r->pass_ms * rel);
            double dev = (r->step_ms_median / (r->accum_steps * r->pass_ms) - 1) * 100;
            CHECK_NEAR(strtod(cells[4], NULL), dev, 0.051);
        }
        CHECK_NEAR(strtod(cells[6], NULL), r->samples_per_s, r->samples_per_s * rel);
        CHECK_NEAR(strtod(cells[7], NULL), r->dispatches_per_step, 0.5);
        if (isnan(r->gpu_busy_pct))
            CHECK(!strcmp(cells[9], "-"));
        else
            CHECK_NEAR(strtod(cells[9], NULL), r->gpu_busy_pct, r->gpu_busy_pct * 6e-3);
        CHECK_NEAR(strtod(cells[10], NULL), r->mfu_pct, r->mfu_pct * 6e-3);
        /* memory three ways: the held column is "-" where not measured */
        if (r->mem_held_bytes < 0)
            CHECK(!strcmp(cells[14], "-"));
        else
            CHECK(strcmp(cells[14], "-") != 0);
        /* the ratio to the K=1 row of the same table */
        for (size_t j = 0; j < t.rows; j++) {
            const csv_row *k1 = &rows[j];
            if (k1->accum_steps == 1 && !strcmp(k1->status, "ok") &&
                !strcmp(k1->model, r->model) && !strcmp(k1->mode, r->mode) &&
                k1->effective_batch == r->effective_batch)
                CHECK_NEAR(strtod(cells[5], NULL), r->step_ms_median / k1->step_ms_median,
                           r->step_ms_median / k1->step_ms_median * 6e-3);
        }
        checked++;
    }
    CHECK(checked > 0);
    free(rows);
    csv_free(&t);
}

static void write_edited_copy(const char *src, const char *dst, const char *key,
                              const char *value, const char *column, const char *cell);

static void test_report(void)
{
    const char *fixtures[] = {"tests/fixtures/abc.csv", "tests/fixtures/default.csv",
                              "tests/fixtures/cpu_notrace.csv"};
    for (size_t i = 0; i < 3; i++) {
        char *argv[] = {"report", (char *)fixtures[i], "--out", tmpdir, "--no-charts", NULL};
        CHECK(report_main(5, argv) == 0);
        char md[256], html[256];
        const char *name = strrchr(fixtures[i], '/') + 1;
        snprintf(md, sizeof md, "%s/%.*s.md", tmpdir, (int)strlen(name) - 4, name);
        snprintf(html, sizeof html, "%s/%.*s.html", tmpdir, (int)strlen(name) - 4, name);
        check_report_numbers(fixtures[i], md);
        const char *h = test_slurp(html);
        CHECK(h && !strncmp(h, "<!DOCTYPE html>", 15) && strstr(h, "</html>"));
    }
    /* the sentences state the file's own numbers */
    char path[256];
    snprintf(path, sizeof path, "%s/abc.md", tmpdir);
    const char *md = test_slurp(path);
    CHECK(md && strstr(md, "the fastest split is 64x1 at 0.2337 ms per step and the slowest "
                           "is 8x8 at 0.9258 ms, 3.96x [3.87..4.05] as long"));
    CHECK(md && strstr(md, "No memory cap given"));
    /* one pass time for every split: +76.5%, -0.0% and -12.6% from the
     * estimate, median 0 (the ragged 24+24+16 has none); no "about K
     * passes" from configs that cancel */
    char cancel[256];
    snprintf(cancel, sizeof cancel, "%s/cancel.csv", tmpdir);
    write_edited_copy("tests/fixtures/abc.csv", cancel, NULL, NULL, "pass_ms", "0.1324");
    char *cancel_argv[] = {"report", cancel, "--out", tmpdir, "--no-charts", NULL};
    CHECK(report_main(5, cancel_argv) == 0);
    snprintf(path, sizeof path, "%s/cancel.md", tmpdir);
    const char *cancel_md = test_slurp(path);
    CHECK(cancel_md && strstr(cancel_md, "range from -12.6% to +76.5%") &&
          !strstr(cancel_md, "Steps take about K passes") &&
          strstr(cancel_md, "beyond the practical threshold on both sides"));
    /* steps under K x pass_ms: overlap is credited on a GPU, never on the
     * CPU backend, which computes each operation as it issues it */
    const char *under[][2] = {{"tests/fixtures/cpu_notrace.csv", "40"},
                              {"tests/fixtures/abc.csv", "1.0"}};
    for (int u = 0; u < 2; u++) {
        char csv[256], out_md[256];
        snprintf(csv, sizeof csv, "%s/under%d.csv", tmpdir, u);
        write_edited_copy(under[u][0], csv, NULL, NULL, "pass_ms", under[u][1]);
        char *argv_u[] = {"report", csv, "--out", tmpdir, "--no-charts", NULL};
        CHECK(report_main(5, argv_u) == 0);
        snprintf(out_md, sizeof out_md, "%s/under%d.md", tmpdir, u);
        const char *umd = test_slurp(out_md);
        CHECK(umd && strstr(umd, "Steps run faster than K separate passes"));
        CHECK(umd && (strstr(umd, "work overlaps across passes") != NULL) == (u == 1));
    }
    /* 64 = 24 + 24 + 16, written so (not "24x3", which reads as 72) */
    CHECK(md && strstr(md, "| K=3: 24+24+16 |"));
    /* its last pass (16) was not timed: no K x pass_ms estimate, which
     * would count it as a pass of 24 */
    CHECK(md && strstr(md, "| K=3: 24+24+16 |  0.4391 |    0.60 |           - |        - |"));
    snprintf(path, sizeof path, "%s/default.md", tmpdir);
    md = test_slurp(path);
    CHECK(md && strstr(md, "| L     | bf16  | async | mean      | 256 | 256x1     | oom: needs "
                           "18.01 GiB; over the 17.50 GiB cap "));
    CHECK(md && strstr(md, "Model L has no K=1 step time at effective batch 256 (oom: "));
    CHECK(md && strstr(md, "graph mode takes 0.50x [0.40..0.77] the async step time"));
    /* the cap from the run's metadata */
    CHECK(md && strstr(md, "Cap: 17.50 GiB (18790481920 bytes, from the run's mem_cap_bytes)"));

    /* a sweep interrupted before its first row: a report that says so */
    char none[256];
    snprintf(none, sizeof none, "%s/none.csv", tmpdir);
    test_write_file(none, "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,"
                     "micro_batch,accum_steps,status,step_ms_median\n");
    char *nargv[] = {"report", none, "--no-charts", NULL};
    CHECK(report_main(3, nargv) == 0);
    snprintf(none, sizeof none, "%s/none.md", tmpdir);
    const char *nmd = test_slurp(none);
    CHECK(nmd && strstr(nmd, "No config in this file ran (0 rows"));

    /* a memory cap from the option wins */
    char *argv[] = {"report", "tests/fixtures/default.csv", "--out", tmpdir, "--no-charts",
                    "--mem-cap", "16500M", NULL};
    CHECK(report_main(7, argv) == 0);
    md = test_slurp(path);
    CHECK(md && strstr(md, "Cap: 16.11 GiB (17301504000 bytes, from --mem-cap)"));
    CHECK(md && strstr(md, "Under the 16.11 GiB cap, model L (bf16) at effective batch 256 runs "
                           "fastest as 8x32 async (21.37 ms, needs 16.07 GiB); 128x2 async "
                           "would take "
                           "10.32 ms but needs 17.01 GiB: 0.48x [0.47..0.49], faster"));

    /* a lower median over the cap that the rounds do not tell from the
     * split that fits: not "would take" (faster), but not yet separated */
    char tied[256];
    snprintf(tied, sizeof tied, "%s/tied.csv", tmpdir);
    test_write_file(tied, "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,"
                     "micro_batch,accum_steps,last_micro_batch,arm,status,step_ms_median,"
                     "step_ms_ci_lo,step_ms_ci_hi,comparison,rounds,round_ms,mem_need_bytes\n"
                     "cpu,x,S,fp32,async,sum,16,4,4,4,1,ok,10,9,11,c1,5,10 9 11 10 10,1000\n"
                     "cpu,x,S,fp32,async,sum,16,16,1,16,1,ok,9.5,8.5,10.5,c1,5,"
                     "11 8 10 9.5 10.5,5000\n");
    char *targv[] = {"report", tied, "--no-charts", "--mem-cap", "2000", NULL};
    CHECK(report_main(5, targv) == 0);
    snprintf(tied, sizeof tied, "%s/tied.md", tmpdir);
    const char *tmd = test_slurp(tied);
    CHECK(tmd && strstr(tmd, "runs fastest as 4x4 (10.00 ms, needs 1000 bytes)"));
    /* a need that reads as the cap does, rounded, shows its bytes: the
     * one byte over is seen */
    CHECK(!strcmp(rp_bytes_beside(188268, 188267).s, "183.9 KiB (188268 bytes)"));
    CHECK(!strcmp(rp_bytes_beside(175516, 188267).s, "171.4 KiB"));
    CHECK(tmd && strstr(tmd, "16x1 (9.500 ms, needs 4.9 KiB) is by the rule not yet separated "
                             "from it: "));
    CHECK(tmd && !strstr(tmd, "16x1 would take"));
}

/* A copy of `src` at `dst` with metadata `key` set to `value` (when key is
 * not NULL) and column `column` set to `cell` in every row (when column is
 * not NULL). */
static void write_edited_copy(const char *src, const char *dst, const char *key,
                              const char *value, const char *column, const char *cell)
{
    csv_table t;
    char why[256];
    if (csv_read(src, &t, why, sizeof why))
        return;
    FILE *f = fopen(dst, "w");
    for (size_t m = 0; f && m < t.meta_count; m++)
        fprintf(f, "# %s: %s\n", t.meta[m].key,
                key && !strcmp(t.meta[m].key, key) ? value : t.meta[m].value);
    for (size_t c = 0; f && c < t.cols; c++)
        fprintf(f, "%s%s", c ? "," : "", t.header[c]);
    if (f)
        fputc('\n', f);
    for (size_t r = 0; f && r < t.rows; r++) {
        for (size_t c = 0; c < t.cols; c++)
            fprintf(f, "%s%s", c ? "," : "",
                    column && !strcmp(t.header[c], column) ? cell : csv_cell(&t, r, (int)c));
        fputc('\n', f);
    }
    if (f)
        fclose(f);
    csv_free(&t);
}

/* A row as the reader gives it (csv_read.h): text by reference. */
static void as_read_row(const result_row *r, csv_row *out)
{
    for (int i = 0; i < result_column_count; i++) {
        const result_column *c = &result_columns[i];
        const char *from = (const char *)r + c->offset;
        char *to = (char *)out + csv_row_offset[i];
        if (c->type == RESULT_IS_TEXT)
            *(const char **)to = from;
        else
            memcpy(to, from, c->type == RESULT_IS_INT ? sizeof(int64_t) : sizeof(double));
    }
}

/* Which rows are the same config (compare) and the same series (one table
 * of the report) follows from the KEY and SPLIT marks of RESULT_COLUMNS. */
static void test_key_columns(void)
{
    /* the KEY and SPLIT columns, in the table's (the CSV's) order, and
     * no other: made from RESULT_COLUMNS here too, so that a new axis's
     * KEY column (tests/run/test_sweep_axes.c holds every axis to one) is
     * in them with no line of this file */
    char names[1024], want[1024] = "", spaced[1024], want_spaced[1024] = "";
    for (int i = 0; i < result_column_count; i++)
        if (result_columns[i].role != RESULT_VALUE) {
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                     want[0] ? ", " : "", result_columns[i].name);
            snprintf(want_spaced + strlen(want_spaced), sizeof want_spaced - strlen(want_spaced),
                     "%s%s", want_spaced[0] ? " " : "", result_columns[i].name);
        }
    result_key_names(names, sizeof names, ", ");
    CHECK(!strcmp(names, want));
    result_key_names(spaced, sizeof spaced, " "); /* the CSV's # config_key: line */
    CHECK(!strcmp(spaced, want_spaced));
    /* the split and the columns every file from the start had are among them */
    const char *always[] = {"backend", "model", "dtype", "mode", "reduction",
                            "effective_batch", "micro_batch"};
    for (size_t i = 0; i < sizeof always / sizeof always[0]; i++) {
        const result_column *k = result_column_find(always[i]);
        CHECK(k && k->role != RESULT_VALUE);
    }
    CHECK(result_column_find("micro_batch")->role == RESULT_SPLIT &&
          result_column_find("step_ms_median")->role == RESULT_VALUE);
    result_row a, b;
    result_row_clear(&a);
    strcpy(a.backend, "cuda");
    strcpy(a.model, "S");
    strcpy(a.dtype, "bf16");
    strcpy(a.mode, "async");
    strcpy(a.reduction, "sum");
    a.effective_batch = 64, a.micro_batch = 16, a.accum_steps = 4, a.devices = 1;
    b = a;
    CHECK(result_same_config(&a, &b) && result_same_series(&a, &b));
    /* what was measured, or follows from the key, or where: not the config */
    b.step_ms_median = 3, b.accum_steps = 5, b.params = 7;
    strcpy(b.device, "elsewhere");
    strcpy(b.status, "oom");
    CHECK(result_same_config(&a, &b) && result_same_series(&a, &b));
    /* another split: another config of the same series */
    b = a;
    b.micro_batch = 8;
    CHECK(!result_same_config(&a, &b) && result_same_series(&a, &b));
    /* rows that differ only in devices are different configs */
    b = a;
    b.devices = 2;
    CHECK(!result_same_config(&a, &b) && !result_same_series(&a, &b));
    b = a;
    strcpy(b.mode, "graph");
    CHECK(!result_same_config(&a, &b) && !result_same_series(&a, &b));
    /* the same config in another mode: what the modes comparison pairs */
    CHECK(result_same_config_but(&a, &b, "mode") && !result_same_config_but(&a, &b, "dtype"));
    b.devices = 2;
    CHECK(!result_same_config_but(&a, &b, "mode"));

    /* the report's tables: one per series */
    result_row rows[3] = {a, a, a};
    rows[1].micro_batch = 8;
    rows[2].devices = 2;
    csv_row read[3];
    for (int i = 0; i < 3; i++)
        as_read_row(&rows[i], &read[i]);
    size_t ng = 0;
    report_group *g = report_groups(read, 3, &ng);
    CHECK(g && ng == 2 && g[0].n == 2 && g[1].n == 1 && g[1].idx[0] == 2);
    report_groups_free(g, ng);

    /* Each series its own name in the report's sentences and headings:
     * series that differ only in sync, shard, devices or dtype once read
     * alike ("model S (async)"), six identical findings for a sweep over
     * --devices 1,2 --sync micro,window,overlap. */
    result_row s[5] = {a, a, a, a, a};
    strcpy(s[0].sync, "micro");
    strcpy(s[1].sync, "window");
    s[2] = s[1], s[2].devices = 2;
    s[3] = s[2], strcpy(s[3].shard, "zero1");
    strcpy(s[4].dtype, "fp32");
    csv_row sr[5];
    rp_text series[6];
    for (int i = 0; i < 5; i++) {
        as_read_row(&s[i], &sr[i]);
        series[i] = rp_series(&sr[i]);
    }
    series[5] = rp_series(&read[0]);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            CHECK(strcmp(series[i].s, series[j].s) != 0);
    CHECK(!strcmp(series[3].s, "async, sum reduction, bf16, cuda, 2 devices, window sync, shard zero1"));
    CHECK(!strcmp(series[5].s, "async, sum reduction, bf16, cuda"));
    CHECK(strstr(rp_levers(&sr[1]).s, "window sync") && !strcmp(rp_levers(&read[0]).s, ""));

    const result_column *c = result_column_find("devices");
    CHECK(c && c->type == RESULT_IS_INT && c->role == RESULT_KEY && !strcmp(c->pass, "config"));
    CHECK(result_number(&rows[2], c) == 2);
    c = result_column_find("mode");
    CHECK(c && !strcmp(result_text(&rows[0], c), "async"));
    CHECK(result_column_find("optimizer") == NULL); /* metadata, not a column */
}

static void test_compare(void)
{
    char *self[] = {"compare", "tests/fixtures/default.csv", "tests/fixtures/default.csv", NULL};
    int lines;
    char first[4096];
    CHECK(run_captured(compare_main, 3, self, &lines, first, sizeof first) == 0);
    CHECK(lines == 0);

    char slower[256], faster[256], within[256];
    snprintf(slower, sizeof slower, "%s/slower.csv", tmpdir);
    snprintf(faster, sizeof faster, "%s/faster.csv", tmpdir);
    snprintf(within, sizeof within, "%s/within.csv", tmpdir);
    write_slower_copy("tests/fixtures/default.csv", slower, "M", 16, 1.25);
    write_slower_copy("tests/fixtures/default.csv", faster, "M", 16, 0.75);
    /* 16x16 on M has 1.8% noise: a 0.5% change is within it */
    write_slower_copy("tests/fixtures/default.csv", within, "M", 16, 1.005);
    char *a[] = {"compare", "tests/fixtures/default.csv", slower, NULL};
    CHECK(compare_main(3, a) == 1);
    char *b[] = {"compare", "tests/fixtures/default.csv", faster, NULL};
    CHECK(compare_main(3, b) == 0);
    char *c[] = {"compare", "tests/fixtures/default.csv", within, NULL};
    CHECK(compare_main(3, c) == 0);
    char *d[] = {"compare", slower, "tests/fixtures/default.csv", NULL};
    CHECK(compare_main(3, d) == 0); /* the reverse is faster */

    /* different devices: refused unless asked */
    char *e[] = {"compare", "tests/fixtures/abc.csv", "tests/fixtures/cpu_notrace.csv", NULL};
    expect_bad(compare_main, "different devices", 3, e);
    char *f[] = {"compare", "tests/fixtures/abc.csv", "tests/fixtures/cpu_notrace.csv",
                 "--ignore-device", NULL};
    expect_bad(compare_main, "nothing in common", 4, f);

    /* the same configs on two devices each: nothing in common */
    char two[256];
    snprintf(two, sizeof two, "%s/two-devices.csv", tmpdir);
    write_edited_copy("tests/fixtures/default.csv", two, NULL, NULL, "devices", "2");
    char *g[] = {"compare", "tests/fixtures/default.csv", two, NULL};
    expect_bad(compare_main, "other device count", 3, g);

    /* another optimizer: refused unless asked; another learning rate is the
     * same work per step */
    char sgd[256], lr[256];
    snprintf(sgd, sizeof sgd, "%s/sgd.csv", tmpdir);
    snprintf(lr, sizeof lr, "%s/lr.csv", tmpdir);
    write_edited_copy("tests/fixtures/default.csv", sgd, "optimizer", "sgd lr 0.01", NULL, NULL);
    write_edited_copy("tests/fixtures/default.csv", lr, "optimizer", "adamw lr 0.5", NULL, NULL);
    char *h[] = {"compare", "tests/fixtures/default.csv", sgd, NULL};
    expect_bad(compare_main, "different optimizer", 3, h);
    char *i[] = {"compare", "tests/fixtures/default.csv", sgd, "--ignore-optimizer", NULL};
    CHECK(compare_main(4, i) == 0);
    char *j[] = {"compare", "tests/fixtures/default.csv", lr, NULL};
    CHECK(compare_main(3, j) == 0);

    /* every config oom in NEW: a regression under the same cap; under a
     * lower cap than BASE's the cap's doing (it once read "failed", exit 1) */
    char oom_same[256], oom_lower[256];
    snprintf(oom_same, sizeof oom_same, "%s/oom-same-cap.csv", tmpdir);
    snprintf(oom_lower, sizeof oom_lower, "%s/oom-lower-cap.csv", tmpdir);
    write_edited_copy("tests/fixtures/default.csv", oom_same, NULL, NULL, "status", "oom");
    write_edited_copy("tests/fixtures/default.csv", oom_lower, "mem_cap_bytes", "1024", "status",
                      "oom");
    char *k[] = {"compare", "tests/fixtures/default.csv", oom_same, NULL};
    CHECK(compare_main(3, k) == 1);
    char *l[] = {"compare", "tests/fixtures/default.csv", oom_lower, NULL};
    CHECK(compare_main(3, l) == 0);
    /* the reverse: the lower cap is BASE's; what now runs is no regression */
    char *m[] = {"compare", oom_lower, "tests/fixtures/default.csv", NULL};
    CHECK(compare_main(3, m) == 0);
}

static void test_bad_input(void)
{
    char notcsv[256], nocols[256], ragged[256], png[256];
    snprintf(notcsv, sizeof notcsv, "%s/notes.csv", tmpdir);
    snprintf(nocols, sizeof nocols, "%s/nocols.csv", tmpdir);
    snprintf(ragged, sizeof ragged, "%s/ragged.csv", tmpdir);
    snprintf(png, sizeof png, "%s/chart.csv", tmpdir);
    test_write_file(notcsv, "This is a text file.\nNothing to see here.\n");
    test_write_file(nocols, "# device: x\nmodel,micro_batch\nS,4\n");
    test_write_file(ragged, "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
                       "accum_steps,status,step_ms_median\ncpu,x,S,fp32,async,mean,8,4,2,ok\n");
    test_write_file(png, "\x89PNG\r\n\x1a\n");
    const char *bad[] = {"tests/fixtures/missing.csv", notcsv, nocols, ragged, png};
    for (size_t i = 0; i < 5; i++) {
        char *r[] = {"report", (char *)bad[i], "--no-charts", NULL};
        expect_bad(report_main, bad[i], 3, r);
        char *c1[] = {"compare", (char *)bad[i], "tests/fixtures/abc.csv", NULL};
        expect_bad(compare_main, bad[i], 3, c1);
        char *c2[] = {"compare", "tests/fixtures/abc.csv", (char *)bad[i], NULL};
        expect_bad(compare_main, bad[i], 3, c2);
    }
    char *r1[] = {"report", NULL};
    expect_bad(report_main, "no file", 1, r1);
    char *r2[] = {"report", "tests/fixtures/abc.csv", "--mem-cap", "lots", NULL};
    expect_bad(report_main, "bad cap", 4, r2);
    /* 1.5G is a size; 1.5 bytes is not */
    char *r4[] = {"report", "tests/fixtures/abc.csv", "--mem-cap", "1.5", NULL};
    expect_bad(report_main, "fractional byte", 4, r4);
    /* a missing --out is created (as run's is); one under a file cannot be */
    char *r3[] = {"report", "tests/fixtures/abc.csv", "--out", "tests/fixtures/abc.csv/dir",
                  NULL};
    expect_bad(report_main, "bad out dir", 4, r3);
    char *c3[] = {"compare", "tests/fixtures/abc.csv", NULL};
    expect_bad(compare_main, "one file", 2, c3);
    char *c4[] = {"compare", "tests/fixtures/abc.csv", "tests/fixtures/abc.csv", "--nope", NULL};
    expect_bad(compare_main, "unknown option", 4, c4);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "report"))
        return report_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "compare"))
        return compare_main(argc - 1, argv + 1);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_key_columns();
    test_report();
    test_compare();
    test_bad_input();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_cli");
}
