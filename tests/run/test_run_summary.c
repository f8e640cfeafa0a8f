/* The lines a run ends on: one series gives its fastest, slowest and their
 * ratio as before; several (two models) give each series its own, and no
 * line sets one model's step against another's; a known-wrong reduction
 * is never the fastest or slowest. */
#include <string.h>

#include "check.h"
#include "run_summary.h"
#include "row_label.h"

static char *summary_of(const result_row *rows, size_t n)
{
    static char text[4096];
    FILE *f = tmpfile();
    if (!f)
        return strcpy(text, "");
    run_summary(f, rows, n, "results/x.csv");
    rewind(f);
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    return text;
}

static result_row row(const char *model, int micro, double ms)
{
    result_row r;
    memset(&r, 0, sizeof r);
    strcpy(r.backend, "cpu");
    strcpy(r.model, model);
    strcpy(r.dtype, "fp32");
    strcpy(r.mode, "async");
    strcpy(r.reduction, "sum");
    strcpy(r.status, STATUS_OK);
    r.effective_batch = 64;
    r.devices = 1;
    r.micro_batch = micro;
    r.accum_steps = 64 / micro;
    r.step_ms_median = ms;
    r.step_ms_ci_lo = ms * 0.99;
    r.step_ms_ci_hi = ms * 1.01;
    return r;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

int main(void)
{
    result_row one[] = {row("S", 64, 30.0), row("S", 8, 90.0), row("S", 16, 60.0)};
    char *out = summary_of(one, 3);
    CHECK(strstr(out, "summary: 3 of 3 configs ran\n") == out);
    CHECK(strstr(out, "\n  fastest  S fp32 64x1 async sum: 30.00 ms (95%: 29.70..30.30)\n") != NULL);
    CHECK(strstr(out, "\n  slowest  S fp32 8x8 async sum: 90.00 ms") != NULL);
    /* timed in 5 rounds: [min, max] of their medians, a 93.75% interval, said so */
    for (int i = 0; i < 3; i++)
        one[i].rounds = 5, one[i].samples = 40;
    out = summary_of(one, 3);
    CHECK(strstr(out, "\n  fastest  S fp32 64x1 async sum: 30.00 ms (93.8%: 29.70..30.30)\n") != NULL);
    for (int i = 0; i < 3; i++)
        one[i].rounds = 0, one[i].samples = 0;
    CHECK(strstr(out, "\n  ratio    3.00x [") != NULL);
    CHECK(strstr(out, "E 64:") == NULL); /* one series: no heading */
    CHECK(strstr(out, "\n  csv      results/x.csv\n") != NULL);

    /* flagged rows: how many, and how many of each flag (a row may carry
     * both); a second arm's flags are its config's first arm's business */
    result_row flagged[] = {row("S", 64, 30.0), row("S", 8, 90.0), row("S", 16, 60.0),
                            row("S", 16, 61.0)};
    strcpy(flagged[0].flags, "noisy");
    strcpy(flagged[1].flags, "noisy disturbed");
    strcpy(flagged[3].flags, "disturbed");
    flagged[3].arm = 2;
    out = summary_of(flagged, 4);
    CHECK(strstr(out, "summary: 3 of 3 configs ran (1 timed twice: the A/A check); 2 flagged "
                      "(2 noisy, 1 disturbed)\n  (their notes say why;") == out);
    strcpy(flagged[1].flags, "noisy");
    out = summary_of(flagged, 4);
    CHECK(strstr(out, "; 2 flagged (2 noisy)\n") != NULL);

    /* tiny is far faster than M: the summary says so of neither pair */
    result_row two[] = {row("tiny", 64, 0.1), row("tiny", 1, 0.5), row("M", 64, 800.0),
                        row("M", 8, 2400.0), row("M", 1, 0)};
    strcpy(two[4].status, "skipped");
    out = summary_of(two, 5);
    CHECK(strstr(out, "summary: 4 of 5 configs ran\n") == out);
    char *tiny = strstr(out, "\n  tiny fp32, E 64:\n    fastest  tiny fp32 64x1 async sum: 0.1000 ms");
    char *m = strstr(out, "\n  M fp32, E 64:\n    fastest  M fp32 64x1 async sum: 800.0 ms");
    CHECK(tiny != NULL && m != NULL && tiny < m);
    CHECK(strstr(out, "    slowest  tiny fp32 1x64 async sum: 0.5000 ms") != NULL);
    CHECK(strstr(out, "    slowest  M fp32 8x8 async sum: 2400 ms") != NULL);
    CHECK(count(out, "    ratio    ") == 2);
    CHECK(strstr(out, "    ratio    5.00x [") != NULL && strstr(out, "    ratio    3.00x [") != NULL);
    CHECK(strstr(out, "8000x") == NULL && strstr(out, "2.4e+04x") == NULL);

    /* a series with one row that ran: its fastest alone, no ratio */
    result_row lone[] = {row("S", 64, 30.0), row("M", 64, 800.0)};
    lone[0].devices = 2;
    out = summary_of(lone, 2);
    CHECK(strstr(out, "\n  S fp32, E 64, 2 devices:\n    fastest  S") != NULL);
    CHECK(count(out, "ratio") == 0 && count(out, "slowest") == 0);
    /* an A/A check: one config, timed twice; its second arm is no config
     * of its own, to count or to call the slowest: the A/A line sets the
     * two side by side */
    result_row aa[] = {row("S", 16, 53.0), row("S", 16, 55.8)};
    aa[1].arm = 2;
    aa[0].arm = 1;
    out = summary_of(aa, 2);
    CHECK(strstr(out, "summary: 1 of 1 config") == out &&
          strstr(out, " ran (1 timed twice: the A/A check)\n"));
    CHECK(strstr(out, "  fastest  S fp32 16x4 async sum: 53.00 ms") != NULL);
    CHECK(count(out, "slowest") == 0 && count(out, "  ratio  ") == 0);
    /* in the report's own sentence (aa_check.h), word for word */
    CHECK(count(out, "  A/A      S, E = 64, 16x4 (async, sum reduction, fp32, cpu): arm 2 / "
                     "arm 1 = ") == 1);
    /* beside other configs, a second arm faster than all is still not the
     * fastest: the config is, from its first arm */
    result_row mix[] = {row("S", 64, 30.0), row("S", 64, 29.0), row("S", 8, 90.0)};
    for (int i = 0; i < 3; i++)
        mix[i].arm = 1 + (i == 1);
    out = summary_of(mix, 3);
    CHECK(strstr(out, "summary: 2 of 2 configs ran (1 timed twice: the A/A check)\n") == out);
    CHECK(strstr(out, "\n  fastest  S fp32 64x1 async sum: 30.00 ms") != NULL);
    CHECK(count(out, "(arm 2)") == 0);
    CHECK(strstr(out, "\n  ratio    3.00x [") != NULL);
    /* the A/A check passes whether the rule finds the arms the same within
     * 2% or cannot separate them yet, and its line says which (the second
     * is no claim that they are the same) and whether the rule held: arms
     * called apart fail it. */
    static const struct {
        const char *arm1, *arm2, *words, *outcome;
    } aa_rounds[] = {
        {"10 10.1 9.9 10 10.05", "10.02 10.08 9.93 10.01 10.04", "the same within 2% (paired",
         "; the rule held ("},
        {"10 10.1 9.9 10 10.05", "10.6 9.7 10.4 9.6 10.5", "not yet separated (paired",
         "; the rule held ("},
        {"10 10.1 9.9 10 10.05", "11 11.1 10.9 11 11.05", "slower (paired",
         "; the rule FAILED: it called a config apart from itself, so this run's verdicts "
         "may carry a bias."},
        /* a ratio outside the band, not separated: no count of rounds that
         * "would likely separate" a config from itself */
        {"10 10.1 9.9 10 10.05", "10.9 9.6 10.8 10.3 10.4", "not yet separated (paired",
         "threshold 2%); the rule held ("},
    };
    for (size_t k = 0; k < sizeof aa_rounds / sizeof aa_rounds[0]; k++) {
        result_row pair[] = {row("S", 16, 10.0), row("S", 16, 10.02)};
        for (int i = 0; i < 2; i++) {
            pair[i].arm = i + 1;
            strcpy(pair[i].comparison, "c1");
            pair[i].rounds = 5;
            strcpy(pair[i].round_ms, i ? aa_rounds[k].arm2 : aa_rounds[k].arm1);
        }
        out = summary_of(pair, 2);
        char line[600] = "";
        const char *aa_line = strstr(out, "  A/A      S, E = 64, 16x4 (async, sum reduction, "
                                          "fp32, cpu): arm 2 / arm 1 = ");
        if (aa_line)
            sscanf(aa_line, "%599[^\n]", line);
        CHECK(strstr(line, aa_rounds[k].words) && strstr(line, aa_rounds[k].outcome));
        CHECK(!strstr(line, "would likely separate"));
        /* a pair called apart: one line, the summary's last, saying what
         * it means for the verdicts and the command that checks again */
        const char *failed = strstr(out, "\nA/A check FAILED for model S at effective batch 64 "
                                         "(16x4; async, sum reduction, fp32, cpu): arm 2 / arm 1 "
                                         "= 1.");
        int apart = strstr(aa_rounds[k].words, "slower") != NULL;
        CHECK(apart ? failed != NULL : count(out, "FAILED") == 0);
        if (apart && failed) {
            CHECK(strstr(failed, ". This model's verdicts at this effective batch may carry a "
                                 "bias of that size; re-check: accubench run --backend cpu "
                                 "--model S --effective 64 --micro 16,16 --mode async --dtype "
                                 "fp32\n") != NULL);
            CHECK(strchr(failed + 1, '\n')[1] == '\0'); /* the last line */
            CHECK(count(out, "A/A check FAILED") == 1);
        }
    }
    /* a fastest the rule does not separate from another config of its
     * series is said to be fastest by its median alone, with the nearest;
     * one the rule separates from every other gets no such line */
    result_row tie[] = {row("tiny", 64, 10.0), row("tiny", 64, 10.01), row("tiny", 8, 15.0)};
    strcpy(tie[1].mode, "sync");
    static const char *const tie_rounds[] = {"10 10.1 9.9 10 10.05", "10.01 10.1 9.92 10.01 10.04",
                                             "15 15.1 14.9 15 15.05"};
    for (int i = 0; i < 3; i++) {
        tie[i].arm = 1, tie[i].rounds = 5;
        strcpy(tie[i].comparison, "c1");
        strcpy(tie[i].round_ms, tie_rounds[i]);
    }
    out = summary_of(tie, 3);
    CHECK(strstr(out, "\n  fastest  tiny fp32 64x1 async sum: 10.00 ms") != NULL);
    CHECK(strstr(out, "\n           fastest by its median alone: the rule does not separate it "
                      "from 1 other config; the nearest, tiny fp32 64x1 sync sum, over it: 1.00") !=
          NULL);
    CHECK(strstr(out, "the same within 2% (paired over 5 interleaved rounds)\n  slowest  ") != NULL);
    strcpy(tie[1].round_ms, "11 11.1 10.9 11 11.05");
    tie[1].step_ms_median = 11;
    CHECK(count(summary_of(tie, 3), "by its median alone") == 0);

    /* no A/A line where no config was timed twice */
    CHECK(count(summary_of(two, 5), "A/A") == 0);
    /* the progress line and the trace file name a config as the summary
     * does: a ragged split as the table writes it (8+4 is 12, never 8x2),
     * the arm, the sync and the levers */
    char label[RESULT_TEXT_LEN * 4];
    result_row rag = row("gpt-tiny", 8, 11.0);
    rag.effective_batch = 12, rag.accum_steps = 2, rag.last_micro_batch = 4, rag.arm = 1;
    strcpy(rag.recompute, "block");
    strcpy(rag.grad_dtype, "bf16");
    row_label_of(&rag, label, sizeof label);
    CHECK(!strcmp(label, "gpt-tiny fp32 K=2: 8+4 async sum recompute block grad bf16"));
    out = summary_of(&rag, 1);
    CHECK(strstr(out, label) != NULL);
    result_row dp = row("S", 16, 55.8);
    dp.arm = 2;
    strcpy(dp.sync, "window");
    row_label_of(&dp, label, sizeof label);
    CHECK(!strcmp(label, "S fp32 16x4 (arm 2) async sum sync window"));

    /* a known-wrong reduction is no way to the batch: the fastest and the
     * slowest are of the exact one, as the report's fastest split and
     * plan --recommend name them (64x1 mean-of-means was crowned here) */
    result_row red[] = {row("tiny", 64, 30.0), row("tiny", 64, 29.5), row("tiny", 8, 90.0),
                        row("tiny", 8, 95.0)};
    strcpy(red[1].reduction, "mean-of-means");
    strcpy(red[3].reduction, "mean-of-means");
    out = summary_of(red, 4);
    CHECK(strstr(out, "\n  fastest  tiny fp32 64x1 async sum: 30.00 ms") != NULL);
    CHECK(strstr(out, "\n  slowest  tiny fp32 8x8 async sum: 90.00 ms") != NULL);
    CHECK(strstr(out, "mean-of-means") == NULL);
    CHECK(strstr(out, "summary: 4 of 4 configs ran\n") == out); /* each still counted */
    return check_finish("test_run_summary");
}
