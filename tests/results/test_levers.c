/* The levers' table (levers.h): each row a KEY text column of the result
 * row and a default among its table's rows; the CSV's `# levers:` line
 * says every row, in order, as plots/levers.awk reads it; a file from
 * before a lever's column reads as its default (csv_key_defaults), but a
 * ranks-only lever's, whose empty cell is a one-process row; the curves
 * file's key holds a field for every lever. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv_load.h"
#include "csv_rows.h"
#include "curves_read.h"
#include "levers.h"
#include "test_files.h"

static char tmpdir[] = "/tmp/accubench-levers-XXXXXX";

static void test_rows(void)
{
    for (int i = 0; i < LEVER_COUNT; i++) {
        const lever *l = &levers[i];
        const result_column *c = result_column_find(l->column);
        CHECK(c && c->type == RESULT_IS_TEXT && c->role == RESULT_KEY);
        CHECK(l->off >= 0 && l->off < l->ax->count);
        CHECK(strcmp(lever_off_name(l), "?") != 0);
        CHECK(l->word && *l->word && l->phrase && *l->phrase && l->title && *l->title);
        /* the metadata line's separators are not in a word */
        CHECK(!strpbrk(l->title, "\";="));
        for (int j = 0; j < i; j++)
            CHECK(strcmp(levers[j].column, l->column) != 0 && levers[j].ax != l->ax);
        /* the rule: empty and the default set nothing apart, any other row does */
        CHECK(!lever_set(l, NULL) && !lever_set(l, "") && !lever_set(l, lever_off_name(l)));
        for (int v = 0; v < l->ax->count; v++)
            CHECK(lever_set(l, axis_name(l->ax, v)) == (v != l->off));
        CHECK(!strcmp(lever_or_off(l, ""), lever_off_name(l)) &&
              !strcmp(lever_or_off(l, NULL), lever_off_name(l)));
    }
}

/* `# levers:` read back as plots/levers.awk reads it: "; " between
 * levers, each `column=default "title"`, then ` keyed` for a keyed one. */
static void test_meta_line(void)
{
    char text[1024], want[256];
    levers_meta(text, sizeof text);
    const char *p = text;
    for (int i = 0; i < LEVER_COUNT; i++) {
        const lever *l = &levers[i];
        size_t n = strcspn(p, ";");
        snprintf(want, sizeof want, "%s=%s \"%s\"%s", l->column, lever_off_name(l), l->title,
                 l->keyed ? " keyed" : "");
        CHECK(n == strlen(want) && strncmp(p, want, n) == 0);
        p += n;
        CHECK(i == LEVER_COUNT - 1 ? *p == '\0' : strncmp(p, "; ", 2) == 0);
        if (*p)
            p += 2;
    }
    CHECK(strstr(text, "recompute=none \"recompute\" keyed; shard=none \"shard\" keyed; "
                       "grad_dtype=fp32 \"gradient in\"") == text);
}

/* A file without any lever's column: each one that is not ranks-only
 * reads as its default, and says so, then devices. */
static void test_key_defaults(void)
{
    char path[200], why[300], said[300], want[300] = "";
    snprintf(path, sizeof path, "%s/old.csv", tmpdir);
    test_write_file(path, "backend,device,model,dtype,mode,reduction,effective_batch,"
                          "micro_batch,accum_steps,status,step_ms_median\n"
                          "cpu,x,tiny,fp32,async,sum,8,4,2,ok,1.0\n");
    csv_table t;
    csv_row *rows;
    if (csv_load(path, csv_required_columns, &t, &rows, why, sizeof why)) {
        CHECK(!"the old file reads");
        return;
    }
    int filled = csv_key_defaults(&t, rows, NULL, said, sizeof said);
    int n = 0;
    for (int i = 0; i < LEVER_COUNT; i++) {
        const char *v = lever_in_csv(&levers[i], &rows[0]);
        if (levers[i].ranks_only) {
            CHECK(v && *v == '\0');
            continue;
        }
        CHECK(v && !strcmp(v, lever_off_name(&levers[i])));
        size_t used = strlen(want);
        snprintf(want + used, sizeof want - used, "%s%s=%s", n++ ? ", " : "", levers[i].column,
                 lever_off_name(&levers[i]));
    }
    size_t used = strlen(want);
    snprintf(want + used, sizeof want - used, ", devices=1");
    CHECK(filled == n + 1 && !strcmp(said, want) && rows[0].devices == 1);
    CHECK(!strcmp(said, "recompute=none, grad_dtype=fp32, devices=1"));
    free(rows);
    csv_free(&t);
}

/* read_curve_levers names a field of the key for every lever, and
 * lever_in_result and lever_values_of_csv the row's own cells. */
static void test_values(void)
{
    read_curve k;
    memset(&k, 0, sizeof k);
    lever_values lv = read_curve_levers(&k);
    for (int i = 0; i < LEVER_COUNT; i++) {
        CHECK(lv.v[i] != NULL);
        CHECK(lv.v[i] >= (const char *)&k && lv.v[i] < (const char *)(&k + 1));
        for (int j = 0; j < i; j++)
            CHECK(lv.v[j] != lv.v[i]);
    }
    result_row r;
    result_row_clear(&r);
    csv_row cr;
    strcpy(r.grad_dtype, "bf16");
    csv_row_of_result(&r, &cr);
    lever_values of_csv = lever_values_of_csv(&cr);
    CHECK(!strcmp(lever_in_result(&levers[LEVER_GRAD_DTYPE], &r), "bf16") &&
          !strcmp(of_csv.v[LEVER_GRAD_DTYPE], "bf16"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_rows();
    test_meta_line();
    test_key_defaults();
    test_values();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_levers");
}
