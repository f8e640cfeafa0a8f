/* compare's rule on hand-made rows: slower or faster only where the
 * ratio's interval clears the threshold, within it where the whole
 * interval lies inside it, else not yet separated at this noise; a config that
 * stopped running, now runs or ran in neither said so. A config timed
 * twice (an A/A check) is compared once, from its first arm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compare.h"

static void test_verdicts(void)
{
    csv_row b, n;
    memset(&b, 0, sizeof b);
    b.status = "ok";
    b.step_ms_median = 10;
    b.step_ms_p10 = 9.8;
    b.step_ms_p90 = 10.3;
    b.step_noise_pct = 2;
    n = b;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED);
    n.step_ms_median = 10.4, n.step_ms_p10 = 10.3, n.step_ms_p90 = 10.5, n.step_noise_pct = 0.5;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED); /* inside base's band */
    n.step_ms_median = 11, n.step_ms_p10 = 10.9, n.step_ms_p90 = 11.1;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_SLOWER);
    n.step_noise_pct = 10; /* the new run is too noisy to tell */
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED);
    n.step_ms_median = 9, n.step_ms_p10 = 8.9, n.step_ms_p90 = 9.1, n.step_noise_pct = 0.5;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_FASTER);
    /* no spread measured (no interval, p10..p90 or noise): a median
     * alone is no band, so no evidence either way, as the report and the
     * run's summary give the same rows ("no interval: no verdict"); it
     * was a band of no width here, and a 5% change "slower" from it */
    b.step_ms_p10 = b.step_ms_p90 = b.step_noise_pct = NAN;
    n = b;
    n.step_ms_median = 10.05;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_TOO_FEW);
    n.step_ms_median = 10.5;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_TOO_FEW);
    n.status = "oom";
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_FAILED);
    CHECK(compare_rows(&n, &b, 0.01) == VERDICT_FIXED);
    CHECK(compare_rows(&n, &n, 0.01) == VERDICT_NOT_RUN);
}

/* compare_main's stdout for `compare BASE NEW` (each a file or a list of
 * runs), in `out`; its exit code. */
static int run_compare(char *base, char *now, char *out, size_t len)
{
    FILE *f = tmpfile();
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (!f || saved < 0 || dup2(fileno(f), STDOUT_FILENO) < 0)
        return -1;
    char *argv[] = {"compare", base, now, NULL};
    int rc = compare_main(3, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(f);
    out[fread(out, 1, len - 1, f)] = '\0';
    fclose(f);
    return rc;
}

/* The same for two files of the texts base and new_csv. */
static int compare_files(const char *base, const char *new_csv, char *out, size_t len)
{
    char paths[2][64];
    snprintf(paths[0], sizeof paths[0], "%s", check_temp_file(base));
    snprintf(paths[1], sizeof paths[1], "%s", check_temp_file(new_csv));
    int rc = run_compare(paths[0], paths[1], out, len);
    remove(paths[0]);
    remove(paths[1]);
    return rc;
}

/* 16x4 timed twice in both runs; its second arm alone came out slower in
 * new: the config is compared from its first arm (the same), not counted
 * twice, and is no regression. */
static void test_second_arm_compared_once(void)
{
#define ARMS_HEAD                                                                            \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "arm,accum_steps,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi\n"
    static const char base[] = ARMS_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39.9,40.1\n"
                                         "cpu,x,S,fp32,async,sum,64,16,1,4,ok,50,49.9,50.1\n"
                                         "cpu,x,S,fp32,async,sum,64,16,2,4,ok,50,49.9,50.1\n";
    static const char later[] = ARMS_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39.9,40.1\n"
                                          "cpu,x,S,fp32,async,sum,64,16,1,4,ok,50,49.9,50.1\n"
                                          "cpu,x,S,fp32,async,sum,64,16,2,4,ok,60,59.9,60.1\n";
#undef ARMS_HEAD
    char out[8192];
    CHECK(compare_files(base, later, out, sizeof out) == 0);
    CHECK(strstr(out, "compare: 2 configs in both: 0 slower,") != NULL);
    CHECK(strstr(out, "; 2 rows of a config's second arm left aside") != NULL);
    CHECK(strstr(out, "(arm 2)") == NULL);
}

/* A config that ran in base and not in new: a regression (exit 1), its
 * verdict new's own status, so that a skip over --max-step-s does not
 * read as a crash. */
static void test_not_run_in_new(void)
{
#define HEAD                                                                                 \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "arm,accum_steps,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi\n"
    static const char base[] = HEAD "cpu,x,M,fp32,async,sum,64,64,1,1,ok,600,599,601\n"
                                    "cpu,x,M,fp32,async,sum,64,2,1,32,ok,5900,5890,5910\n";
    static const char later[] = HEAD "cpu,x,M,fp32,async,sum,64,64,1,1,ok,600,599,601\n"
                                     "cpu,x,M,fp32,async,sum,64,2,1,32,skipped,,,\n";
#undef HEAD
    char out[8192];
    CHECK(compare_files(base, later, out, sizeof out) == 1);
    CHECK(strstr(out, "| skipped in new") != NULL && strstr(out, "failed") == NULL);
    CHECK(strstr(out, ", 1 ran in base, not in new;") != NULL);
}

/* One run of S at 64x1 whose step took ms, its own interval +-0.25%. */
static const char *one_run(double ms)
{
    static char text[8][512];
    static int next;
    char *t = text[next++ % 8];
    snprintf(t, sizeof text[0],
             "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,"
             "micro_batch,arm,accum_steps,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi\n"
             "cpu,x,S,fp32,async,sum,64,64,1,1,ok,%g,%g,%g\n", ms, ms * 0.9975, ms * 1.0025);
    return check_temp_file(t);
}

/* compare_main over three runs a side (each side a comma-separated list);
 * its exit code, stdout in out. */
static int compare_runs(const double base[3], const double now[3], char *out, size_t len)
{
    char sides[2][200], paths[6][64];
    for (int i = 0; i < 6; i++)
        snprintf(paths[i], sizeof paths[i], "%s", one_run(i < 3 ? base[i] : now[i - 3]));
    for (int k = 0; k < 2; k++)
        snprintf(sides[k], sizeof sides[k], "%s,%s,%s", paths[3 * k], paths[3 * k + 1],
                 paths[3 * k + 2]);
    int rc = run_compare(sides[0], sides[1], out, len);
    for (int i = 0; i < 6; i++)
        remove(paths[i]);
    return rc;
}

/* Several runs a side: the ratio over the runs. Runs of one build that
 * the machine moved (40, 52, 36 against 38, 50, 45 ms) are not separated,
 * where the first runs alone, each +-0.25%, read 0.95x faster; a real 20%
 * regression under the same spread of runs is slower, exit 1. */
static void test_runs_a_side(void)
{
    char out[8192];
    const double drift_base[3] = {40, 52, 36}, drift_now[3] = {38, 50, 45};
    CHECK(compare_runs(drift_base, drift_now, out, sizeof out) == 0);
    CHECK(strstr(out, "# runs: 3 base, 3 new;") != NULL);
    CHECK(strstr(out, "| not yet separated |") != NULL);
    CHECK(strstr(out, " 42.15 |") != NULL); /* base: the geometric mean of 40, 52, 36 */
    const double slow_base[3] = {40, 41, 39}, slow_now[3] = {48, 49.5, 47};
    CHECK(compare_runs(slow_base, slow_now, out, sizeof out) == 1);
    CHECK(strstr(out, "| slower ") != NULL);
}

/* Two runs timed apart from few steps each: one step a side is a band of
 * no width, and 1.5x "slower" from it is no evidence (exit 0, the verdict
 * says too few samples, the ratio printed without an interval), nor is
 * three a side (75%); five a side is judged
 * (the rule's floor, FIGURES_MIN_DRAWS), its level (93.8%) beside the
 * ratio; six is a 95% interval and carries no mark. */
static void test_too_few_samples(void)
{
#define FEW_HEAD                                                                              \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "arm,accum_steps,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,samples\n"
    char out[8192];
    CHECK(compare_files(FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,40,1\n",
                        FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,60,60,60,1\n", out,
                        sizeof out) == 0);
    /* the ratio without an interval, as the run's summary and the report
     * give it: an interval of one step a side covers the median 0% */
    CHECK(strstr(out, " 1.50x |") != NULL && !strstr(out, "1.50x ["));
    CHECK(strstr(out, "| too few samples |") != NULL);
    CHECK(strstr(out, ", 1 too few samples to judge;") != NULL);
    CHECK(strstr(out, "# short intervals") == NULL);
    CHECK(compare_files(FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39.9,40.1,3\n",
                        FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,60,59.9,60.1,8\n", out,
                        sizeof out) == 0);
    CHECK(strstr(out, "| too few samples |") != NULL);
    CHECK(compare_files(FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39.9,40.1,5\n",
                        FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,60,59.9,60.1,8\n", out,
                        sizeof out) == 1);
    CHECK(strstr(out, "(93.8%) |") != NULL && strstr(out, "| slower ") != NULL);
    CHECK(compare_files(FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39.9,40.1,6\n",
                        FEW_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,60,59.9,60.1,8\n", out,
                        sizeof out) == 1);
    CHECK(strstr(out, "%) |") == NULL && strstr(out, "# short intervals") == NULL);
#undef FEW_HEAD
}

/* Rows paired through their rounds whose medians say another ratio (an
 * edited median, say): the verdict follows the rounds, and the ratio is
 * marked and the mark explained, as the report does, rather than print
 * 1.000x "the same" beside medians 1.5x apart without a word. */
static void test_pooled_apart(void)
{
#define PAIRED_HEAD                                                                           \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "arm,accum_steps,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,comparison,rounds,"   \
    "round_ms\n"
    char out[8192];
    CHECK(compare_files(PAIRED_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39,41,c1,5,"
                                    "40 41 40.5 39.8 40.2\n",
                        PAIRED_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,60,58.5,61.5,c1,5,"
                                    "40 41 40.5 39.8 40.2\n",
                        out, sizeof out) == 0);
    CHECK(strstr(out, "| 1.000x [") && strstr(out, "] * |"));
    CHECK(strstr(out, "# *: 1 paired ratio whose medians' own ratio lies outside the interval"));
    CHECK(compare_files(PAIRED_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39,41,c1,5,"
                                    "40 41 40.5 39.8 40.2\n",
                        PAIRED_HEAD "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40.2,39,41,c1,5,"
                                    "40.3 41.2 40.6 40 40.3\n",
                        out, sizeof out) == 0);
    CHECK(!strstr(out, "# *:") && !strstr(out, "] * |"));
#undef PAIRED_HEAD
}

int main(void)
{
    test_pooled_apart();
    test_verdicts();
    test_too_few_samples();
    test_second_arm_compared_once();
    test_not_run_in_new();
    test_runs_a_side();
    /* the words are the rule's, at the threshold compare was given */
    CHECK(!strcmp(verdict_words(VERDICT_WITHIN, 0.01).s, "the same within 1%"));
    CHECK(!strcmp(verdict_words(VERDICT_NOT_SEPARATED, 0.01).s, "not yet separated"));
    CHECK(!strcmp(verdict_words(VERDICT_SLOWER, 0.01).s, "slower"));
    CHECK(!strcmp(verdict_words(VERDICT_FAILED, 0.01).s, "failed"));
    return check_finish("test_compare_rule");
}
