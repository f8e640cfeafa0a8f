/* The report's finding on the machine across a comparison's rounds: said
 * where every config moved together over 10% (each round's common factor
 * from round_ms), never for configs that jitter each on its own, nor for
 * rows whose rounds do not line up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-rounds-XXXXXX";

#define HEADER                                                                               \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"    \
    "accum_steps,arm,status,step_ms_median,samples,comparison,rounds,round_ms\n"

static const char *report_of(const char *name, const char *rows)
{
    return test_report_rows(tmpdir, name, HEADER, rows);
}

/* Rounds 4 and 5 took 1.2 times as long for every config; 16x4 timed
 * twice (an A/A pair) is one config of the three. */
static void test_moved_together(void)
{
    const char *md = report_of(
        "moved", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,10,50,c1,5,10 10 10 12 12\n"
                 "cpu,x,S,fp32,async,sum,64,16,4,1,ok,20,50,c1,5,20 20 20 24 24\n"
                 "cpu,x,S,fp32,async,sum,64,16,4,2,ok,20,50,c1,5,20 20 20 24 24\n"
                 "cpu,x,S,fp32,async,sum,64,8,8,1,ok,40,50,c1,5,40 40 40 48 48\n");
    CHECK(md && strstr(md, "- Model S at effective batch 64 (3 configs, 5 rounds timed "
                           "together): the machine's speed moved under all of them at once, "
                           "each round's steps taking 1.00 to 1.20 times their config's median "
                           "(by round: 1.00 1.00 1.00 1.20 1.20). The paired ratios"));
}

/* Each config slower in a round of its own: the median over the configs
 * of each round stays 1, no move of the machine. */
static void test_jitter_of_its_own(void)
{
    const char *md = report_of(
        "jitter", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,10,50,c1,5,10 11 10 10 10\n"
                  "cpu,x,S,fp32,async,sum,64,16,4,1,ok,20,50,c1,5,20 20 22 20 20\n"
                  "cpu,x,S,fp32,async,sum,64,8,8,1,ok,40,50,c1,5,40 40 40 44 40\n");
    CHECK(md && strstr(md, "## What the numbers show") && !strstr(md, "speed moved"));
}

/* Rows whose kept rounds differ in count, or a comparison of one row:
 * nothing to line up. */
static void test_nothing_to_line_up(void)
{
    const char *md = report_of(
        "ragged", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,10,50,c1,5,10 10 10 12 12\n"
                  "cpu,x,S,fp32,async,sum,64,16,4,1,ok,20,50,c1,4,20 20 20 24\n"
                  "cpu,x,M,fp32,async,sum,64,64,1,1,ok,10,50,c2,5,10 10 10 12 12\n");
    CHECK(md && strstr(md, "## What the numbers show") && !strstr(md, "speed moved"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_moved_together();
    test_jitter_of_its_own();
    test_nothing_to_line_up();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_rounds");
}
