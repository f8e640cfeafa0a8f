/* The report's figures say no more than their columns support: the split
 * table's ratio to K=1 is the paired one the findings give, with its
 * interval; a median and its range share their decimals; a reduction
 * this version does not know is not called a known-wrong one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "report.h"
#include "test_files.h"

static char tmpdir[] = "/tmp/accubench-figures-XXXXXX";

/* The report of csv (written into tmpdir) as text, or NULL. */
static const char *report_of(const char *csv, const char *name)
{
    char *argv[] = {"report", (char *)csv, "--out", tmpdir, "--no-charts", NULL};
    if (report_main(5, argv) != 0)
        return NULL;
    char md[512];
    snprintf(md, sizeof md, "%s/%s.md", tmpdir, name);
    return test_slurp(md);
}

/* The report of `text` written as tmpdir/NAME.csv, as text, or NULL. */
static const char *report_of_text(const char *name, const char *text)
{
    char csv[256];
    snprintf(csv, sizeof csv, "%s/%s.csv", tmpdir, name);
    test_write_file(csv, text);
    return report_of(csv, name);
}

/* Two splits timed in one comparison: over the rounds 4x3 takes 1.7x
 * 12x1's time, the medians' own ratio is 1.64; the table gives the
 * finding's ratio with its interval (it once gave "1.64x", alone). */
static void test_vs_k1(void)
{
    char csv[256];
    snprintf(csv, sizeof csv, "%s/paired.csv", tmpdir);
    test_write_file(csv, "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,"
                         "micro_batch,accum_steps,last_micro_batch,arm,status,step_ms_median,"
                         "step_ms_ci_lo,step_ms_ci_hi,comparison,rounds,round_ms\n"
                         "cpu,x,S,fp32,async,sum,12,4,3,4,1,ok,16.4,16,18,c1,5,"
                         "16.9 17 17.1 17 17\n"
                         "cpu,x,S,fp32,async,sum,12,12,1,12,1,ok,10,9.9,10.1,c1,5,"
                         "10 10 10 10 10\n");
    const char *md = report_of(csv, "paired");
    const char *row = md ? strstr(md, "\n| 4x3 ") : NULL;
    const char *eol = row ? strchr(row + 1, '\n') : NULL;
    const char *cell = row ? strstr(row, "| 1.70x [1.") : NULL;
    CHECK(cell && eol && cell < eol);
    CHECK(md && strstr(md, "the slowest is 4x3 at 16.40 ms, 1.70x [1."));
}

#define FIGURES_HEAD                                                                          \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "accum_steps,last_micro_batch,arm,status,step_ms_median,"

/* A figure past belief (an edited row: a step of 1e14 ms) prints in three
 * digits, as the other figures do: its percentage once ran to 190. A step
 * past 1e15 ms is refused with the file (csv_values.h). */
static void test_huge_figure(void)
{
    const char *md = report_of_text("huge", FIGURES_HEAD "pass_ms,samples\n"
                                            "cpu,x,S,fp32,async,sum,8,4,2,4,1,ok,1e14,1,50\n"
                                            "cpu,x,S,fp32,async,sum,8,8,1,8,1,ok,10,10,50\n");
    CHECK(md && strstr(md, "+5e+15%"));
    CHECK(md && !strstr(md, "000000000000"));
    CHECK(!report_of_text("past", FIGURES_HEAD "pass_ms,samples\n"
                                  "cpu,x,S,fp32,async,sum,8,4,2,4,1,ok,1e300,1,50\n"));
}

/* A file without the samples column: a noisy row says its noise, not
 * "-1 samples". */
static void test_no_samples_column(void)
{
    const char *md = report_of_text("nosamples", FIGURES_HEAD "step_noise_pct,flags\n"
                                    "cpu,x,S,fp32,async,sum,64,64,1,64,1,ok,10,9,noisy\n"
                                    "cpu,x,S,fp32,async,sum,64,16,4,16,1,ok,12,1,\n"
                                    "cpu,x,S,fp32,async,sum,64,8,8,8,1,ok,14,1,\n");
    CHECK(md && strstr(md, "A noisy: noise 9.0%"));
    CHECK(md && !strstr(md, "-1 samples"));
}
#undef FIGURES_HEAD

static void test_default_fixture(void)
{
    const char *md = report_of("tests/fixtures/default.csv", "default");
    CHECK(md != NULL);
    if (!md)
        return;
    /* the median with its interval over the configs (it once stood bare),
     * its range with one number of decimals (it once read "from 1.034x to
     * 1.12x"); 5 configs reach 93.8%, not 95%, and say so */
    CHECK(strstr(md, "sync mode takes 1.11x [1.03..1.12] the async step time (median over 5 "
                     "configs measured in both, its 93.8% interval over them; from 1.03x to "
                     "1.12x)"));
    /* the fixture's "mean" reduction is a name from an earlier version: not
     * called a known-wrong one, and its error not called unmeasured */
    CHECK(!strstr(md, "known-wrong reductions"));
    CHECK(strstr(md, "measured only for a reduction this version does not know (mean): up "
                     "to 3.1e-06"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_vs_k1();
    test_huge_figure();
    test_no_samples_column();
    test_default_fixture();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_figures");
}
