/* The report's "Within a memory cap" says why it has nothing to show: rows
 * that ran with their memory figures but of a reduction this build does
 * not hold exact (a file from another version: "mean") are left out for
 * their reduction, and the section must not say that no row ran with a
 * memory figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-frontier-why-XXXXXX";

#define HEADER                                                                              \
    "# device: x\n# mem_cap_bytes: 1000000000\nbackend,device,model,dtype,mode,reduction,"  \
    "effective_batch,micro_batch,accum_steps,status,step_ms_median,mem_need_bytes\n"

static void test_unknown_reduction(void)
{
    const char *md = test_report_rows(tmpdir, "mean", HEADER,
                                      "cuda,x,S,bf16,async,mean,64,64,1,ok,0.23,277229568\n"
                                      "cuda,x,S,bf16,async,mean,64,8,8,ok,0.94,260000000\n");
    CHECK(md && !strstr(md, "no row ran with a memory figure"));
    CHECK(md && strstr(md, "Nothing to set against a cap: the rows that ran are of a "
                           "reduction this build does not hold exact (mean)"));
}

static void test_no_memory(void)
{
    const char *md = test_report_rows(tmpdir, "nomem", HEADER,
                                      "cuda,x,S,bf16,async,sum,64,64,1,ok,0.23,\n"
                                      "cuda,x,S,bf16,async,sum,64,8,8,ok,0.94,\n");
    CHECK(md && strstr(md, "Nothing to set against a cap: no row ran with a memory figure."));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_unknown_reduction();
    test_no_memory();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_frontier_why");
}
