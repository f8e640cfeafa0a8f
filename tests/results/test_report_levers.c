/* Where the report names one row in a sentence (the flagged rows, the
 * furthest from the naive estimate, the highest MFU) it names its levers
 * too: under mpirun the three syncs of one split are three rows, and
 * "tiny 2x4 async" three times said nothing of which was which. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-levers-XXXXXX";

#define HEADER                                                                              \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "accum_steps,devices,sync,status,step_ms_median,pass_ms,mfu_pct,samples,step_noise_pct," \
    "flags\n"

/* The report of `rows` (after HEADER), its Markdown. */
static const char *report_of(const char *name, const char *rows)
{
    return test_report_rows(tmpdir, name, HEADER, rows);
}

static void test_syncs_named(void)
{
    const char *md = report_of("dp", "cpu,x,tiny,fp32,async,sum,16,2,4,2,micro,ok,0.198,0.02,5,430,4.9,noisy\n"
                                     "cpu,x,tiny,fp32,async,sum,16,2,4,2,window,ok,0.098,0.02,9,890,2.5,noisy\n"
                                     "cpu,x,tiny,fp32,async,sum,16,2,4,2,overlap,ok,0.104,0.02,8,780,3.7,noisy\n");
    CHECK(md && strstr(md, "tiny 2x4 async, micro sync (noisy"));
    CHECK(md && strstr(md, "tiny 2x4 async, window sync (noisy"));
    CHECK(md && strstr(md, "tiny 2x4 async, overlap sync (noisy"));
    CHECK(md && strstr(md, "furthest: tiny 2x4 async, micro sync at +"));
    CHECK(md && strstr(md, "The highest MFU is 9.00% (model tiny, 2x4, async, window sync)"));
}

static void test_one_process_unchanged(void)
{
    const char *md = report_of("one", "cpu,x,tiny,fp32,async,sum,16,4,4,1,,ok,0.2,0.04,5,430,4.9,noisy\n");
    CHECK(md && strstr(md, "tiny 4x4 async (noisy"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_syncs_named();
    test_one_process_unchanged();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_levers");
}
