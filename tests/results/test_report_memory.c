/* "The fastest split under a memory cap" names the config the run's
 * summary, "Within a memory cap" and plan --recommend name: the fastest in
 * whichever execution mode ran it, the mode said. It read the main mode
 * alone, unnamed, and called async's 64x1 the fastest overall beside a
 * sync 16x4 that beat it. A known-wrong reduction is still no way to the
 * batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-memory-XXXXXX";

#define HEADER                                                                             \
    "# device: x\n# mem_cap_bytes: 0\nbackend,device,model,dtype,mode,reduction,"          \
    "effective_batch,micro_batch,accum_steps,status,step_ms_median,step_ms_ci_lo,"          \
    "step_ms_ci_hi,samples,mem_need_bytes\n"

/* The section of md from its heading to the next. */
static const char *section(const char *md, char *out, size_t len)
{
    const char *at = md ? strstr(md, "## The fastest split under a memory cap") : NULL;
    const char *end = at ? strstr(at + 3, "\n## ") : NULL;
    if (!at)
        return NULL;
    snprintf(out, len, "%.*s", (int)(end ? end - at : (long)strlen(at)), at);
    return out;
}

static void test_every_mode(void)
{
    /* the main mode (async, most rows) is slower than sync at 16x4;
     * mean-of-means is fastest of all and no way to the batch */
    const char *md = test_report_rows(
        tmpdir, "modes", HEADER,
        "cpu,x,S,fp32,async,sum,64,64,1,ok,40,39,41,50,3000000\n"
        "cpu,x,S,fp32,async,sum,64,16,4,ok,50,49,51,50,1000000\n"
        "cpu,x,S,fp32,async,sum,64,8,8,ok,60,59,61,50,800000\n"
        "cpu,x,S,fp32,sync,sum,64,16,4,ok,30,29,31,50,1000000\n"
        "cpu,x,S,fp32,async,mean-of-means,64,64,1,ok,20,19,21,50,3000000\n");
    char text[4000];
    CHECK(section(md, text, sizeof text) != NULL);
    CHECK(strstr(text, "what it needs, in whichever execution mode ran it fastest."));
    CHECK(strstr(text, "|  64 | S (fp32) | 16x4 sync         |   30.00 | 976.6 KiB | 16x4 sync"
                       "       |   30.00 |"));
    CHECK(!strstr(text, "64x1"));
    if (!strstr(text, "| 16x4 sync"))
        fprintf(stderr, "%s\n", text);

    /* one mode: the split alone, as before */
    md = test_report_rows(tmpdir, "one", HEADER,
                          "cpu,x,S,fp32,async,sum,64,64,1,ok,40,39,41,50,3000000\n"
                          "cpu,x,S,fp32,async,sum,64,16,4,ok,50,49,51,50,1000000\n");
    CHECK(section(md, text, sizeof text) != NULL);
    CHECK(strstr(text, "|  64 | S (fp32) | 64x1              |   40.00 |"));
    CHECK(!strstr(text, "whichever"));

    /* the file's first row did not run, in another mode: the table's rows
     * are of one mode still, and name none */
    md = test_report_rows(tmpdir, "first-oom", HEADER,
                          "cpu,x,S,fp32,sync,sum,64,64,1,oom,,,,,3000000\n"
                          "cpu,x,S,fp32,async,sum,64,64,1,ok,40,39,41,50,3000000\n"
                          "cpu,x,S,fp32,async,sum,64,16,4,ok,50,49,51,50,1000000\n");
    CHECK(section(md, text, sizeof text) != NULL);
    CHECK(strstr(text, "|  64 | S (fp32) | 64x1              |   40.00 |"));
    CHECK(!strstr(text, "whichever"));
    CHECK(!strstr(text, "64x1 async"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_every_mode();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_memory");
}
