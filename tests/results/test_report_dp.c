/* The report's data-parallel sentences (report_dp.c) against hand-made
 * rows: a sync mode is said to save or cost time only where the paired
 * rule tells it from the baseline, and a sharded step names the
 * collectives it makes, not the all-reduces it does not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_files.h"
#include "report.h"

static char tmpdir[] = "/tmp/accubench-report-dp-XXXXXX";

/* The report's bullet that starts with `start`, copied into out. */
static int bullet(const char *md, const char *start, char *out, size_t len)
{
    const char *b = md ? strstr(md, start) : NULL;
    if (!b)
        return 0;
    const char *e = strchr(b, '\n');
    size_t n = e ? (size_t)(e - b) : strlen(b);
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), b);
    return 1;
}

#define HEADER                                                                              \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "accum_steps,last_micro_batch,arm,devices,sync,shard,status,step_ms_median,"           \
    "step_ms_ci_lo,step_ms_ci_hi,comparison,rounds,round_ms,allreduce_calls_per_step,"     \
    "allreduce_bytes_per_step,reduce_scatter_calls_per_step,"                              \
    "reduce_scatter_bytes_per_step,allgather_calls_per_step,allgather_bytes_per_step,"     \
    "comm_ms,comm_exposed_ms\n"

/* Window's median is 5% under micro's, but round by round the two swap
 * places: the paired rule cannot tell them apart, and the sentence says
 * so instead of "it saves". Overlap is faster in every round: it saves. */
static void test_saves_only_where_told_apart(void)
{
    char csv[300], md[300], line[4000];
    snprintf(csv, sizeof csv, "%s/sync.csv", tmpdir);
    test_write_file(csv, HEADER
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,micro,none,ok,10,9,11,c1,5,"
               "10 9 11 10 10,2,800,0,0,0,0,1,1\n"
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,window,none,ok,9.5,8.5,10.5,c1,5,"
               "11 8 10 9.5 10.5,1,400,0,0,0,0,0.5,0.5\n"
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,overlap,none,ok,5,4.9,5.1,c1,5,"
               "5 4.5 5.5 5 5,3,400,0,0,0,0,0.5,0.2\n");
    char *argv[] = {"report", csv, "--no-charts", NULL};
    CHECK(report_main(3, argv) == 0);
    snprintf(md, sizeof md, "%s/sync.md", tmpdir);
    CHECK(bullet(test_slurp(md), "- At K=2 on 2 devices", line, sizeof line));
    const char *window = strstr(line, "; window sync"), *overlap = strstr(line, "; overlap sync");
    CHECK(window && overlap);
    if (window && overlap) {
        CHECK(strstr(line, "micro sync makes 2 all-reduces a step") != NULL);
        char w[2000];
        snprintf(w, sizeof w, "%.*s", (int)(overlap > window ? overlap - window : 0), window);
        CHECK(strstr(w, "not yet separated from micro sync: ") && !strstr(w, "saves"));
        CHECK(strstr(overlap, "it saves") != NULL);
    }
}

/* Under shard gradients every sync mode reduce-scatters each micro-batch:
 * no all-reduce, and the sentence names what was run, with the shard. */
static void test_sharded_names_its_collectives(void)
{
    char csv[300], md[300], line[4000];
    snprintf(csv, sizeof csv, "%s/shard.csv", tmpdir);
    test_write_file(csv, HEADER
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,micro,gradients,ok,10,9,11,c1,5,"
               "10 10 10 10 10,0,0,4,800,1,400,1,1\n"
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,window,gradients,ok,10,9,11,c1,5,"
               "10 10 10 10 10,0,0,4,800,1,400,1,1\n");
    char *argv[] = {"report", csv, "--no-charts", NULL};
    CHECK(report_main(3, argv) == 0);
    snprintf(md, sizeof md, "%s/shard.md", tmpdir);
    CHECK(bullet(test_slurp(md), "- At K=2 on 2 devices", line, sizeof line));
    CHECK(strstr(line, "shard gradients)") != NULL);
    CHECK(strstr(line, "4 reduce-scatters and 1 all-gather") != NULL);
    CHECK(!strstr(line, "0 all-reduces"));
}

/* A config timed twice in two sync modes (an A/A check): one sentence,
 * its first arm's; the second arm's sync set is the same config again. */
static void test_second_arm_said_once(void)
{
    char csv[300], md[300];
    snprintf(csv, sizeof csv, "%s/arms.csv", tmpdir);
    test_write_file(csv, HEADER
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,micro,none,ok,10,9,11,c1,5,"
               "10 10 10 10 10,2,800,0,0,0,0,1,1\n"
               "cpu,x,S,fp32,async,sum,16,4,2,4,1,2,window,none,ok,9,8,10,c1,5,"
               "9 9 9 9 9,1,400,0,0,0,0,0.5,0.5\n"
               "cpu,x,S,fp32,async,sum,16,4,2,4,2,2,micro,none,ok,10,9,11,c1,5,"
               "10 10 10 10 10,2,800,0,0,0,0,1,1\n"
               "cpu,x,S,fp32,async,sum,16,4,2,4,2,2,window,none,ok,9,8,10,c1,5,"
               "9 9 9 9 9,1,400,0,0,0,0,0.5,0.5\n");
    char *argv[] = {"report", csv, "--no-charts", NULL};
    CHECK(report_main(3, argv) == 0);
    snprintf(md, sizeof md, "%s/arms.md", tmpdir);
    const char *text = test_slurp(md);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, "- At K=2 on 2 devices")); p++)
        n++;
    CHECK(n == 1);
    CHECK(text && !strstr(text, "4x2 (arm 2), ") && !strstr(text, "4x2 (arm 2)):"));
}

/* Two configs that did not run, the same split in two sync modes: the
 * table of configs that did not run names the sync, so that its two lines
 * do not read as one config listed twice; a key every such row shares
 * (devices) is not a column of its own. */
static void test_not_run_told_apart(void)
{
    char csv[300], md[300];
    snprintf(csv, sizeof csv, "%s/skipped.csv", tmpdir);
    test_write_file(csv, HEADER
               "cpu,x,S,fp32,async,sum,10,3,2,1,1,3,window,none,skipped,,,,,,,,,,,,,,\n"
               "cpu,x,S,fp32,async,sum,10,3,2,1,1,3,micro,none,skipped,,,,,,,,,,,,,,\n"
               "cpu,x,S,fp32,async,sum,10,2,2,2,1,3,window,none,ok,9,8,10,,,,1,400,0,0,0,0,"
               "0.5,0.5\n");
    char *argv[] = {"report", csv, "--no-charts", NULL};
    CHECK(report_main(3, argv) == 0);
    snprintf(md, sizeof md, "%s/skipped.md", tmpdir);
    const char *text = test_slurp(md);
    const char *section = text ? strstr(text, "## Configs that did not run") : NULL;
    CHECK(section != NULL);
    if (section) {
        CHECK(strstr(section, "| model | dtype | mode  | reduction | sync   |") != NULL);
        CHECK(strstr(section, "| sum       | window |") != NULL);
        CHECK(strstr(section, "| sum       | micro  |") != NULL);
        CHECK(!strstr(section, "| devices "));
    }
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_saves_only_where_told_apart();
    test_sharded_names_its_collectives();
    test_second_arm_said_once();
    test_not_run_told_apart();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_dp");
}
