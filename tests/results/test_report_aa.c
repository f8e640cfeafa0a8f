/* The report's A/A check: a config timed twice (arms 1 and 2 of one
 * comparison) is set against itself by the rule, and the report says
 * whether the rule held; a run without such a pair says nothing of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aa_check.h"
#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-aa-XXXXXX";

#define HEADER                                                                               \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"    \
    "accum_steps,arm,status,step_ms_median,pass_ms,samples,comparison,rounds,round_ms\n"

static const char *report_of(const char *name, const char *rows)
{
    return test_report_rows(tmpdir, name, HEADER, rows);
}

static void test_held(void)
{
    const char *md = report_of(
        "held", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,c1,5,40 41 40.5 39.8 40.2\n"
                "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,12,50,c1,5,50 51 50.5 49.8 50.2\n"
                "cpu,x,S,fp32,async,sum,64,16,4,2,ok,50.1,12,50,c1,5,50.1 51.1 50.4 49.9 50.2\n");
    CHECK(md && strstr(md, "## The A/A check"));
    CHECK(md && strstr(md, "- S, E = 64, 16x4 (async, sum reduction, fp32, cpu): arm 2 / arm 1 "
                           "= 1.00"));
    CHECK(md && strstr(md, "the same within 2% (paired over 5 interleaved rounds); the rule "
                           "held (a config against itself is never faster or slower)."));
    CHECK(md && !strstr(md, "FAILED"));
}

static void test_failed(void)
{
    const char *md = report_of(
        "failed", "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,12,50,c1,5,50 51 50.5 49.8 50.2\n"
                  "cpu,x,S,fp32,async,sum,64,16,4,2,ok,55,12,50,c1,5,55 56 55.5 54.8 55.2\n");
    CHECK(md && strstr(md, "arm 2 / arm 1 = 1.099x [1.098..1.101], "));
    CHECK(md && strstr(md, "slower (paired over 5 interleaved rounds; threshold 2%); the rule "
                           "FAILED: it called a config apart from itself"));
}

/* The A/B/C reads a config's first arm, wherever the file lists it. */
static void test_abc_reads_arm_one(void)
{
    const char *md = report_of(
        "abc", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,c1,5,40 41 40.5 39.8 40.2\n"
               "cpu,x,S,fp32,async,sum,64,16,4,2,ok,52,12,50,c1,5,52 53 52.5 51.8 52.2\n"
               "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,12,50,c1,5,50 51 50.5 49.8 50.2\n"
               "cpu,x,S,fp32,async,sum,64,8,8,1,ok,70,9,50,c1,5,70 71 70.5 69.8 70.2\n");
    const char *b = md ? strstr(md, "| B   | 16x4") : NULL;
    CHECK(b && strstr(b, "|   50.00 |") && strstr(b, "|   50.00 |") < strchr(b, '\n'));
}

/* A config timed twice is one config to the findings, the header and the
 * memory advice: never their fastest or highest MFU (its second arm is
 * faster here), nor one more config in a count or the naive median. */
static void test_findings_read_each_config_once(void)
{
    const char *md = test_report_rows(
        tmpdir, "once",
        "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"
        "accum_steps,arm,status,step_ms_median,pass_ms,samples,comparison,rounds,round_ms,"
        "mfu_pct,mem_need_bytes\n",
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,c1,5,40 41 40.5 39.8 40.2,10,4000\n"
        "cpu,x,S,fp32,async,sum,64,64,1,2,ok,39.5,40,50,c1,5,39.5 40.5 40 39.3 39.7,12,4000\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,12,50,c1,5,50 51 50.5 49.8 50.2,8,2000\n");
    CHECK(md && strstr(md, "x, -, 2 configs (1 of them timed twice: the A/A check)."));
    CHECK(md && strstr(md, "the fastest split is 64x1 at 40.00 ms"));
    CHECK(md && strstr(md, "(median +2.1% over 2 configs;"));
    CHECK(md && strstr(md, "The highest MFU is 10.0% (model S, 64x1,"));
    const char *fit = md ? strstr(md, "## The fastest split under a memory cap") : NULL;
    const char *end = fit ? strstr(fit + 1, "\n## ") : NULL;
    CHECK(fit && end && !memmem(fit, (size_t)(end - fit), "arm 2", 5) &&
          memmem(fit, (size_t)(end - fit), "40.00", 5));
}

/* A second arm that did not run: counted as a row, the file's configs
 * counted once. */
static void test_second_arm_not_run(void)
{
    const char *md = report_of(
        "failed-arm", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,c1,5,40 41 40.5 39.8 40.2\n"
                      "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,12,50,c1,5,50 51 50.5 49.8 50.2\n"
                      "cpu,x,S,fp32,async,sum,64,16,4,2,error,,12,,,,\n");
    CHECK(md && strstr(md, "x, -, 2 configs (1 of them timed twice: the A/A check)."));
    CHECK(md && strstr(md, "- 1 of 3 rows did not run (listed below with the reason)."));
}

static void test_none(void)
{
    const char *md = report_of(
        "none", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,c1,5,40 41 40.5 39.8 40.2\n"
                "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,12,50,c1,5,50 51 50.5 49.8 50.2\n");
    CHECK(md && !strstr(md, "A/A"));
}

/* The re-check command names every lever the series set (levers.h's
 * table), the reduction and the sync, and the ranks: each one the run's
 * option, so that the pair is timed again as it ran. */
static void test_recheck_names_levers(void)
{
    csv_row r;
    memset(&r, 0, sizeof r);
    r.backend = "cpu", r.model = "S", r.mode = "async", r.dtype = "fp32", r.status = "ok";
    r.reduction = "mean-of-means", r.recompute = "gelu", r.shard = "optimizer";
    r.grad_dtype = "bf16", r.sync = "window", r.flags = "", r.note = "";
    r.effective_batch = 64, r.micro_batch = 8, r.accum_steps = 4, r.devices = 2, r.arm = 1;
    r.step_ms_median = 10;
    char cmd[600];
    aa_recheck_command(&r, 1, &r, cmd, sizeof cmd);
    CHECK(strcmp(cmd, "mpirun -np 2 accubench run --backend cpu --model S --effective 64 "
                      "--micro 8 --mode async --dtype fp32 --reduction mean-of-means --sync "
                      "window --recompute gelu --shard optimizer --grad-dtype bf16 "
                      "--devices 2") == 0);
    /* at their defaults, no lever is named */
    r.reduction = "sum", r.recompute = "none", r.shard = "none", r.grad_dtype = "fp32";
    r.sync = "", r.devices = 1;
    aa_recheck_command(&r, 1, &r, cmd, sizeof cmd);
    CHECK(strcmp(cmd, "accubench run --backend cpu --model S --effective 64 --micro 8 "
                      "--mode async --dtype fp32") == 0);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_held();
    test_failed();
    test_abc_reads_arm_one();
    test_findings_read_each_config_once();
    test_second_arm_not_run();
    test_none();
    test_recheck_names_levers();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_aa");
}
