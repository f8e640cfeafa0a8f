/* Every label that names the levers (levers.h) names the same ones for
 * the same row: those whose value sets the row apart (lever_set). The
 * run's (row_label_levers: the progress line, the console table, the
 * summary), the report's (rp_levers), a goodput series' (its curve read
 * back from the curves file), the frontier's and the curves file's
 * summary line, the last two with the one addition each states by the
 * table's columns (a keyed lever named at its default; a ranks-only one on
 * every data-parallel line, as the sync). Each lever at each row of its
 * table and at "" (a file from before it, a one-process row), and every
 * lever set at once: a label with a rule or a list of its own names
 * another set. The charts' labels are held to the same rows by
 * tests/e2e/e2e_levers.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv_load.h"
#include "csv_rows.h"
#include "curves_file.h"
#include "curves_read.h"
#include "frontier.h"
#include "goodput_table.h"
#include "levers.h"
#include "report_parts.h"
#include "row_label.h"
#include "test_files.h"

static char tmpdir[] = "/tmp/accubench-lever-labels-XXXXXX";

typedef struct lever_case {
    const char *value[LEVER_COUNT];
} lever_case;

/* Whether c needs ranks: a ranks-only lever holds a value. */
static int has_ranks(const lever_case *c)
{
    for (int i = 0; i < LEVER_COUNT; i++)
        if (levers[i].ranks_only && *c->value[i])
            return 1;
    return 0;
}

/* The row of case c: one config of tiny at effective batch 16, on 2
 * devices with the window sync where c needs ranks. */
static void row_of(const lever_case *c, int micro, result_row *r)
{
    result_row_clear(r);
    strcpy(r->backend, "cpu");
    strcpy(r->device, "x");
    strcpy(r->model, "tiny");
    strcpy(r->dtype, "fp32");
    strcpy(r->mode, "async");
    strcpy(r->reduction, "sum");
    strcpy(r->status, STATUS_OK);
    r->effective_batch = 16;
    r->devices = has_ranks(c) ? 2 : 1;
    r->micro_batch = micro;
    r->accum_steps = 16 / (micro * r->devices);
    r->last_micro_batch = micro;
    r->arm = 1;
    strcpy(r->sync, has_ranks(c) ? "window" : "");
    r->step_ms_median = 1.0;
    r->mem_need_bytes = 1000;
    for (int i = 0; i < LEVER_COUNT; i++)
        snprintf((char *)r + result_column_find(levers[i].column)->offset, RESULT_TEXT_LEN, "%s",
                 c->value[i]);
}

/* Whether `text` holds `word` and `value` (joined by `joint`) as one
 * phrase: after a space or at its start, before a space, a comma, a colon,
 * a closing bracket or its end. */
static int holds(const char *text, const char *word, const char *joint, const char *value)
{
    char phrase[200];
    snprintf(phrase, sizeof phrase, "%s%s%s", word, joint, value);
    size_t n = strlen(phrase);
    for (const char *p = strstr(text, phrase); p; p = strstr(p + 1, phrase))
        if ((p == text || p[-1] == ' ') && strchr(" ,:)", p[n]))
            return 1;
    return 0;
}

/* The levers `text` names, a bit each, spelt by `field` of the table. */
enum spelling { BY_WORD, BY_PHRASE, BY_COLUMN };
static unsigned named(const char *text, enum spelling how, const lever_case *c)
{
    unsigned mask = 0;
    for (int i = 0; i < LEVER_COUNT; i++) {
        const lever *l = &levers[i];
        const char *v = lever_or_off(l, c->value[i]);
        int in = how == BY_WORD     ? holds(text, l->word, " ", v)
               : how == BY_PHRASE   ? holds(text, l->phrase, " ", v)
                                    : holds(text, l->column, "=", v);
        mask |= (unsigned)in << i;
    }
    return mask;
}

/* The rule: the levers whose value sets the row apart. */
static unsigned set_mask(const lever_case *c)
{
    unsigned mask = 0;
    for (int i = 0; i < LEVER_COUNT; i++)
        mask |= (unsigned)lever_set(&levers[i], c->value[i]) << i;
    return mask;
}

/* The CSV of rows `a` and `b`, each lever's column from the table. */
static void write_csv(const char *path, const result_row *a, const result_row *b)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs("backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
          "last_micro_batch,arm,devices,sync,status,step_ms_median,mem_need_bytes",
          f);
    for (int i = 0; i < LEVER_COUNT; i++)
        fprintf(f, ",%s", levers[i].column);
    fputc('\n', f);
    for (const result_row *r = a; r; r = r == a ? b : NULL) {
        fprintf(f, "%s,%s,%s,%s,%s,%s,%lld,%lld,%lld,%lld,1,%lld,%s,%s,1.0,1000", r->backend,
                r->device, r->model, r->dtype, r->mode, r->reduction,
                (long long)r->effective_batch, (long long)r->micro_batch,
                (long long)r->accum_steps, (long long)r->last_micro_batch,
                (long long)r->devices, r->sync, r->status);
        for (int i = 0; i < LEVER_COUNT; i++)
            fprintf(f, ",%s", lever_in_result(&levers[i], r));
        fputc('\n', f);
    }
    fclose(f);
}

/* The frontier's label of the case's row, beside a row at every default
 * (of the same ranks). */
static void frontier_text(const lever_case *c, const result_row *r, char *out, size_t len)
{
    lever_case plain = {{0}};
    for (int i = 0; i < LEVER_COUNT; i++)
        plain.value[i] = levers[i].ranks_only && !has_ranks(c) ? "" : lever_off_name(&levers[i]);
    result_row base;
    row_of(&plain, 8, &base);
    base.devices = r->devices;
    strcpy(base.sync, r->sync);
    char path[200], why[300];
    snprintf(path, sizeof path, "%s/frontier.csv", tmpdir);
    write_csv(path, &base, r);
    csv_table t;
    csv_row *rows;
    frontier_set s;
    frontier_query q = {.effective = 16, .devices = r->devices, .cap = -1};
    out[0] = '\0';
    if (csv_load(path, csv_required_columns, &t, &rows, why, sizeof why)) {
        CHECK(!"the frontier's CSV reads");
        fprintf(stderr, "  %s\n", why);
        return;
    }
    CHECK(frontier_build(&t, rows, &q, &s, why, sizeof why) == 0 && s.n == 2);
    for (size_t i = 0; i < s.n; i++)
        if (rows[s.items[i].row].micro_batch == r->micro_batch)
            frontier_label(&s, rows, &s.items[i], out, len);
    frontier_free(&s);
    free(rows);
    csv_free(&t);
}

/* The curves file's summary line of the case's row, and the name of the
 * goodput series its curve reads back as. */
static void curves_texts(const result_row *r, char *line, size_t line_len, char *series,
                         size_t series_len)
{
    char path[200], why[300];
    snprintf(path, sizeof path, "%s/run.curves.csv", tmpdir);
    remove(path);
    line[0] = series[0] = '\0';
    curves_file cf;
    double loss[2] = {2.0, 1.0};
    atomic_file_job job = {0};
    CHECK(curves_open(&cf, path, 2, 0, 0, why, sizeof why) == 0);
    CHECK(curves_add(&cf, r, 0, 0.5, loss, NULL, NULL, why, sizeof why) == 0);
    if (curves_row_job(&cf, r, &job))
        CHECK(atomic_write_files(&job, 1, why, sizeof why) == 0);
    CHECK(curves_row_done(&cf, 1, why, sizeof why) == 0);
    curves_close(&cf, NULL);
    const char *text = test_slurp(path);
    const char *at = text ? strstr(text, CURVES_SUMMARY_PREFIX) : NULL;
    if (at)
        snprintf(line, line_len, "%.*s", (int)strcspn(at, "\n"), at);
    curves_table ct;
    if (curves_read(path, &ct, why, sizeof why) != 0 || ct.n != 1) {
        CHECK(!"the curves file reads back");
        return;
    }
    goodput_series s = {.key = &ct.c[0]};
    goodput_series_name(&s, series, series_len);
    curves_table_free(&ct);
}

static void check_case(const lever_case *c)
{
    result_row r;
    row_of(c, 4, &r);
    csv_row cr;
    csv_row_of_result(&r, &cr);
    char run[RESULT_TEXT_LEN * 2], frontier[600], line[1000], series[600];
    row_label_levers(&r, run, sizeof run);
    rp_text report_text = rp_levers(&cr);
    const char *report = report_text.s;
    frontier_text(c, &r, frontier, sizeof frontier);
    curves_texts(&r, line, sizeof line, series, sizeof series);

    unsigned want = set_mask(c), keyed = 0, ranks_present = 0;
    for (int i = 0; i < LEVER_COUNT; i++) {
        keyed |= (unsigned)levers[i].keyed << i;
        ranks_present |= (unsigned)(levers[i].ranks_only && *c->value[i]) << i;
    }
    unsigned got_run = named(run, BY_WORD, c), got_report = named(report, BY_PHRASE, c),
             got_series = named(series, BY_PHRASE, c), got_frontier = named(frontier, BY_COLUMN, c),
             got_line = named(line, BY_COLUMN, c);
    CHECK(got_run == want);
    CHECK(got_report == want);
    CHECK(got_series == want);
    CHECK(got_frontier == (want | keyed));
    CHECK(got_line == (want | ranks_present));
    if (got_run != want || got_report != want || got_series != want ||
        got_frontier != (want | keyed) || got_line != (want | ranks_present)) {
        fprintf(stderr, "  levers:");
        for (int i = 0; i < LEVER_COUNT; i++)
            fprintf(stderr, " %s='%s'", levers[i].column, c->value[i]);
        fprintf(stderr, "\n  run '%s'\n  report '%s'\n  series '%s'\n  frontier '%s'\n"
                        "  curves '%s'\n", run, report, series, frontier, line);
    }
    /* nothing set: the difference labels are silent */
    if (!want) {
        CHECK(run[0] == '\0');
        CHECK(strstr(report, ", ") == NULL || has_ranks(c)); /* the sync alone */
    }
}

/* A case at every lever's default (the ranks-only ones empty: one
 * process). */
static lever_case plain_case(void)
{
    lever_case c;
    for (int i = 0; i < LEVER_COUNT; i++)
        c.value[i] = levers[i].ranks_only ? "" : lever_off_name(&levers[i]);
    return c;
}

static void test_each_lever_alone(void)
{
    for (int i = 0; i < LEVER_COUNT; i++) {
        lever_case c = plain_case();
        c.value[i] = "";
        check_case(&c);
        for (int v = 0; v < levers[i].ax->count; v++) {
            c.value[i] = axis_name(levers[i].ax, v);
            check_case(&c);
        }
    }
}

/* Every lever off its default at once: one label names them all, in the
 * table's order. */
static void test_all_set(void)
{
    lever_case c;
    for (int i = 0; i < LEVER_COUNT; i++)
        c.value[i] = axis_name(levers[i].ax, levers[i].off == 0 ? 1 : 0);
    check_case(&c);
    result_row r;
    row_of(&c, 4, &r);
    char run[RESULT_TEXT_LEN * 2], want[RESULT_TEXT_LEN * 2] = "";
    row_label_levers(&r, run, sizeof run);
    for (int i = 0, used = 0; i < LEVER_COUNT; i++)
        used += snprintf(want + used, sizeof want - (size_t)used, "%s%s %s", i ? " " : "",
                         levers[i].word, c.value[i]);
    CHECK(strcmp(run, want) == 0);
}

/* The labels pinned elsewhere (tests, docs), here from the table. */
static void test_known_texts(void)
{
    lever_case c = plain_case();
    c.value[LEVER_RECOMPUTE] = "block";
    c.value[LEVER_GRAD_DTYPE] = "bf16";
    result_row r;
    row_of(&c, 4, &r);
    char run[RESULT_TEXT_LEN * 2];
    row_label_levers(&r, run, sizeof run);
    CHECK(strcmp(run, "recompute block grad bf16") == 0);
    csv_row cr;
    csv_row_of_result(&r, &cr);
    CHECK(strcmp(rp_levers(&cr).s, ", recompute block, gradient accumulated in bf16") == 0);
    c = plain_case();
    c.value[LEVER_RECOMPUTE] = "gelu";
    c.value[LEVER_SHARD] = "optimizer";
    row_of(&c, 4, &r);
    csv_row_of_result(&r, &cr);
    CHECK(strcmp(rp_levers(&cr).s, ", recompute gelu, window sync, shard optimizer") == 0);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_each_lever_alone();
    test_all_set();
    test_known_texts();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_lever_labels");
}
