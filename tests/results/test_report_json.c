/* RUN.json, the record beside the report: every column typed (numbers as
 * numbers, text as strings, null where the CSV left a field empty), the
 * metadata as an object, the rule's verdict of each row's paired ratio,
 * text that is not valid JSON as it stands (quotes, backslashes, control
 * characters, bytes that are not UTF-8) written so that it is, and each
 * row's comparison with its twin in the reference dtype, the figures the
 * Markdown's "One dtype against another" prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ratio_text.h"
#include "test_report_rows.h"

static char tmpdir[] = "/tmp/accubench-report-json-XXXXXX";

#define HEADER                                                                            \
    "# device: a \"quoted\" back\\slash\tand tab \xff byte\n"                              \
    "backend,device,model,dtype,mode,reduction,effective_batch,micro_batch,accum_steps,"  \
    "arm,status,step_ms_median,pass_ms,samples,mfu_pct,vs_ref,vs_ref_lo,vs_ref_hi,sync\n"

static void test_columns(void)
{
    const char *md = test_report_rows(
        tmpdir, "run", HEADER,
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,40,50,,1,1,1,\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50.5,12,50,61.25,1.25,1.2,1.3,\n"
        "cpu,x,S,fp32,async,sum,64,8,8,1,ok,52,6.5,50,60,1.3,0.99,1.7,\n");
    CHECK(md != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/run.json", tmpdir);
    const char *json = test_slurp(path);
    CHECK(json != NULL);
    if (json) {
        CHECK(strstr(json, "\"device\": \"a \\\"quoted\\\" back\\\\slash\\u0009and tab "
                           "\\ufffd byte\""));
        CHECK(strstr(json, "\"micro_batch\": 16, \"arm\": 1, \"accum_steps\": 4, "));
        CHECK(strstr(json, "\"step_ms_median\": 50.5, "));
        CHECK(strstr(json, "\"mfu_pct\": 61.25, "));
        CHECK(strstr(json, "\"mfu_pct\": null, ")); /* the first row left it empty */
        CHECK(strstr(json, "\"sync\": null, "));
        CHECK(strstr(json, "\"vs_ref_verdict\": \"slower\", "));
        CHECK(strstr(json, "\"vs_ref_verdict\": \"not yet separated\", "));
        CHECK(strstr(json, "\"vs_ref_verdict\": null, ")); /* the reference */
        CHECK(strstr(json, "\"grad_rel_err\": null, ")); /* a column the file lacks */
        CHECK(!strstr(json, "nan") && !strstr(json, "inf"));
        /* one dtype: no row has a twin in another */
        CHECK(strstr(json, "\"vs_dtype\": null, \"vs_dtype_ratio\": null, "));
        CHECK(!strstr(json, "\"vs_dtype\": \""));
    }
}

#define DTYPE_HEADER                                                                        \
    "# device: x\nbackend,device,model,dtype,mode,reduction,effective_batch,micro_batch,"   \
    "accum_steps,arm,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,pass_ms,samples,"    \
    "comparison,rounds,round_ms\n"

/* The text of the line of `text` that holds every one of a, b and c (a
 * copy in line[len]), or NULL. */
static const char *line_with(const char *text, const char *a, const char *b, const char *c,
                             char *line, size_t len)
{
    for (const char *at = text; at && *at;) {
        const char *end = strchr(at, '\n');
        size_t n = end ? (size_t)(end - at) : strlen(at);
        snprintf(line, len, "%.*s", (int)n, at);
        if (strstr(line, a) && strstr(line, b) && strstr(line, c))
            return line;
        at = end ? end + 1 : NULL;
    }
    return NULL;
}

/* A JSON number after `"field": ` in the row's line; NAN where null. */
static double json_number_of(const char *row, const char *field)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\": ", field);
    const char *at = strstr(row, key);
    CHECK(at != NULL);
    if (!at || !strncmp(at + strlen(key), "null", 4))
        return NAN;
    return strtod(at + strlen(key), NULL);
}

/* The bf16 row of split `micro` in RUN.json against the Markdown's line of
 * it: the same ratio and interval, rounds and verdict. */
static void check_twin(const char *json, const char *md, const char *micro, const char *split,
                       const char *timed, int rounds, const char *verdict)
{
    char row[16000], md_line[1000], key[64], text[128], want[160];
    snprintf(key, sizeof key, "\"micro_batch\": %s, ", micro);
    CHECK(line_with(json, "\"dtype\": \"bf16\"", key, "{", row, sizeof row) != NULL);
    CHECK(strstr(row, "\"vs_dtype\": \"fp32\", "));
    snprintf(want, sizeof want, "\"vs_dtype_paired_rounds\": %d, \"vs_dtype_verdict\": \"%s\", "
             "\"repeat\": false}",
             rounds, verdict);
    CHECK(strstr(row, want));
    ratio_text(text, sizeof text, json_number_of(row, "vs_dtype_ratio"),
               json_number_of(row, "vs_dtype_lo"), json_number_of(row, "vs_dtype_hi"));
    const char *section = strstr(md, "## One dtype against another");
    CHECK(section != NULL);
    CHECK(section && line_with(section, split, "| bf16 ", timed, md_line, sizeof md_line));
    CHECK(strstr(md_line, text) && strstr(md_line, verdict));
    if (!strstr(md_line, text))
        fprintf(stderr, "  JSON's %s not in the Markdown's %s\n", text, md_line);
}

/* Two dtypes: each bf16 config against its fp32 twin, paired where the two
 * were timed in one comparison, from intervals where apart; the reference's
 * own rows and a config without a twin null. */
static void test_dtype_twins(void)
{
    /* a copy: test_slurp reads RUN.json into the same buffer */
    const char *text = test_report_rows(
        tmpdir, "dtypes", DTYPE_HEADER,
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39,41,40,50,c1,5,40 41 40.5 39.8 40.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,49,51,12,50,c1,5,50 51 50.5 49.8 50.2\n"
        "cpu,x,S,bf16,async,sum,64,64,1,1,ok,30,29,31,30,50,c1,5,30 31 30.5 29.8 30.2\n"
        "cpu,x,S,bf16,async,sum,64,16,4,1,ok,50.1,49,51,12,50,c1,5,50.1 51.1 50.4 49.9 50.2\n"
        "cpu,x,S,bf16,async,sum,64,8,8,1,ok,52,51,53,6.5,50,c1,5,52 53 52.5 51.8 52.2\n"
        "cpu,x,S,fp32,async,sum,64,32,2,1,ok,45,44,46,22,50,,,\n"
        "cpu,x,S,bf16,async,sum,64,32,2,1,ok,60,59,61,30,50,,,\n");
    char *md = text ? strdup(text) : NULL;
    CHECK(md != NULL);
    char path[300];
    snprintf(path, sizeof path, "%s/dtypes.json", tmpdir);
    const char *json = test_slurp(path);
    CHECK(json != NULL);
    if (!md || !json) {
        free(md);
        return;
    }
    check_twin(json, md, "64", " 64x1 ", "| paired ", 5, "faster");
    check_twin(json, md, "16", " 16x4 ", "| paired ", 5, "the same within 2%");
    check_twin(json, md, "32", " 32x2 ", "| apart ", 0, "slower");
    char row[16000];
    static const char *const nulls =
        "\"vs_dtype\": null, \"vs_dtype_ratio\": null, \"vs_dtype_lo\": null, "
        "\"vs_dtype_hi\": null, \"vs_dtype_paired_rounds\": null, \"vs_dtype_verdict\": null, "
        "\"repeat\": false}";
    /* 8x8 ran in bf16 alone: no twin */
    CHECK(line_with(json, "\"dtype\": \"bf16\"", "\"micro_batch\": 8, ", "{", row, sizeof row));
    CHECK(strstr(row, nulls));
    /* the reference dtype's rows are the twins, not compared */
    CHECK(line_with(json, "\"dtype\": \"fp32\"", "\"micro_batch\": 64, ", "{", row, sizeof row));
    CHECK(strstr(row, nulls));
    free(md);
}

/* The report of DTYPE_HEADER and rows as NAME: RUN.json's text (NULL
 * where it was not written). */
static const char *json_of(const char *name, const char *rows)
{
    char path[300];
    if (!test_report_rows(tmpdir, name, DTYPE_HEADER, rows))
        return NULL;
    snprintf(path, sizeof path, "%s/%s.json", tmpdir, name);
    return test_slurp(path);
}

/* The verdicts the report opens with, and its A/A checks, as records: the
 * rows each names (by their place in "rows"), every comparison with its
 * interval and the rule's words, the split the rule crowns (none where it
 * crowns none), and a config run again marked as the repeat it is. */
static void test_verdicts(void)
{
    const char *text = test_report_rows(
        tmpdir, "abc", DTYPE_HEADER,
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39,41,40,50,c1,5,40 41 40.5 39.8 40.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,49,51,12,50,c1,5,50 51 50.5 49.8 50.2\n"
        "cpu,x,S,fp32,async,sum,64,8,8,1,ok,60,59,61,7,50,c1,5,60 61 60.5 59.8 60.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,2,ok,50,49,51,12,50,c1,5,50.1 50.9 50.4 49.9 50.3\n"
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,10,9,11,10,50,c2,5,10 10.1 9.9 10 10\n");
    char *md = text ? strdup(text) : NULL;
    char path[300];
    snprintf(path, sizeof path, "%s/abc.json", tmpdir);
    const char *json = test_slurp(path);
    CHECK(md && json);
    if (!md || !json) {
        free(md);
        return;
    }
    CHECK(strstr(md, "Verdict: A (64x1) is the fastest; C against B: slower."));
    CHECK(strstr(json, "\"verdicts\": [\n    {\"model\": \"S\", \"effective_batch\": 64, "
                       "\"mode\": \"async\", \"dtype\": \"fp32\", \"backend\": \"cpu\", "
                       "\"reduction\": \"sum\", \"recompute\": \"none\", \"grad_dtype\": \"fp32\", "
                       "\"rows\": [0, 1, 2], \"splits\": [\"64x1\", \"16x4\", \"8x8\"], "
                       "\"ran\": true, \"b_vs_a\": {\"ratio\": "));
    CHECK(strstr(json, "\"paired_rounds\": 5, \"verdict\": \"slower\"}, \"c_vs_a\": "));
    CHECK(strstr(json, "\"c_vs_b\": {\"ratio\": 1.19"));
    /* its series' A/A pair held: the verdict says so beside it */
    CHECK(strstr(json, "\"verdict\": \"slower\"}, \"fastest\": \"A\", \"aa_rule_held\": true}\n  ]"));
    CHECK(strstr(json, "\"aa_checks\": [\n    {\"rows\": [1, 3], \"model\": \"S\", "
                       "\"effective_batch\": 64, \"split\": \"16x4\", \"arm2_vs_arm1\": "
                       "{\"ratio\": 1."));
    CHECK(strstr(json, "\"verdict\": \"the same within 2%\"}, \"rule_held\": true, "
                       "\"recheck\": null}"));
    /* the last row is 64x1 run again: marked, and the verdict read the first */
    CHECK(strstr(json, "\"step_ms_median\": 10, ") && strstr(json, "\"repeat\": true}\n  ]"));
    CHECK(strstr(json, "\"repeat\": false}"));
    free(md);

    /* B fastest: faster than A, and C slower than it */
    const char *j = json_of("b",
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,50,49,51,50,50,c1,5,50 51 50.5 49.8 50.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,40,39,41,10,50,c1,5,40 41 40.5 39.8 40.2\n"
        "cpu,x,S,fp32,async,sum,64,8,8,1,ok,45,44,46,6,50,c1,5,45 46 45.5 44.8 45.2\n");
    CHECK(j && strstr(j, "\"fastest\": \"B\", \"aa_rule_held\": null}") &&
          strstr(j, "\"aa_checks\": []"));
    snprintf(path, sizeof path, "%s/b.md", tmpdir);
    text = test_slurp(path);
    CHECK(text && strstr(text, "Verdict: B (16x4) is the fastest; B is faster than A and C is "
                               "faster than A; C against B: slower. The arithmetic per step is "
                               "the same.\n"));
    /* the file has no flags column: no row is called clean */
    CHECK(text && !strstr(text, "| clean"));

    /* C did not run: no comparisons, no verdict */
    j = json_of("oom",
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,50,49,51,50,50,c1,5,50 51 50.5 49.8 50.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,40,39,41,10,50,c1,5,40 41 40.5 39.8 40.2\n"
        "cpu,x,S,fp32,async,sum,64,8,8,1,oom,,,,,,,,\n");
    CHECK(j && strstr(j, "\"ran\": false, \"fastest\": null, \"aa_rule_held\": null}") &&
          !strstr(j, "b_vs_a"));

    /* the A/A pair called apart (arm 2 about 6% slower every round): the
     * verdict beside it says its series may carry a bias, as the A/A
     * section does, in one line with the command that checks again, and
     * the record says both with that command */
    j = json_of("aa",
        "cpu,x,S,fp32,async,sum,64,64,1,1,ok,40,39,41,40,50,c1,5,40 41 40.5 39.8 40.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,1,ok,50,49,51,12,50,c1,5,50 51 50.5 49.8 50.2\n"
        "cpu,x,S,fp32,async,sum,64,16,4,2,ok,53,52,54,12,50,c1,5,53 54.1 53.5 52.8 53.2\n"
        "cpu,x,S,fp32,async,sum,64,8,8,1,ok,60,59,61,7,50,c1,5,60 61 60.5 59.8 60.2\n");
    static const char recheck[] = "accubench run --backend cpu --model S --effective 64 "
                                  "--micro 64,16,16,8 --mode async --dtype fp32";
    char want[400];
    snprintf(want, sizeof want, "\"rule_held\": false, \"recheck\": \"%s\"}", recheck);
    CHECK(j && strstr(j, "\"fastest\": \"A\", \"aa_rule_held\": false}") && strstr(j, want));
    snprintf(path, sizeof path, "%s/aa.md", tmpdir);
    text = test_slurp(path);
    snprintf(want, sizeof want, "may carry a bias of that size; re-check: %s\n", recheck);
    const char *verdict = text ? strstr(text, "\n- Verdict: A (64x1) is the fastest;") : NULL;
    const char *failed = verdict ? strstr(verdict, "\n- A/A check FAILED for model S at "
                                                  "effective batch 64 (16x4; async, sum "
                                                  "reduction, fp32, cpu): arm 2 / arm 1 = 1.06")
                                 : NULL;
    const char *section = text ? strstr(text, "## The A/A check") : NULL;
    CHECK(failed && section && failed < section && strstr(failed, want));
    CHECK(section && strstr(section, "; the rule FAILED: it called a config apart from itself, "
                                     "so this run's verdicts may carry a bias.\n- A/A check "
                                     "FAILED for model S"));

    /* no three splits the rule picks: an empty list */
    j = json_of("none", "cpu,x,S,fp32,async,sum,64,64,1,1,ok,50,49,51,50,50,,,\n");
    CHECK(j && strstr(j, "\"verdicts\": [],\n  \"aa_checks\": []\n}\n"));
}

/* Two A/B/C series apart only in what the backward recomputes: each
 * verdict says which it is, in the Markdown's heading (the splits tables'
 * words) and in its JSON record; both read as one series twice. */
static void test_verdicts_told_apart(void)
{
#define LEVER_HEADER                                                                       \
    "# device: x\nbackend,device,model,dtype,recompute,mode,reduction,effective_batch,"     \
    "micro_batch,accum_steps,arm,status,step_ms_median,step_ms_ci_lo,step_ms_ci_hi,"        \
    "samples,comparison,rounds,round_ms\n"
    const char *text = test_report_rows(
        tmpdir, "levers", LEVER_HEADER,
        "cpu,x,S,fp32,none,async,sum,64,64,1,1,ok,40,39,41,50,c1,5,40 41 40.5 39.8 40.2\n"
        "cpu,x,S,fp32,none,async,sum,64,16,4,1,ok,50,49,51,50,c1,5,50 51 50.5 49.8 50.2\n"
        "cpu,x,S,fp32,none,async,sum,64,8,8,1,ok,60,59,61,50,c1,5,60 61 60.5 59.8 60.2\n"
        "cpu,x,S,fp32,gelu,async,sum,64,64,1,1,ok,44,43,45,50,c1,5,44 45 44.5 43.8 44.2\n"
        "cpu,x,S,fp32,gelu,async,sum,64,16,4,1,ok,45,44,46,50,c1,5,45 46 45.5 44.8 45.2\n"
        "cpu,x,S,fp32,gelu,async,sum,64,8,8,1,ok,46,45,47,50,c1,5,46 47 46.5 45.8 46.2\n");
#undef LEVER_HEADER
    CHECK(text && strstr(text, "### Model S at effective batch 64: A = 64x1, B = 16x4, C = 8x8 "
                               "(async, sum reduction, fp32, cpu)\n"));
    CHECK(text && strstr(text, "### Model S at effective batch 64: A = 64x1, B = 16x4, C = 8x8 "
                               "(async, sum reduction, fp32, cpu, recompute gelu)\n"));
    char path[300];
    snprintf(path, sizeof path, "%s/levers.json", tmpdir);
    const char *json = test_slurp(path);
    /* grad_dtype "fp32", as in the rows and as the CSV writes it today:
     * the file predates the column, and every row then held fp32 (null
     * would read "not measured" of a setting that had one value) */
    CHECK(json && strstr(json, "\"recompute\": \"none\", \"grad_dtype\": \"fp32\", "
                               "\"rows\": [0, 1, 2]"));
    CHECK(json && strstr(json, "\"recompute\": \"gelu\", \"grad_dtype\": \"fp32\", "
                               "\"rows\": [3, 4, 5]"));
    CHECK(json && !strstr(json, "\"grad_dtype\": null") && !strstr(json, "\"devices\": null"));
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_columns();
    test_dtype_twins();
    test_verdicts();
    test_verdicts_told_apart();
    CHECK(check_remove_tree(tmpdir) == 0);
    return check_finish("test_report_json");
}
