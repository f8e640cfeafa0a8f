/* Rows found by their key columns through a hash (row_index.h): the same
 * configs result_same_config calls the same, the first row of each kept,
 * and every one of many distinct keys found again. Also the value rules a
 * results file is read with (csv_values.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv_values.h"
#include "row_index.h"

static csv_row base_row(void)
{
    csv_row r;
    memset(&r, 0, sizeof r);
    /* every text column empty, so that a column added to RESULT_COLUMNS
     * needs no line here */
#define BASE_TEXT(name) r.name = "";
#define BASE_INT(name)
#define BASE_REAL(name)
#define BASE_FIELD(name, type, pass, role) BASE_##type(name)
    RESULT_COLUMNS(BASE_FIELD)
#undef BASE_FIELD
#undef BASE_TEXT
#undef BASE_INT
#undef BASE_REAL
    r.backend = "cuda", r.device = "H200", r.model = "S", r.dtype = "bf16", r.mode = "async";
    r.reduction = "sum", r.sync = "", r.shard = "", r.recompute = "none", r.status = "ok";
    r.note = "";
    r.effective_batch = 64, r.micro_batch = 16, r.accum_steps = 4, r.devices = 1;
    r.step_ms_median = 1;
    return r;
}

static void test_keys(void)
{
    row_key config = row_key_config(), series = row_key_series();
    row_key but_mode = row_key_config_but("mode"), mode = row_key_column("mode");
    csv_row a = base_row(), b = a;
    /* what was measured, or where: not the config */
    b.step_ms_median = 7, b.device = "elsewhere", b.status = "oom", b.accum_steps = 5;
    CHECK(row_key_equal(&config, &a, &b));
    CHECK(row_key_hash(&config, &a) == row_key_hash(&config, &b));
    b = a;
    b.micro_batch = 8; /* another split of the same series */
    CHECK(!row_key_equal(&config, &a, &b) && row_key_equal(&series, &a, &b));
    CHECK(row_key_hash(&series, &a) == row_key_hash(&series, &b));
    b = a;
    b.mode = "graph";
    CHECK(!row_key_equal(&config, &a, &b) && row_key_equal(&but_mode, &a, &b));
    CHECK(row_key_hash(&but_mode, &a) == row_key_hash(&but_mode, &b));
    CHECK(!row_key_equal(&mode, &a, &b));
    /* text is compared by content, not by where it lies */
    char model[] = "S";
    b = a;
    b.model = model;
    CHECK(row_key_equal(&config, &a, &b));
    CHECK(row_key_hash(&config, &a) == row_key_hash(&config, &b));
    /* a split of the text between two fields is another key */
    b = a;
    a.backend = "ab", a.model = "c";
    b.backend = "a", b.model = "bc";
    CHECK(!row_key_equal(&config, &a, &b));
    CHECK(row_key_hash(&config, &a) != row_key_hash(&config, &b));
}

static void test_index(void)
{
    size_t n = 100000;
    csv_row *rows = malloc(n * sizeof *rows);
    char (*names)[16] = malloc(n * sizeof *names);
    if (!rows || !names)
        return;
    /* n rows, n / 2 configs: row i and row i + n / 2 share one */
    for (size_t i = 0; i < n; i++) {
        rows[i] = base_row();
        snprintf(names[i], sizeof names[i], "m%zu", i % (n / 2));
        rows[i].model = names[i];
        rows[i].step_ms_median = (double)i + 1;
    }
    row_key config = row_key_config();
    row_index ix;
    CHECK(row_index_init(&ix, &config, rows, n) == 0);
    size_t firsts = 0, wrong = 0;
    for (size_t i = 0; i < n; i++) {
        size_t first = row_index_add(&ix, i);
        firsts += first == i;
        wrong += first != i % (n / 2);
    }
    CHECK(firsts == n / 2 && wrong == 0 && ix.count == n / 2);
    for (size_t i = 0; i < n; i++)
        wrong += row_index_find(&ix, &rows[i]) != i % (n / 2);
    CHECK(wrong == 0);
    csv_row other = base_row();
    other.model = "not there";
    CHECK(row_index_find(&ix, &other) == ROW_NONE);
    row_index_free(&ix);
    free(rows);
    free(names);
}

static void test_values(void)
{
    /* every column the rule names exists: a renamed column cannot slip out */
    for (const char *const *p = csv_positive_columns; *p; p++) {
        CHECK(result_column_find(*p) != NULL);
        if (!result_column_find(*p))
            fprintf(stderr, "  no column %s\n", *p);
    }
    const result_column *step = result_column_find("step_ms_median");
    const result_column *busy = result_column_find("gpu_busy_pct");
    const result_column *model = result_column_find("model");
    CHECK(step && busy && model);
    if (!step || !busy || !model)
        return;
    CHECK(csv_value_check(step, 1.5) == NULL);
    CHECK(csv_value_check(step, 0) != NULL && csv_value_check(step, -1) != NULL);
    CHECK(csv_value_check(step, NAN) != NULL && csv_value_check(step, INFINITY) != NULL);
    CHECK(csv_value_check(busy, 0) == NULL); /* a percentage may be 0 */
    CHECK(csv_value_check(busy, -0.5) != NULL && csv_value_check(busy, -INFINITY) != NULL);
    CHECK(csv_value_check(model, NAN) == NULL); /* text is not a number */
    /* a time past 1e15 ms is no step (K of them would overflow); a count
     * or a loss that large is the file's business */
    const result_column *pass = result_column_find("pass_ms"),
                        *comm = result_column_find("comm_wait_ms"),
                        *flops = result_column_find("flops_per_step");
    CHECK(pass && comm && flops);
    if (!pass || !comm || !flops)
        return;
    CHECK(csv_value_check(step, 1e15) == NULL && csv_value_check(step, 1e308) != NULL);
    CHECK(csv_value_check(pass, 2e15) != NULL && csv_value_check(comm, 2e15) != NULL);
    CHECK(csv_value_check(flops, 1e30) == NULL);
}

/* A config run again (--append) is marked a repeat from its second row
 * on; a second arm (an A/A check) and another split are not repeats; a
 * figure over configs (result_ran_once) reads the first row alone. */
static void test_repeats(void)
{
    csv_row rows[5];
    for (int i = 0; i < 5; i++)
        rows[i] = base_row();
    rows[0].arm = rows[1].arm = rows[3].arm = rows[4].arm = 1;
    rows[2].arm = 2;            /* the A/A check's second arm: not a repeat */
    rows[4].micro_batch = 8;    /* another split */
    rows[4].accum_steps = 8;
    rows[1].step_ms_median = 0.5; /* the rerun, faster: not read */
    CHECK(row_index_mark_repeats(rows, 5) == 2);
    CHECK(!rows[0].repeat && rows[1].repeat && !rows[2].repeat && rows[3].repeat &&
          !rows[4].repeat);
    CHECK(result_ran_once(&rows[0]) && !result_ran_once(&rows[1]) &&
          !result_ran_once(&rows[3]) && result_ran_once(&rows[4]));
    char text[400];
    row_index_repeats_text(rows, 5, "r.csv", text, sizeof text);
    CHECK(!strcmp(text, "r.csv holds 2 rows of configs named earlier in it (a config run "
                        "again with --append): each config's first row is read"));
    row_index_repeats_text(rows, 1, "r.csv", text, sizeof text);
    CHECK(!text[0]);
}

int main(void)
{
    test_repeats();
    test_keys();
    test_index();
    test_values();
    return check_finish("test_row_index");
}
