/* The report's busy finding (report_findings.c) reads the trace pass's
 * busy share as the step's only where the traced steps are like the
 * timed ones: a traced step many times the timed median (ranks waiting on
 * each other under mpirun) is said to be so, and no claim about the
 * micro-batch is drawn from it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-busy-XXXXXX";

#define HEADER                                                                              \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "accum_steps,status,step_ms_median,cupti_step_ms,gpu_busy_pct\n"

/* HEADER with the traced step's idle time */
#define HEADER_IDLE                                                                         \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "accum_steps,status,step_ms_median,cupti_step_ms,gpu_busy_pct,idle_ms\n"

/* The report of `rows` (after HEADER), its Markdown. */
static const char *report_of(const char *name, const char *rows)
{
    return test_report_rows(tmpdir, name, HEADER, rows);
}

static void test_traced_steps_apart(void)
{
    /* traced 9.55 ms against 0.161 ms timed: 60 times the step */
    const char *md = report_of("apart", "cpu,x,tiny,fp32,async,sum,16,4,4,ok,0.161,9.55,0.761\n"
                                        "cpu,x,tiny,fp32,async,sum,16,16,1,ok,0.113,10.6,0.671\n");
    CHECK(md && strstr(md, "but those traced steps took 9.55 and 10.6 ms against 0.161 and "
                           "0.113 ms timed"));
    CHECK(md && !strstr(md, "the micro-batch hardly changes how busy the device is"));
}

static void test_traced_steps_alike(void)
{
    /* traced 0.085 ms against 0.067 ms timed: the usual cost of recording */
    const char *md = report_of("alike", "cpu,x,tiny,fp32,async,sum,16,4,4,ok,0.067,0.085,82.8\n"
                                        "cpu,x,tiny,fp32,async,sum,16,16,1,ok,0.051,0.066,87.1\n");
    CHECK(md && strstr(md, "the micro-batch hardly changes how busy the device is"));
    CHECK(md && !strstr(md, "those traced steps took"));
}

/* On a backend whose host computes each operation (the CPU), a busy
 * share that falls with the micro-batch is the host's own work between
 * operations: the A/B/C verdict names no device idle time there, and the
 * finding said "smaller micro-batches leave the device idle". */
static void test_host_computes_no_idle_device(void)
{
    const char *md = report_of("host", "cpu,x,tiny,fp32,async,sum,16,2,8,ok,0.078,0.080,83.7\n"
                                       "cpu,x,tiny,fp32,async,sum,16,16,1,ok,0.056,0.058,93.3\n");
    CHECK(md && strstr(md, "busy time is 83.7% of the step at micro-batch 2 and 93.3% at 16"));
    CHECK(md && strstr(md, "which on this backend is the host's own work, not a device left "
                           "idle."));
    CHECK(md && !strstr(md, "leave the device idle"));
    md = report_of("gpu", "cuda,x,tiny,fp32,async,sum,16,2,8,ok,0.078,0.080,83.7\n"
                          "cuda,x,tiny,fp32,async,sum,16,16,1,ok,0.056,0.058,93.3\n");
    CHECK(md && strstr(md, "smaller micro-batches leave the device idle for more of the step."));
}

/* The A/B/C verdict's why holds to the same rule: a traced C far longer
 * than its timed step is no cause, and its busy share no idle time. */
static void test_verdict_traced_apart(void)
{
    const char *md = report_of("abc_apart",
                               "cuda,x,S,bf16,async,sum,64,64,1,ok,0.23,0.24,53.9\n"
                               "cuda,x,S,bf16,async,sum,64,16,4,ok,0.58,0.60,29.6\n"
                               "cuda,x,S,bf16,async,sum,64,8,8,ok,0.94,2.90,13.4\n");
    CHECK(md && strstr(md, "Device busy time is not named as a cause: the traced steps of A "
                           "and C took 0.240 and 2.90 ms against 0.230 and 0.940 ms timed"));
    CHECK(md && !strstr(md, "Device busy 53.9% of A's step"));
}

/* A share no step reaches is marked in the A/B/C table as in the splits
 * table, so that one figure never reads as true in one and impossible in
 * the other. */
static void test_verdict_marks_impossible_share(void)
{
    const char *md = test_report_rows(tmpdir, "abc_share", HEADER_IDLE,
                                      "cuda,x,S,bf16,async,sum,64,64,1,ok,0.23,0.24,104.5,0\n"
                                      "cuda,x,S,bf16,async,sum,64,16,4,ok,0.58,0.60,29.6,0.42\n"
                                      "cuda,x,S,bf16,async,sum,64,8,8,ok,0.94,0.97,13.4,0.84\n");
    const char *abc = md ? strstr(md, "| A ") : NULL;
    const char *end = abc ? strchr(abc, '\n') : NULL;
    CHECK(abc && end && strstr(abc, "104 (!)") && strstr(abc, "104 (!)") < end);
    CHECK(md && strstr(md, "C's device sits idle for the rest of its step."));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_traced_steps_apart();
    test_traced_steps_alike();
    test_host_computes_no_idle_device();
    test_verdict_traced_apart();
    test_verdict_marks_impossible_share();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_busy");
}
