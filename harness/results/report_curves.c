/* "Do the correct splits train alike?": the summary lines of the loss
 * curves beside the CSV (NAME.curves.csv, curves_file.h), each series'
 * largest gap between the correct splits set beside its rounding gap (the
 * same split, its sums in another order), and each known-wrong
 * reduction's gap from the correct curve of its split. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curves_read.h"
#include "grad_dtype.h"
#include "report_parts.h"

/* The correct splits count as one curve within this many rounding gaps
 * (the margin tests/e2e/e2e_curves.sh holds them to). */
#define ROUNDING_MARGIN 4

/* The value of " key=" in line, NAN when absent (strtod reads inf, nan). */
static double value_of(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

static void wrong_part(char *out, size_t n, const char *name, double gap, double rounding)
{
    if (isnan(gap))
        snprintf(out, n, "%s not run", name);
    else if (isinf(gap))
        snprintf(out, n, "%s diverged", name);
    else if (rounding > 0)
        snprintf(out, n, "%s %s off (%s times the rounding gap)", name, rp_num(gap, 2).s,
                 rp_num(gap / rounding, 2).s);
    else
        snprintf(out, n, "%s %s off", name, rp_num(gap, 2).s);
}

/* "; NAME ... off" for each known-wrong reduction the line has a gap for
 * (every " gap_NAME=" but the two measures of the correct splits), in the
 * line's order: the reductions come from the file, not a list here. */
static void wrong_parts(char *out, size_t n, const char *gaps, double rounding)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *p = strstr(gaps, " gap_"); p && used < n; p = strstr(p + 1, " gap_")) {
        const char *name = p + strlen(" gap_"), *eq = strchr(name, '=');
        int len = eq ? (int)(eq - name) : 0;
        char key[64], part[200];
        if (len <= 0 || len >= 40 || memchr(name, ' ', (size_t)len))
            continue;
        snprintf(key, sizeof key, "%.*s", len, name);
        if (!strcmp(key, "correct_splits") || !strcmp(key, "rounding"))
            continue;
        char gap_key[80];
        snprintf(gap_key, sizeof gap_key, "gap_%s", key);
        wrong_part(part, sizeof part, key, value_of(gaps, gap_key), rounding);
        used += (size_t)snprintf(out + used, n - used, "; %s", part);
    }
}

/* "; the bf16 accumulator ... off the fp32 accumulator's curve ..." where
 * the line has an accumulator_gap (a rounding accumulator's series beside
 * the reference's, curves_file.c), nothing otherwise. */
static void accumulator_part(char *out, size_t n, const char *line, const char *gaps,
                             double rounding)
{
    double acc = value_of(gaps, "accumulator_gap");
    const char *g = strstr(line, " grad_dtype=");
    out[0] = '\0';
    if (isnan(acc) || !g)
        return;
    g += strlen(" grad_dtype=");
    int len = (int)strcspn(g, " :");
    if (isinf(acc)) { /* one of the two left the numbers (curves_file.c's gap) */
        snprintf(out, n, "; the %.*s accumulator's curve or the %s one of the same split "
                 "diverged", len, g, grad_dtype_name(GRAD_DTYPE_FP32));
        return;
    }
    char times[80] = "";
    if (rounding > 0)
        snprintf(times, sizeof times, " (%s times the rounding gap)", rp_num(acc / rounding, 2).s);
    snprintf(out, n, "; the %.*s accumulator %s off the %s accumulator's curve of the same "
             "split%s", len, g, rp_num(acc, 2).s, grad_dtype_name(GRAD_DTYPE_FP32), times);
}

/* One "# curves SERIES steps=N: gap_...=..." line as a bullet: the gaps
 * measured follow the colon (none where the series had no correct
 * reduction; a file from before wrote nan for a gap not measured). */
static void series_bullet(doc *d, const char *run, const char *line)
{
    const char *steps = strstr(line, " steps="), *colon = steps ? strchr(steps, ':') : NULL;
    if (!colon)
        return;
    int len = (int)(colon - line) - (int)strlen(CURVES_SUMMARY_PREFIX);
    double correct = value_of(colon, "gap_correct_splits"),
           rounding = value_of(colon, "gap_rounding");
    char wrong[1024], acc[300];
    /* from the colon on: " gap_" then starts each key, the first included */
    wrong_parts(wrong, sizeof wrong, colon + 1, rounding);
    accumulator_part(acc, sizeof acc, line, colon, rounding);
    if (isnan(correct) && isnan(rounding)) { /* no correct curve to measure from */
        doc_bullet(d, "%s%.*s: no correct reduction ran, so no gap was measured.", run, len,
                   line + strlen(CURVES_SUMMARY_PREFIX));
        return;
    }
    /* a correct curve that diverged (its gap inf): no gap says anything,
     * and inf <= 4 x inf would call it one curve */
    if (isinf(correct) || isinf(rounding)) {
        doc_bullet(d, "%s%.*s: the correct curves diverged (a loss not finite or over 3 "
                   "times its start), so no gap can say whether they train alike%s%s.", run, len,
                   line + strlen(CURVES_SUMMARY_PREFIX), wrong, acc);
        return;
    }
    /* one correct split (a sweep over E or rates, one split each): no
     * second curve to set beside it, and no gap to call "not measured" */
    if (isnan(correct) && rounding >= 0) {
        doc_bullet(d, "%s%.*s: one correct split, no other to compare it with; the rounding "
                   "gap %s%s%s.", run, len, line + strlen(CURVES_SUMMARY_PREFIX),
                   rp_num(rounding, 2).s, wrong, acc);
        return;
    }
    const char *verdict = !(correct >= 0) || !(rounding >= 0) ? "not measured"
                          : correct <= ROUNDING_MARGIN * rounding ? "one curve up to rounding"
                                                                  : "apart beyond rounding";
    doc_bullet(d, "%s%.*s: the correct splits within %s of each other, the rounding gap %s: "
               "%s%s%s.", run, len, line + strlen(CURVES_SUMMARY_PREFIX), rp_num(correct, 2).s,
               rp_num(rounding, 2).s, verdict, wrong, acc);
}

void report_curves(const report_input *in, doc *d)
{
    char path[4200], line[2048];
    curves_path_beside(in->csv_path, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return; /* no --train-steps: the charts say there are no curves */
    int heading = 0, runs = 0, in_summary = 0;
    /* a file a later run appended to: each bullet says whose run it is */
    int several = in->curves && in->curves->rewritten;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, CURVES_SUMMARY_PREFIX, strlen(CURVES_SUMMARY_PREFIX))) {
            in_summary = 0; /* a run's rows: its summary lines follow them */
            continue;
        }
        runs += !in_summary;
        in_summary = 1;
        char run[32] = "";
        if (several)
            snprintf(run, sizeof run, "run %d: ", runs);
        if (!heading++) {
            const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            doc_heading(d, 2, "Do the correct splits train alike?");
            doc_para(d, "The loss curves of --train-steps (%s; their chart is among the "
                        "charts): per series, the largest gap between the correct splits' "
                        "curves beside the rounding gap, the same split run again with its "
                        "sums taken in another order; within %d rounding gaps they are one "
                        "curve. Each known-wrong reduction's gap is from the correct curve "
                        "of its own split (splits with K > 1), and a rounding accumulator's "
                        "from the same split's curve with the gradient held in %s.",
                     name, ROUNDING_MARGIN, grad_dtype_name(GRAD_DTYPE_FP32));
            /* a config appended again: its series has a line per run */
            char again[4400] = "";
            if (in->curves)
                curves_rewritten_text(in->curves, name, again, sizeof again);
            if (*again)
                doc_para(d, "%s, by the charts and the time to target too; each run's summary "
                            "lines are below, by run.", again);
        }
        series_bullet(d, run, line);
    }
    fclose(f);
}
