/* The curves file read back (curves_read.h): a good file's curves, and a
 * one-line refusal naming file, line and field for each fault the results
 * CSV reader refuses (a negative, NaN or infinite loss, a row cut short). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "curves_read.h"

#define HEADER                                                                              \
    "# accubench loss curves\n"                                                             \
    "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync," \
    "order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err\n"
/* the header without the comment line before it (a file a spreadsheet saved) */
#define HEADER_ROW_ONLY                                                                     \
    "backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,devices,sync," \
    "order,step,loss,recompute,shard,arm,lr,grad_noise_scale,grad_noise_scale_err\n"
/* the summary line a run writes after its rows, its curves' steps */
#define SUMMARY(steps) "# curves cpu gpt fp32 async effective_batch=8 devices=1 steps=" steps ": gap_correct_splits=0\n"
/* one row of a curve, its model spec quoted for its commas */
#define ROW(step, loss) \
    "cpu,\"gpt:d=32,layers=2\",fp32,async,sum,8,4,2,1,,forward," step "," loss ",none,,1,0.001,,\n"

/* Reads `text` and expects a refusal holding "PATH:LINE: " and `expect`. */
static void expect_bad(const char *text, int line, const char *expect)
{
    const char *path = check_temp_file(text);
    curves_table t;
    char why[512] = "", at[128];
    snprintf(at, sizeof at, "%s:%d: ", path, line);
    int rc = curves_read(path, &t, why, sizeof why);
    if (rc == 0)
        curves_table_free(&t);
    CHECK(rc == -1);
    CHECK(strstr(why, at) == why);
    CHECK(strstr(why, expect) != NULL);
    CHECK(strchr(why, '\n') == NULL);
    if (rc != -1 || strstr(why, at) != why || !strstr(why, expect))
        fprintf(stderr, "  rc %d, reason was: %s (wanted %s%s)\n", rc, why, at, expect);
    unlink(path);
}

static void test_good(void)
{
    /* diverged at step 2 (empty loss from there): unmeasured, not a fault */
    const char *path = check_temp_file(HEADER ROW("0", "2.5") ROW("1", "2.25") ROW("2", "")
                                       SUMMARY("3"));
    curves_table t;
    char why[512] = "";
    CHECK(curves_read(path, &t, why, sizeof why) == 0);
    CHECK(t.n == 1 && t.rewritten == 0);
    if (t.n == 1) {
        CHECK(!strcmp(t.c[0].model, "gpt:d=32;layers=2"));
        CHECK(t.c[0].effective_batch == 8 && t.c[0].micro_batch == 4 && t.c[0].arm == 1);
        CHECK(t.c[0].steps == 3);
        CHECK_NEAR(t.c[0].loss[0], 2.5, 0);
        CHECK_NEAR(t.c[0].loss[1], 2.25, 0);
        CHECK(isnan(t.c[0].loss[2]));
        CHECK_NEAR(t.c[0].lr, 0.001, 1e-12);
    }
    curves_table_free(&t);
    unlink(path);
}

static void test_bad_numbers(void)
{
    expect_bad(HEADER ROW("0", "2.5") ROW("1", "-3"), 4,
               "column loss: '-3' cannot be negative (field 13 of the row)");
    expect_bad(HEADER ROW("0", "nan"), 3, "column loss: 'nan' is not a number (NaN)");
    expect_bad(HEADER ROW("0", "inf"), 3, "column loss: 'inf' cannot be infinite");
    expect_bad(HEADER ROW("0", "2.5x"), 3, "column loss: '2.5x' is not a number");
    expect_bad(HEADER ROW("-1", "2.5"), 3, "column step: '-1' cannot be negative");
    expect_bad(HEADER ROW("", "2.5"), 3, "column step: '' is not a number");
    expect_bad(HEADER ROW("99999999", "2.5"), 3, "column step: '99999999' is past");
    expect_bad(HEADER "cpu,tiny,fp32,async,sum,-8,4,2,1,,forward,0,2.5,none,,1,0.001,,\n", 3,
               "column effective_batch: '-8' cannot be negative (field 6 of the row)");
}

/* A curve stays empty from the step it diverged at: a loss after an empty
 * step, or after a step whose row is gone, is a file edited or cut, and is
 * refused (read as it stands it said "diverged" of a curve that went on). */
static void test_holes(void)
{
    const char *files[] = {HEADER ROW("0", "2.5") ROW("1", "") ROW("2", "2.25") SUMMARY("3")};
    for (int i = 0; i < 1; i++) {
        const char *path = check_temp_file(files[i]);
        curves_table t;
        char why[512] = "", at[128];
        snprintf(at, sizeof at, "%s: the curve of gpt:d=32;layers=2 E=8 4x2 (forward, lr 0.001) "
                 "has no loss at step 1 but one at step 2", path);
        int rc = curves_read(path, &t, why, sizeof why);
        if (rc == 0)
            curves_table_free(&t);
        CHECK(rc == -1 && strstr(why, at) == why && !strchr(why, '\n'));
        if (rc != -1 || strstr(why, at) != why)
            fprintf(stderr, "  rc %d, reason was: %s\n", rc, why);
        unlink(path);
    }
}

/* A run writes each curve's steps in order from 0: a row past the next
 * step (a row lost, moved, or a step edited up to the largest) is refused
 * at that row, before the curve's arrays grow to it: a file of a few rows
 * at step 9999999 held 240 MB a curve, 9.6 GB for 41 of them, to refuse. */
static void test_step_ahead(void)
{
    const char *said = "the curve of gpt:d=32;layers=2 E=8 4x2 (forward, lr 0.001) has no row "
                       "for step ";
    char expect[200];
    snprintf(expect, sizeof expect, "%s1 but one for step 2", said);
    expect_bad(HEADER ROW("0", "2.5") ROW("2", "2.25") SUMMARY("3"), 4, expect);
    snprintf(expect, sizeof expect, "%s0 but one for step 9999999", said);
    expect_bad(HEADER ROW("9999999", "2.5") SUMMARY("10000000"), 3, expect);
    snprintf(expect, sizeof expect, "%s2 but one for step 3", said);
    expect_bad(HEADER ROW("0", "2.5") ROW("1", "2.4") ROW("3", "2.2") ROW("2", "2.3") SUMMARY("4"),
               5, expect);
}

/* The header as the results CSV's reader takes it: a column named twice
 * is refused (the last copy was read, unsaid), and a spreadsheet's UTF-8
 * byte order mark before the first line is no part of it (it read as "no
 * backend column" of a file that has one). */
static void test_header(void)
{
    expect_bad("backend,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
               "devices,sync,order,step,loss,recompute,shard,arm,lr,loss\n",
               1, "not a curves file (column loss is named twice: fields 13 and 18)");
    const char *path = check_temp_file("\xEF\xBB\xBF" HEADER ROW("0", "2.5") SUMMARY("1"));
    curves_table t;
    char why[512] = "";
    CHECK(curves_read(path, &t, why, sizeof why) == 0);
    if (why[0])
        fprintf(stderr, "  reason was: %s\n", why);
    CHECK(t.n == 1 && t.c[0].steps == 1);
    curves_table_free(&t);
    unlink(path);
    path = check_temp_file("\xEF\xBB\xBF" HEADER_ROW_ONLY ROW("0", "2.5") SUMMARY("1"));
    CHECK(curves_read(path, &t, why, sizeof why) == 0);
    if (why[0])
        fprintf(stderr, "  reason was: %s\n", why);
    curves_table_free(&t);
    unlink(path);
}

static void test_cut_short(void)
{
    /* the last row cut mid-row (a copy stopped early), and a cell lost
     * mid-file: either would shift the cells under the wrong columns */
    expect_bad(HEADER ROW("0", "2.5") "cpu,\"gpt:d=32,layers=2\",fp32,async,sum,8,4,2,1,,forw",
               4, "11 fields, but the header has 19");
    expect_bad(HEADER "cpu,tiny,fp32,async,sum,8,4,2,1,,forward,0,none,,1,0.001,,\n"
                      ROW("1", "2.5"),
               3, "18 fields, but the header has 19");
    /* cut at a line's end: every row whole, the run's summary gone; and
     * a second run's rows after the first's summary, their own gone */
    expect_bad(HEADER ROW("0", "2.5") ROW("1", "2.25"), 3,
               "no summary line (\"# curves ... steps=N\", written after a run's rows) follows "
               "the rows from here to the file's end: the file was cut short");
    expect_bad(HEADER ROW("0", "2.5") SUMMARY("1")
               "cpu,tiny,fp32,async,sum,8,4,2,1,,forward,0,2.5,none,,1,0.001,,\n",
               5, "no summary line");
    /* a curve's last steps gone (no hole to say so): its run's summary
     * names the steps it held */
    expect_bad(HEADER ROW("0", "2.5") ROW("1", "2.25") SUMMARY("3"), 5,
               "the curve of gpt:d=32;layers=2 E=8 4x2 (forward, lr 0.001) holds 2 steps where "
               "its run's summary line says steps=3 (rows lost or edited?)");
}

/* A config's second arm (an A/A check, arm 2) trained its first's curve
 * again: a file that has it reads as the one curve. */
static void test_second_arm_left_out(void)
{
    const char *path = check_temp_file(
        HEADER ROW("0", "2.5") ROW("1", "2.25")
        "cpu,\"gpt:d=32,layers=2\",fp32,async,sum,8,4,2,1,,forward,0,2.5,none,,2,0.001,,\n"
        "cpu,\"gpt:d=32,layers=2\",fp32,async,sum,8,4,2,1,,forward,1,2.25,none,,2,0.001,,\n"
        SUMMARY("2"));
    curves_table t;
    char why[512] = "";
    CHECK(curves_read(path, &t, why, sizeof why) == 0);
    CHECK(t.n == 1 && t.c[0].arm == 1 && t.c[0].steps == 2);
    curves_table_free(&t);
    unlink(path);
}

/* A config appended again (run --append, --train-steps) writes its curve
 * again after the first run's summary: the first run's curve is read (as
 * compare reads a config's first row), not refused as a step written
 * twice; a curve new in the later run is held to that run's summary. */
static void test_appended_again(void)
{
    const char *path = check_temp_file(HEADER ROW("0", "2.5") ROW("1", "2.25") SUMMARY("2")
                                       ROW("0", "2.5") ROW("1", "2.0") ROW("2", "1.5")
                                       SUMMARY("3"));
    curves_table t;
    char why[512] = "";
    CHECK(curves_read(path, &t, why, sizeof why) == 0);
    CHECK(t.n == 1);
    if (t.n == 1) {
        CHECK(t.c[0].steps == 2 && t.c[0].rows == 2 && t.c[0].run == 0 && t.rewritten == 1);
        CHECK_NEAR(t.c[0].loss[1], 2.25, 0);
    }
    if (t.n != 1)
        fprintf(stderr, "  reason was: %s\n", why);
    curves_table_free(&t);
    unlink(path);
    expect_bad(HEADER ROW("0", "2.5") ROW("1", "2.25") SUMMARY("2")
               "cpu,tiny,fp32,async,sum,8,4,2,1,,forward,0,2.5,none,,1,0.001,,\n" SUMMARY("2"),
               7, "the curve of tiny E=8 4x2 (forward, lr 0.001) holds 1 step where its run's "
               "summary line says steps=2");
}

int main(void)
{
    test_appended_again();
    test_second_arm_left_out();
    test_good();
    test_bad_numbers();
    test_holes();
    test_step_ahead();
    test_header();
    test_cut_short();
    return check_finish("test_curves_read");
}
