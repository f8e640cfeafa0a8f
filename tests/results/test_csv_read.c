/* The CSV reader: metadata, columns by name, unmeasured fields, and a
 * one-line reason naming file and line for each kind of bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "csv_load.h"
#include "csv_read.h"
#include "csv_rows.h"
#include "csv_writer.h"

/* Reads `text` and expects failure with `expect` somewhere in the reason. */
static void expect_bad(const char *text, const char *expect)
{
    const char *path = check_temp_file(text);
    csv_table t;
    char why[256] = "";
    int rc = csv_read(path, &t, why, sizeof why);
    csv_row *rows = NULL;
    if (rc == 0) {
        rc = csv_result_rows(&t, csv_required_columns, &rows, why, sizeof why);
        free(rows);
        csv_free(&t);
    }
    CHECK(rc == -1);
    CHECK(strstr(why, expect) != NULL);
    CHECK(strstr(why, path) != NULL);
    CHECK(strchr(why, '\n') == NULL);
    if (!strstr(why, expect))
        fprintf(stderr, "  reason was: %s (wanted %s)\n", why, expect);
    unlink(path);
}

/* The rows `text` reads as, or -1 when it is refused. */
static long load_text(const char *text)
{
    const char *path = check_temp_file(text);
    csv_table t;
    csv_row *rows = NULL;
    char why[256] = "";
    long n = csv_load(path, csv_required_columns, &t, &rows, why, sizeof why) ? -1 : (long)t.rows;
    if (n < 0)
        fprintf(stderr, "  refused: %s\n", why);
    else
        csv_free(&t);
    free(rows);
    unlink(path);
    return n;
}

static void test_fixture(void)
{
    csv_table t;
    char why[256] = "";
    CHECK(csv_read("tests/fixtures/abc.csv", &t, why, sizeof why) == 0);
    if (!t.header) {
        fprintf(stderr, "  %s\n", why);
        return;
    }
    CHECK(!strcmp(csv_meta_get(&t, "device"), "NVIDIA H200"));
    CHECK(!strcmp(csv_meta_get(&t, "mem_cap_bytes"), ""));
    CHECK(!strcmp(csv_meta_get(&t, "future_key"), "unknown keys are tolerated"));
    CHECK(csv_meta_get(&t, "no_such_key") == NULL);
    CHECK(t.rows == 4);
    /* pass_ms sits right after host_enqueue_ms: found by name all the same */
    CHECK(csv_column(&t, "pass_ms") == csv_column(&t, "host_enqueue_ms") + 1);
    CHECK(csv_column(&t, "nope") == -1);
    CHECK(!strcmp(csv_cell(&t, 0, csv_column(&t, "nope")), ""));

    csv_row *rows = NULL;
    CHECK(csv_result_rows(&t, csv_required_columns, &rows, why, sizeof why) == 0);
    if (rows) {
        CHECK(!strcmp(rows[1].model, "S"));
        CHECK(rows[1].micro_batch == 24 && rows[1].accum_steps == 3);
        CHECK(rows[1].last_micro_batch == 16);
        CHECK(!strcmp(rows[0].status, "ok"));
        CHECK(!strcmp(rows[0].note, ""));
        CHECK(rows[0].step_ms_median > 0);
        CHECK(strtod(csv_cell(&t, 2, csv_column(&t, "step_ms_median")), NULL) ==
              rows[2].step_ms_median);
    }
    free(rows);
    csv_free(&t);
}

static void test_unmeasured(void)
{
    csv_table t;
    char why[256] = "";
    CHECK(csv_read("tests/fixtures/default.csv", &t, why, sizeof why) == 0);
    csv_row *rows = NULL;
    CHECK(csv_result_rows(&t, csv_required_columns, &rows, why, sizeof why) == 0);
    int saw_oom = 0, saw_untraced = 0;
    for (size_t i = 0; rows && i < t.rows; i++) {
        if (!strcmp(rows[i].status, "oom")) {
            saw_oom = 1;
            CHECK(isnan(rows[i].step_ms_median));
            CHECK(rows[i].samples == -1);
            CHECK(strlen(rows[i].note) > 0);
        }
        if (!strcmp(rows[i].model, "M") && !strcmp(rows[i].status, "ok")) {
            saw_untraced = 1;
            CHECK(isnan(rows[i].gpu_busy_pct) && isnan(rows[i].forward_ms));
            CHECK(!isnan(rows[i].step_ms_median));
        }
    }
    CHECK(saw_oom && saw_untraced);
    free(rows);
    csv_free(&t);
}

static void test_absent_optional_column(void)
{
    /* a file from a writer that lacked most columns still reads */
    const char *path = check_temp_file("# device: x\n"
                                "backend,device,model,dtype,mode,reduction,effective_batch,"
                                "micro_batch,accum_steps,status,step_ms_median,loss\n"
                                "cpu,x,S,fp32,async,mean,8,4,2,ok,1.5,11.2\n");
    csv_table t;
    char why[256];
    csv_row *rows = NULL;
    CHECK(csv_read(path, &t, why, sizeof why) == 0);
    CHECK(csv_result_rows(&t, csv_required_columns, &rows, why, sizeof why) == 0);
    if (rows) {
        CHECK(rows[0].step_ms_median == 1.5);
        CHECK(isnan(rows[0].pass_ms) && rows[0].mem_need_bytes == -1);
        /* a file from before loss_sum and tokens_per_s: its loss as written */
        CHECK(rows[0].loss == 11.2 && isnan(rows[0].loss_sum) && isnan(rows[0].tokens_per_s));
    }
    free(rows);
    csv_free(&t);
    unlink(path);
}

/* What the run's writer writes, the reader reads back: every column, by
 * the one list RESULT_COLUMNS, measured and unmeasured. */
static void test_writer_round_trip(void)
{
    result_row in[2];
    csv_row *out = NULL;
    result_row_clear(&in[1]); /* the second row: nothing measured but its split, */
    in[1].effective_batch = 8;  /* which every row names (csv_rows.c) */
    in[1].micro_batch = 4;
    in[1].accum_steps = 2;
    int k = 0;
#define SET_TEXT(name) snprintf(in[0].name, RESULT_TEXT_LEN, "t_%s", #name);
#define SET_INT(name) in[0].name = 1000 + k;
#define SET_REAL(name) in[0].name = k + 0.25;
#define SET(name, type, pass, role) k++; SET_##type(name)
    RESULT_COLUMNS(SET)
#undef SET
    /* a status and a split a run writes (csv_rows.c) */
    snprintf(in[0].status, RESULT_TEXT_LEN, "%s", STATUS_OK);
    in[0].accum_steps = (in[0].effective_batch + in[0].micro_batch * in[0].devices - 1) /
                        (in[0].micro_batch * in[0].devices);
    /* the median inside its bands, as a run writes them (csv_rows.c) */
    in[0].step_ms_ci_lo = in[0].step_ms_p10 = in[0].step_ms_median - 0.5;
    in[0].step_ms_ci_hi = in[0].step_ms_p90 = in[0].step_ms_median + 0.5;
    const char *path = check_temp_file("");
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs("# device: a device, with a comma\n", f);
    fputs("# backend_caps: shares-host-memory  dispatch-is-device-work\n", f);
    fputs("# empty_words: \n", f);
    csv_write_header(f);
    csv_write_row(f, &in[0]);
    csv_write_row(f, &in[1]);
    fclose(f);
    csv_table t;
    char why[256] = "";
    CHECK(csv_load(path, csv_required_columns, &t, &out, why, sizeof why) == 0);
    if (!out) {
        fprintf(stderr, "  %s\n", why);
        return;
    }
    CHECK(t.rows == 2);
    CHECK(!strcmp(csv_meta_get(&t, "device"), "a device, with a comma"));
    /* words of a metadata line: whole words only; -1 when there is no line */
    CHECK(csv_meta_has_word(&t, "backend_caps", "dispatch-is-device-work") == 1);
    CHECK(csv_meta_has_word(&t, "backend_caps", "shares-host-memory") == 1);
    CHECK(csv_meta_has_word(&t, "backend_caps", "shares-host") == 0);
    CHECK(csv_meta_has_word(&t, "backend_caps", "memory") == 0);
    CHECK(csv_meta_has_word(&t, "empty_words", "shares-host-memory") == 0);
    CHECK(csv_meta_has_word(&t, "no_such_key", "shares-host-memory") == -1);
#define SAME_TEXT(name) CHECK(!strcmp(out[0].name, in[0].name) && !strcmp(out[1].name, ""));
/* arm: a row without it has one arm (csv_read.h) */
#define SAME_INT(name)                                                                        \
    CHECK(out[0].name == in[0].name && out[1].name == (strcmp(#name, "arm") ? in[1].name : 1));
#define SAME_REAL(name) CHECK(out[0].name == in[0].name && isnan(out[1].name));
#define SAME(name, type, pass, role) SAME_##type(name)
    RESULT_COLUMNS(SAME)
#undef SAME
    free(out);
    csv_free(&t);
    unlink(path);
}

int main(void)
{
    test_writer_round_trip();
    test_fixture();
    test_unmeasured();
    test_absent_optional_column();

    char why[256];
    csv_table t;
    CHECK(csv_read("tests/fixtures/no-such-file.csv", &t, why, sizeof why) == -1);
    CHECK(strstr(why, "cannot open tests/fixtures/no-such-file.csv") != NULL);

    expect_bad("", "no header row");
    expect_bad("# device: x\n# only metadata\n", "no header row");
    expect_bad("just some text\n", "not a CSV");
    expect_bad("\x89PNG\r\n\x1a\n", "not a CSV");
    expect_bad("a,b,c\n1,2,3\n", "missing column backend");
    expect_bad("backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
               "accum_steps,status,step_ms_median\ncpu,x,S,fp32,async,mean,8,4\n",
               ":2: 8 fields, but the header has 11");
    expect_bad("backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
               "accum_steps,status,step_ms_median\n\ncpu,x,S,fp32,async,mean,8,four,2,ok,1\n",
               ":3: column micro_batch: 'four' is not a number");
    expect_bad("a,b,a\n", "duplicate");
    /* the last row without its line end: a file cut short in its last
     * field (the note), whose field count still matches the header */
    expect_bad("backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
               "accum_steps,status,step_ms_median,note\ncpu,x,S,fp32,async,sum,8,4,2,ok,1,"
               "whole\ncpu,x,S,fp32,async,sum,8,2,4,ok,1,cut sh",
               ":3: the last row has no line end: the file was cut short");
    /* a header or metadata line at the end without one is not a row */
    CHECK(load_text("backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
                    "accum_steps,status,step_ms_median\n# a comment at the end") == 0);

    /* a median outside its own bands: a row no run writes */
#define BANDED "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch," \
               "accum_steps,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,step_ms_p10," \
               "step_ms_p90\n"
    expect_bad(BANDED "cpu,x,S,fp32,async,sum,8,4,2,ok,5,6,7,4,8\n",
               ":2: step_ms_median 5 lies outside its 95% interval, "
               "step_ms_ci_lo..step_ms_ci_hi 6..7");
    expect_bad(BANDED "cpu,x,S,fp32,async,sum,8,4,2,ok,5,6,4,4,8\n",
               ":2: step_ms_median 5 lies outside its 95% interval");
    expect_bad(BANDED "cpu,x,S,fp32,async,sum,8,4,2,ok,5,4,6,5.5,8\n",
               ":2: step_ms_median 5 lies outside its p10..p90, step_ms_p10..step_ms_p90 5.5..8");
    expect_bad(BANDED "cpu,x,S,fp32,async,sum,8,4,2,skipped,,7,6,,\n",
               ":2: step_ms_ci_lo 7 is above step_ms_ci_hi 6");
    /* at its ends, or with a band unmeasured, it reads */
    CHECK(load_text(BANDED "cpu,x,S,fp32,async,sum,8,4,2,ok,5,5,5,5,5\n"
                           "cpu,x,S,fp32,async,sum,8,2,4,ok,5,,,4,6\n") == 2);
#undef BANDED

    /* a status or a split no run writes, a step time over no step */
#define SPLIT "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch," \
              "accum_steps,devices,status,step_ms_median,samples\n"
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,8,4,2,1,weird,5,10\n",
               ":2: status 'weird' is none of ok, oom, skipped, error (the row was edited");
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,8,1,3,1,ok,5,10\n",
               ":2: accum_steps 3 does not make effective batch 8 of micro-batch 1 on 1 device "
               "(that takes 8: the row was edited or damaged)");
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,16,4,4,2,ok,5,10\n",
               ":2: accum_steps 4 does not make effective batch 16 of micro-batch 4 on 2 "
               "devices (that takes 2");
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,8,4,2,1,ok,5,0\n",
               ":2: a step time of 5 ms over 0 samples");
    /* a split size left empty: read as unmeasured, it printed "4x-1" */
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,,4,2,1,ok,5,10\n",
               ":2: column effective_batch is empty (every row names its split");
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,8,,2,1,ok,5,10\n",
               ":2: column micro_batch is empty");
    expect_bad(SPLIT "cpu,x,S,fp32,async,sum,8,4,,1,oom,,\n",
               ":2: column accum_steps is empty (every row names its split: the row was "
               "edited or damaged) (field 9 of the row)");
    /* what runs write reads: a ragged split (E = 10 of 4: 4+4+2), E = 11
     * over 2 devices of micro 2 (the ranks take 6 and 5: K = 3), a row
     * that did not run, a file without the devices column */
    CHECK(load_text(SPLIT "cpu,x,S,fp32,async,sum,10,4,3,1,ok,5,10\n"
                          "cpu,x,S,fp32,async,sum,11,2,3,2,ok,5,10\n"
                          "cpu,x,S,fp32,async,sum,8,4,2,1,oom,,0\n") == 3);
    CHECK(load_text("backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
                    "accum_steps,status,step_ms_median\ncpu,x,S,fp32,async,sum,8,4,2,ok,5\n") == 1);
#undef SPLIT
    return check_finish("test_csv_read");
}
