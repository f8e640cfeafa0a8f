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

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_traced_steps_apart();
    test_traced_steps_alike();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_busy");
}
