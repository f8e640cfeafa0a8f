/* The A/B/C verdict (report_verdict.h): which three splits the rule picks,
 * that the report opens with them by name, that the verdict follows the
 * comparison rule (row_compare.h: paired per round where the rows were
 * timed together), and that flags explain a figure without vetoing it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "compare.h"
#include "noise_plan.h"
#include "report.h"
#include "report_verdict.h"
#include "row_compare.h"
#include "row_flags.h"

static csv_row row(int64_t e, int64_t micro)
{
    csv_row r;
    memset(&r, 0, sizeof r);
    r.effective_batch = e;
    r.micro_batch = micro;
    r.accum_steps = (e + micro - 1) / micro;
    r.devices = 1;
    return r;
}

static void test_pick(void)
{
    csv_row rows[] = {row(64, 64), row(64, 32), row(64, 16), row(64, 8), row(64, 4)};
    size_t idx[] = {0, 1, 2, 3, 4}, abc[3];
    CHECK(abc_pick(rows, idx, 5, abc) == 1);
    CHECK(abc[0] == 0 && abc[1] == 2 && abc[2] == 3); /* 64x1, 16x4, 8x8 */
    /* E = 256: 256x1, 64x4, 32x8 by the same rule */
    csv_row big[] = {row(256, 256), row(256, 128), row(256, 64), row(256, 32)};
    CHECK(abc_pick(big, idx, 4, abc) == 1 && abc[1] == 2 && abc[2] == 3);
    /* A is the largest micro-batch the series has, when E x 1 is missing */
    csv_row no_k1[] = {row(64, 32), row(64, 16), row(64, 8)};
    CHECK(abc_pick(no_k1, idx, 3, abc) == 1 && abc[0] == 0);
    /* no E/8, no E/4, E not divisible by 8, A not above B, or devices */
    csv_row no_c[] = {row(64, 64), row(64, 16), row(64, 4)};
    CHECK(abc_pick(no_c, idx, 3, abc) == 0);
    csv_row no_b[] = {row(64, 64), row(64, 32), row(64, 8)};
    CHECK(abc_pick(no_b, idx, 3, abc) == 0);
    csv_row odd[] = {row(60, 60), row(60, 15), row(60, 7)};
    CHECK(abc_pick(odd, idx, 3, abc) == 0);
    csv_row low[] = {row(64, 16), row(64, 8)};
    CHECK(abc_pick(low, idx, 2, abc) == 0);
    csv_row dp[] = {row(64, 64), row(64, 16), row(64, 8)};
    dp[0].devices = 2;
    CHECK(abc_pick(dp, idx, 3, abc) == 0);
    CHECK(abc_pick(rows, idx, 0, abc) == 0);
}

static void test_differ(void)
{
    csv_row a = row(64, 64), b = row(64, 16);
    a.step_ms_median = 10;
    a.step_ms_ci_lo = 9;
    a.step_ms_ci_hi = 11;
    b.step_ms_median = 12;
    b.step_ms_ci_lo = 10.5;
    b.step_ms_ci_hi = 13;
    CHECK(row_verdict(&a, &b) == PAIRED_UNDECIDED); /* apart, overlapping: not separated */
    b.step_ms_ci_lo = 11.5;
    CHECK(row_verdict(&a, &b) == PAIRED_SLOWER && row_verdict(&b, &a) == PAIRED_FASTER);
    /* no interval: the p10..p90 band; neither: unknown */
    csv_row c = row(64, 8), e = row(64, 8);
    c.step_ms_median = 11;
    c.step_ms_ci_lo = c.step_ms_ci_hi = NAN;
    c.step_ms_p10 = 10;
    c.step_ms_p90 = 12;
    CHECK(row_verdict(&a, &c) == PAIRED_UNDECIDED);
    e.step_ms_median = 11;
    e.step_ms_ci_lo = e.step_ms_ci_hi = e.step_ms_p10 = e.step_ms_p90 = e.step_noise_pct = NAN;
    CHECK(row_verdict(&a, &e) == PAIRED_UNKNOWN);
    /* timed in the same rounds: paired per round, so a drift that moved
     * both (the overlapping intervals) does not hide a steady 1.2x */
    a.comparison = b.comparison = "run.1";
    a.rounds = b.rounds = 6;
    a.round_ms = "10 12 14 10 12 14";
    b.round_ms = "12 14.4 16.8 12 14.4 16.8";
    b.step_ms_ci_lo = 10.5;
    CHECK(row_verdict(&a, &b) == PAIRED_SLOWER);
    paired_ratio p = row_ratio(&a, &b);
    CHECK(p.rounds == 6);
    CHECK_NEAR(p.ratio, 1.2, 1e-9);
    /* another comparison: apart again */
    b.comparison = "run.2";
    CHECK(row_verdict(&a, &b) == PAIRED_UNDECIDED);
}

static void test_compare(void)
{
    /* compare judges on the medians' intervals where the files have them:
     * narrow intervals that separate differ, though the p10..p90 bands
     * (the steps' spread, not the median's uncertainty) overlap */
    csv_row b = row(64, 16), n;
    b.status = "ok";
    b.step_ms_median = 10;
    b.step_ms_p10 = 8;
    b.step_ms_p90 = 12;
    b.step_noise_pct = 10;
    b.step_ms_ci_lo = 9.9;
    b.step_ms_ci_hi = 10.1;
    n = b;
    n.step_ms_median = 10.5;
    n.step_ms_ci_lo = 10.4;
    n.step_ms_ci_hi = 10.6;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_SLOWER);
    n.step_ms_ci_lo = 10.0; /* overlapping, past the band's edge: not separated */
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED);
    n.step_ms_ci_lo = n.step_ms_ci_hi = b.step_ms_ci_lo = b.step_ms_ci_hi = NAN;
    CHECK(compare_rows(&b, &n, 0.01) == VERDICT_NOT_SEPARATED); /* the old bands overlap */

    /* A file from before the intervals, the same two rows in compare and
     * in the report (row_verdict: the A/B/C, plan --recommend): one band,
     * p10..p90 widened to the run's noise. The report read p10..p90 alone
     * and called 16x4 slower, 1.050x [1.030..1.071], where compare, from
     * the widened band, said not yet separated, 1.050x [0.990..1.116]. */
    b.step_ms_median = 10, b.step_ms_p10 = 9.9, b.step_ms_p90 = 10.1, b.step_noise_pct = 5;
    n.step_ms_median = 10.5, n.step_ms_p10 = 10.4, n.step_ms_p90 = 10.6, n.step_noise_pct = 0.5;
    b.samples = n.samples = 20;
    paired_ratio p = row_ratio(&b, &n);
    CHECK_NEAR(p.lo, 10.4 / 10.5, 1e-12);
    CHECK_NEAR(p.hi, 10.6 / 9.5, 1e-12);
    CHECK(row_verdict(&b, &n) == PAIRED_UNDECIDED);
    CHECK(compare_rows(&b, &n, 0.02) == VERDICT_NOT_SEPARATED);
}

static char dir[] = "/tmp/accubench-verdict-XXXXXX";

static const char HEAD[] =
    "# device: test cpu\n# backend_caps: dispatch-is-device-work\n"
    "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
    "devices,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,samples,step_noise_pct,"
    "flops_per_step,mfu_pct,probe_tflops_before,probe_tflops_after,dispatches_per_step,"
    "flags,note\n";

/* Writes the three rows (flags of B as given) and returns the report. */
static char *report_of(const char *name, double b_lo, const char *flags_b, const char *note_b)
{
    char csv[256], md[256];
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, name);
    FILE *f = fopen(csv, "w");
    if (!f)
        return NULL;
    fputs(HEAD, f);
    fprintf(f, "cpu,t,S,fp32,async,sum,64,64,1,1,ok,100,95,104,30,1,1e9,63,1,1,41,,\n");
    fprintf(f, "cpu,t,S,fp32,async,sum,64,16,4,1,ok,126,%g,131,30,1,1e9,42,1,1,128,%s,%s\n",
            b_lo, flags_b, note_b);
    fprintf(f, "cpu,t,S,fp32,async,sum,64,8,8,1,ok,165,160,170,30,1,1e9,29,1,1,244,,\n");
    fclose(f);
    char *argv[] = {"report", csv, "--out", dir, "--no-charts", NULL};
    if (report_main(5, argv) != 0)
        return NULL;
    snprintf(md, sizeof md, "%s/%s.md", dir, name);
    f = fopen(md, "r");
    if (!f)
        return NULL;
    static char buf[3][1 << 15];
    static int which;
    char *out = buf[which++ % 3];
    size_t n = fread(out, 1, sizeof buf[0] - 1, f);
    out[n] = '\0';
    fclose(f);
    return out;
}

static void test_report(void)
{
    if (!mkdtemp(dir))
        return;
    char *md = report_of("clean", 120, "", "");
    CHECK(md != NULL);
    if (!md)
        return;
    /* the verdict opens the report, before the findings */
    char *v = strstr(md, "## The A/B/C verdict"), *w = strstr(md, "## What the numbers show");
    CHECK(v && w && v < w);
    CHECK(strstr(md, "A = 64x1, B = 16x4, C = 8x8"));
    CHECK(strstr(md, "B (16x4) against A: 1.26x [1.15..1.38], slower (from the two medians' "
                     "intervals, timed apart; threshold 2%)"));
    CHECK(strstr(md, "C (8x8) against A: 1.65x [1.54..1.79], slower"));
    CHECK(strstr(md, "Verdict: A (64x1) is the fastest; C against B: slower."));
    CHECK(strstr(md, "63.0% for A, 42.0% for B, 29.0% for C"));
    CHECK(strstr(md, "C issues 5.95x A's operations per step (244 against 41)"));
    CHECK(strstr(md, "not launch overhead")); /* the CPU: no launch claim */
    /* no counting pass in this file: named as not measured, no cause; the
     * CPU's idle time is no cause either, and not said to be unmeasured
     * (the trace pass measures its busy share) */
    CHECK(strstr(md, "Not measured in this run, so not named as a cause: host syncs per step, "
                     "GEMM time by shape."));
    CHECK(strstr(md, "Device idle time is not named as a cause: on this backend the host "
                     "computes every operation as it issues it"));
    CHECK(!strstr(md, "no device trace"));
    CHECK(!strstr(md, "GEMMs took") && !strstr(md, "Host syncs per step ("));

    /* B's interval overlapping A's, timed apart: not separated */
    md = report_of("near", 101, "", "");
    CHECK(md && strstr(md, "B (16x4) against A: 1.26x [0.97..1.38], not yet separated"));
    CHECK(md && strstr(md, "Verdict: B is not yet separated from A and C is slower than A"));
    CHECK(md && !strstr(md, "indistinguishable"));
    /* B disturbed: the verdict stands, the flag is shown beside it, and
     * the findings still use the row */
    md = report_of("disturbed", 120, "disturbed", "disturbed: MFU 117% of the peak probed beside it");
    CHECK(md && strstr(md, "Verdict: A (64x1) is the fastest"));
    CHECK(md && strstr(md, "Flags beside the figures (they explain, they do not veto"));
    CHECK(md && strstr(md, "B disturbed: see its note"));
    CHECK(md && strstr(md, "1 of the 3 rows that ran carry flags"));
    CHECK(md && strstr(md, "fastest split is 64x1 at 100.0 ms per step and the slowest is 8x8"));
    md = report_of("noisy", 120, "noisy", "stopped when the 2s budget ran out");
    CHECK(md && strstr(md, "Verdict: A (64x1) is the fastest"));
    CHECK(md && strstr(md, "noisy: 30 samples"));
}

/* The report of a file with the counting pass's columns, C's GEMMs taking
 * c_gemm_ms of its 165 ms step; NULL where it could not be made. */
static char *counted_report(const char *name, double c_gemm_ms)
{
    char csv[256], md[256];
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, name);
    FILE *f = fopen(csv, "w");
    if (!f)
        return NULL;
    /* the run's start probe read 0.005 TFLOP/s; A's step reached 0.01 */
    fputs("# device: test cpu\n# backend_caps: dispatch-is-device-work\n"
          "# peak_gemm_tflops: 0.005\n"
          "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
          "devices,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,samples,step_noise_pct,"
          "flops_per_step,mfu_pct,probe_tflops_before,probe_tflops_after,dispatches_per_step,"
          "host_syncs_per_step,gemm_ms_per_step,gemm_shapes,flags,note,tflops\n", f);
    fputs("cpu,t,S,fp32,sync,sum,64,64,1,1,ok,100,95,104,30,1,1e9,63,1,1,41,1,90,"
          "1024x64x1024 NN: 5/step 30 ms 61%; 1024x1024x64 NT: 5/step 28 ms 60%,,,0.01\n", f);
    fputs("cpu,t,S,fp32,sync,sum,64,16,4,1,ok,126,120,131,30,1,1e9,42,1,1,128,4,110,"
          "1024x16x1024 NN: 20/step 40 ms 42%,,,0.0079\n", f);
    fprintf(f, "cpu,t,S,fp32,sync,sum,64,8,8,1,ok,165,160,170,30,1,1e9,29,1,1,244,8,%g,"
               "1024x8x1024 NN: 40/step 55 ms 29%%; 1024x1024x8 NT: 40/step 50 ms 30%%,,,"
               "0.0061\n",
            c_gemm_ms);
    fclose(f);
    char *argv[] = {"report", csv, "--out", dir, "--no-charts", NULL};
    CHECK(report_main(5, argv) == 0);
    snprintf(md, sizeof md, "%s/%s.md", dir, name);
    static char out[1 << 15];
    f = fopen(md, "r");
    CHECK(f != NULL);
    if (!f)
        return NULL;
    out[fread(out, 1, sizeof out - 1, f)] = '\0';
    fclose(f);
    return out;
}

/* A file with the counting pass's columns: the GEMMs' time and shapes
 * and the host syncs are named, and no longer listed as not measured; a
 * GEMM share over 100% (the counting pass ran slower) is called what it
 * is. */
static void test_counted(void)
{
    char *out = counted_report("counted", 150);
    if (!out)
        return;
    CHECK(strstr(out, "GEMMs took 90.0 ms of A's step, 110 ms of B's and 150 ms of C's"));
    CHECK(strstr(out, "90.0%, 87.3% and 90.9% of the step times above."));
    CHECK(!strstr(out, "over 100%"));
    CHECK(strstr(out, "A's 1024x64x1024 NN: 5/step 30 ms 61%; C's 1024x8x1024 NN: 40/step 55 ms "
                      "29%."));
    CHECK(strstr(out, "Host syncs per step (waits for the device: syncs, downloads, timer reads; "
                      "counting pass): 1.00 for A, 4.00 for B, 8.00 for C"));
    CHECK(strstr(out, "Device idle time is not named as a cause"));
    CHECK(!strstr(out, "no device trace"));

    /* a config faster than the run's start probe: the Environment says the
     * probe read low, not that 0.005 is the peak */
    CHECK(strstr(out, "0.005 TFLOP/s measured at the run's start (shape unknown); a config's "
                      "step reached 0.01000 TFLOP/s, above it: this probe read low"));

    out = counted_report("counted_slow", 175);
    CHECK(out && strstr(out, "90.0%, 87.3% and 106% of the step times above; a share over "
                             "100% cannot be part of a step: the counting pass"));
}

/* Timed in the same rounds, B 1.5x A in every round while the pooled
 * medians give 1.1x: the bullet gives both and says which the verdict
 * follows; C, whose medians agree with its rounds, gets no such remark. */
static void test_rounds_disagree(void)
{
    char csv[256], md[256];
    snprintf(csv, sizeof csv, "%s/rounds.csv", dir);
    FILE *f = fopen(csv, "w");
    if (!f)
        return;
    fputs("# device: test cpu\n# backend_caps: dispatch-is-device-work\n"
          "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"
          "devices,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,samples,comparison,rounds,"
          "round_ms,flags,note\n", f);
    fputs("cpu,t,S,fp32,async,sum,64,64,1,1,ok,100,95,104,30,x1,5,100 90 110 100 95,,\n", f);
    fputs("cpu,t,S,fp32,async,sum,64,16,4,1,ok,110,105,115,30,x1,5,150 135 165 150 142.5,,\n",
          f);
    fputs("cpu,t,S,fp32,async,sum,64,8,8,1,ok,200,190,210,30,x1,5,200 180 220 200 190,,\n", f);
    fclose(f);
    char *argv[] = {"report", csv, "--out", dir, "--no-charts", NULL};
    CHECK(report_main(5, argv) == 0);
    snprintf(md, sizeof md, "%s/rounds.md", dir);
    static char out[1 << 15];
    f = fopen(md, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    out[fread(out, 1, sizeof out - 1, f)] = '\0';
    fclose(f);
    char *b = strstr(out, "B (16x4) against A: 1.50x");
    CHECK(b && strstr(b, "the medians' own ratio, 1.10x, lies outside it: the rounds "
                         "disagreed, and the verdict follows the rounds' ratios."));
    char *c = strstr(out, "C (8x8) against A: 2.00x");
    CHECK(c && !strstr(c, "lies outside it"));
}

/* E against the noise scale: a side only where its 95% interval leaves E
 * there, Student's t for the windows less one (2 errors where the count
 * is unknown) */
static void test_noise_verdict(void)
{
    CHECK(!strncmp(noise_scale_verdict(64, 20, 5, 8), "past it", 7));
    CHECK(!strncmp(noise_scale_verdict(8, 68.3, 10, 8), "below it", 8));
    CHECK(!strncmp(noise_scale_verdict(64, 50, 10, 0), "within its 95% interval", 23));
    CHECK(!strncmp(noise_scale_verdict(8, 68.3, 73, 0), "undetermined", 12)); /* 68.3 +- 73 */
    CHECK(!strncmp(noise_scale_verdict(64, 20, 0, 4), "past it", 7));
    /* 64 against 40 +- 10: past two errors, inside 3.18 (4 windows) */
    CHECK(!strncmp(noise_scale_verdict(64, 40, 10, 0), "past it", 7));
    CHECK(!strncmp(noise_scale_verdict(64, 40, 10, 4), "within its 95% interval", 23));
    CHECK(!strncmp(noise_scale_verdict(64, 40, 10, 32), "past it", 7));
    CHECK_NEAR(noise_interval_errors(2), 12.706, 1e-9);
    CHECK_NEAR(noise_interval_errors(4), 3.182, 1e-9);
    CHECK(noise_interval_errors(0) == 2 && noise_interval_errors(1) == 2);
}

/* The report of three rows (A, B, C: median, interval), timed apart. */
static const char *mfu_report(const char *name, const char *a, const char *b, const char *c)
{
    char csv[256], md[256];
    snprintf(csv, sizeof csv, "%s/%s.csv", dir, name);
    FILE *f = fopen(csv, "w");
    if (!f)
        return "";
    fputs(HEAD, f);
    fprintf(f, "cpu,t,S,fp32,async,sum,64,64,1,1,ok,%s,30,1,1e9,63,1,1,41,,\n", a);
    fprintf(f, "cpu,t,S,fp32,async,sum,64,16,4,1,ok,%s,30,1,1e9,62,1,1,128,,\n", b);
    fprintf(f, "cpu,t,S,fp32,async,sum,64,8,8,1,ok,%s,30,1,1e9,61,1,1,244,,\n", c);
    fclose(f);
    char *argv[] = {"report", csv, "--out", dir, "--no-charts", NULL};
    CHECK(report_main(5, argv) == 0);
    snprintf(md, sizeof md, "%s/%s.md", dir, name);
    f = fopen(md, "r");
    if (!f)
        return "";
    static char out[1 << 15];
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    return out;
}

/* C's median is over A's and its MFU under, but their intervals overlap:
 * the rule does not separate C from A, so the MFU line says less of the
 * peak no more than the step times say slower, and the verdict reads as a
 * sentence ("not yet separated from A", never "... than A"). Where the
 * intervals lie inside the 2% band, the same verdict is a finding: "the
 * same as A within 2%", never the words of the undecided. */
static void test_mfu_follows_the_rule(void)
{
    const char *out = mfu_report("mfu", "100,95,104", "101,96,106", "103,96,110");
    CHECK(strstr(out, "63.0% for A, 62.0% for B, 61.0% for C"));
    CHECK(!strstr(out, "reach less of the peak"));
    CHECK(strstr(out, "by the rule C's step time is not yet separated from A's, and its MFU "
                      "tells no more than its step time does"));
    CHECK(strstr(out, "and C is not yet separated from A;"));
    CHECK(!strstr(out, "than A; C against B"));
    CHECK(!strstr(out, "the same as A"));
    /* the findings' fastest and slowest, by their medians: not separated */
    CHECK(strstr(out, "the slowest is 8x8 at 103.0 ms, 1.030x [0.923..1.158] as long for the same "
                      "arithmetic; by the paired rule the two are not yet separated."));

    out = mfu_report("mfu_same", "100,99.8,100.2", "100.2,100,100.4", "100.5,100.3,100.7");
    CHECK(strstr(out, "C (8x8) against A: 1.005x [1.001..1.009], the same within 2% (from the "
                      "two medians' intervals, timed apart)"));
    CHECK(strstr(out, "Verdict: B is the same as A within 2% and C is the same as A within 2%; "
                      "C against B: the same within 2%."));
    CHECK(strstr(out, "by the rule C's step time is the same as A's within 2%"));
    CHECK(strstr(out, "as long for the same arithmetic; by the paired rule the two are the same "
                      "within 2%."));
    CHECK(!strstr(out, "separated") && !strstr(out, "indistinguishable"));
}

/* Rows that differ in their sync mode alone measured one noise scale
 * from the very same windows: plan --noise and the report say it once,
 * not once a row, and take the split once (another split pools beside it;
 * copies of one estimate keep its error). */
static void test_noise_once_a_series(void)
{
    char csv[256], md[256];
    snprintf(csv, sizeof csv, "%s/noise.csv", dir);
    FILE *f = fopen(csv, "w");
    if (!f)
        return;
    fputs("# device: test cpu\nbackend,device,model,dtype,mode,reduction,effective_batch,"
          "micro_batch,accum_steps,devices,sync,status,step_ms_median,grad_noise_scale,"
          "grad_noise_scale_err\n", f);
    fputs("cpu,t,tiny,fp32,async,sum,16,4,2,2,micro,ok,0.16,73.8,29\n", f);
    fputs("cpu,t,tiny,fp32,async,sum,16,4,2,2,window,ok,0.07,73.8,29\n", f);
    fputs("cpu,t,tiny,fp32,async,sum,16,4,2,2,overlap,ok,0.08,73.8,29\n", f);
    fputs("cpu,t,tiny,fp32,async,sum,16,8,1,2,micro,ok,0.06,73.8,29\n", f);
    fclose(f);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    CHECK(out && noise_plan_main(out, csv) == 0);
    if (out)
        fclose(out);
    int lines = 0;
    for (const char *p = text; p && (p = strstr(p, "E=16: ")); p++)
        lines++;
    CHECK(lines == 1);
    CHECK(text && strstr(text, "(B_simple 73.8 +- 29 examples, pooled from 2 rows)"));
    free(text);
    char *argv[] = {"report", csv, "--out", dir, "--no-charts", NULL};
    CHECK(report_main(5, argv) == 0);
    snprintf(md, sizeof md, "%s/noise.md", dir);
    f = fopen(md, "r");
    if (!f)
        return;
    static char buf[1 << 15];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    int bullets = 0;
    for (const char *p = buf; (p = strstr(p, "- tiny, E = 16 (pooled from 2 rows): E is 0.22 "
                                             "times the measured noise scale B_simple = 73.8 "
                                             "+- 29 examples;")); p++)
        bullets++;
    CHECK(bullets == 1);
}

int main(void)
{
    test_noise_verdict();
    test_pick();
    test_differ();
    test_compare();
    test_report();
    test_counted();
    test_rounds_disagree();
    test_mfu_follows_the_rule();
    test_noise_once_a_series();
    CHECK(check_remove_tree(dir) == 0);
    return check_finish("test_verdict");
}
