#include "run_summary.h"

#include <stdlib.h>
#include <string.h>

#include "aa_check.h"
#include "ci_level.h"
#include "console_table.h"
#include "csv_rows.h"
#include "paired.h"
#include "reduction.h"
#include "split_text.h"
#include "table.h"
#include "row_flags.h"
#include "row_label.h"

static int ran(const result_row *r)
{
    return !strcmp(r->status, STATUS_OK) && r->step_ms_median > 0;
}

size_t run_summary_ran(const result_row *rows, size_t n)
{
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += ran(&rows[i]) != 0;
    return ok;
}

void run_summary_none(const result_row *rows, size_t n, const char *csv_path, char *out,
                      size_t len)
{
    /* the statuses in the order a reader acts on them: what failed first */
    static const char *const statuses[] = {STATUS_ERROR, STATUS_OOM, STATUS_SKIPPED,
                                           STATUS_OK};
    int used = snprintf(out, len, "no config ran");
    if (!n) {
        snprintf(out + used, len - (size_t)used, ": no row was measured");
        return;
    }
    const char *sep = ": ";
    for (size_t k = 0; k < sizeof statuses / sizeof *statuses && used < (int)len; k++) {
        size_t count = 0;
        for (size_t i = 0; i < n; i++)
            count += !strcmp(rows[i].status, statuses[k]);
        if (!count)
            continue;
        /* an ok row without a step time has nothing to compare either */
        used += snprintf(out + used, len - (size_t)used, "%s%zu %s", sep, count,
                         k == 3 ? "ok without a step time" : statuses[k]);
        sep = ", ";
    }
    if (used < (int)len)
        snprintf(out + used, len - (size_t)used, " (each row's note in %s says why)", csv_path);
}

/* A row the fastest and slowest are picked from: it ran, as its config's
 * first arm (its second has a line of its own), in a reduction that
 * reaches the batch. A known-wrong one (a curves sweep's demonstration) is
 * no way to it: crowned here "fastest" at 64x1 mean-of-means, while the
 * report's fastest split and plan --recommend, which leave such rows out,
 * named 64x1 sum. */
static int ranked(const result_row *r)
{
    return ran(r) && !RESULT_SECOND_ARM(r) && reduction_exact_named(r->reduction);
}

static timed_figures result_row_figures(const result_row *r)
{
    return (timed_figures){.comparison = r->comparison, .rounds = r->rounds,
                           .samples = r->samples, .round_ms = r->round_ms, .median = r->step_ms_median,
                           .ci_lo = r->step_ms_ci_lo, .ci_hi = r->step_ms_ci_hi,
                           .p10 = r->step_ms_p10, .p90 = r->step_ms_p90,
                           .noise_pct = r->step_noise_pct};
}

/* "S fp32 16x4 async sum": the table's spelling of the model and split,
 * so the line fits it, and what sets the row apart beyond the columns. */
static void config_name(const result_row *r, char *out, size_t len)
{
    char model[RESULT_TEXT_LEN];
    console_model_name(r, model, sizeof model);
    row_label_named(r, model, out, len);
}

static void config_line(FILE *f, const char *what, const result_row *r)
{
    char name[RESULT_TEXT_LEN * 4];
    config_name(r, name, sizeof name);
    /* four significant digits, trailing zeros kept: "0.1708..0.1960",
     * as the report prints them, not "0.1708..0.196" */
    char ms[3][32];
    fprintf(f, "  %-8s %s: %s ms", what, name,
            fmt_sig(ms[0], sizeof ms[0], r->step_ms_median, 4));
    char level[16]; /* 95%, or less for [min, max] of 5 draws or fewer */
    if (r->step_ms_ci_hi > 0)
        fprintf(f, " (%s: %s..%s)",
                row_ci_level_text((long long)r->rounds, (long long)r->samples, level,
                                  sizeof level),
                fmt_sig(ms[1], sizeof ms[1], r->step_ms_ci_lo, 4),
                fmt_sig(ms[2], sizeof ms[2], r->step_ms_ci_hi, 4));
    if (r->flags[0])
        fprintf(f, " [%s]", r->flags);
}

/* Rows that are compared with each other: one model at one effective batch,
 * dtype and device count (what differs within is what the sweep compares:
 * the split, the mode, the levers). */
static int same_series(const result_row *a, const result_row *b)
{
    return !strcmp(a->model, b->model) && a->effective_batch == b->effective_batch &&
           !strcmp(a->dtype, b->dtype) && a->devices == b->devices;
}

/* Where the rule does not separate the fastest by its median from another
 * config of its series, a line that says so, with the nearest: the
 * report's fastest and plan --recommend's pick name such a tie, and
 * "fastest" alone read as a verdict the interval did not give (64x1 sync
 * "fastest" at 0.05304 ms beside 64x1 async at 0.05306 ms). */
static void tie_line(FILE *f, const result_row *rows, size_t n, size_t first,
                     const result_row *fast, const char *indent)
{
    const result_row *near = NULL;
    size_t ties = 0;
    timed_figures a = result_row_figures(fast);
    for (size_t i = first; i < n; i++) {
        const result_row *r = &rows[i];
        if (r == fast || !ranked(r) || !same_series(r, &rows[first]))
            continue;
        timed_figures b = result_row_figures(r);
        paired_ratio p = figures_ratio(&a, &b);
        if (paired_judge(&p, PAIRED_THRESHOLD) == PAIRED_SLOWER)
            continue;
        ties++;
        if (!near || r->step_ms_median < near->step_ms_median)
            near = r;
    }
    if (!near)
        return;
    timed_figures b = result_row_figures(near);
    paired_ratio p = figures_ratio(&a, &b);
    char name[RESULT_TEXT_LEN * 4], ratio[300];
    config_name(near, name, sizeof name);
    paired_ratio_text(&p, ratio, sizeof ratio);
    fprintf(f, "%s  %-8s fastest by its median alone: the rule does not separate it from %zu "
            "other config%s; the nearest, %s, over it: %s\n", indent, "", ties,
            ties == 1 ? "" : "s", name, ratio);
}

/* The fastest and slowest of the series of rows[first] that ran, with their
 * (paired, where they were timed together) ratio; `indent` before each line.
 * Each config from its first arm: its second (an A/A check) has a line of
 * its own. */
static void series_lines(FILE *f, const result_row *rows, size_t n, size_t first,
                         const char *indent)
{
    const result_row *fast = NULL, *slow = NULL;
    for (size_t i = first; i < n; i++) {
        const result_row *r = &rows[i];
        if (!ranked(r) || !same_series(r, &rows[first]))
            continue;
        if (!fast || r->step_ms_median < fast->step_ms_median)
            fast = r;
        if (!slow || r->step_ms_median > slow->step_ms_median)
            slow = r;
    }
    fputs(indent, f);
    config_line(f, "fastest", fast);
    fputc('\n', f);
    tie_line(f, rows, n, first, fast, indent);
    if (slow == fast)
        return;
    fputs(indent, f);
    config_line(f, "slowest", slow);
    fputc('\n', f);
    timed_figures a = result_row_figures(fast), b = result_row_figures(slow);
    paired_ratio p = figures_ratio(&a, &b);
    char ratio[300];
    paired_ratio_text(&p, ratio, sizeof ratio);
    char apart[200];
    paired_pooled_remark(&p, slow->step_ms_median / fast->step_ms_median, apart, sizeof apart);
    fprintf(f, "%s  %-8s %s%s\n", indent, "ratio", ratio, apart);
}

/* The arm 1 of rows[i] where rows[i] is an A/A pair's arm 2 that ran
 * beside it (the same config but its arm), else NULL. */
static const result_row *arm_one_of(const result_row *rows, size_t n, size_t i)
{
    const result_row *two = &rows[i];
    if (two->arm != 2 || !ran(two))
        return NULL;
    for (size_t j = 0; j < n; j++)
        if (rows[j].arm == 1 && ran(&rows[j]) && result_same_config_but(&rows[j], two, "arm"))
            return &rows[j];
    return NULL;
}

/* Each A/A pair of the series of rows[first] (a config timed twice, as
 * arms 1 and 2 of its comparison): arm 2 over arm 1 and whether the rule
 * held, the run's own check of its verdicts, in the sentence the report
 * gives it (aa_check.h, through view: rows as the report reads them). */
static void aa_lines(FILE *f, const result_row *rows, const csv_row *view, size_t n,
                     size_t first, const char *indent)
{
    for (size_t i = 0; i < n; i++) { /* wherever the rows list it */
        const result_row *one = arm_one_of(rows, n, i);
        if (!one || !same_series(&rows[i], &rows[first]))
            continue;
        char text[2400];
        aa_sentence(&view[one - rows], &view[i], text, sizeof text);
        fprintf(f, "%s  %-8s %s\n", indent, "A/A", text);
    }
}

/* A line for each A/A pair the rule called apart, the summary's last: a
 * bias in this run's verdicts is not to be scrolled past. */
static void aa_failed_lines(FILE *f, const result_row *rows, const csv_row *view, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const result_row *one = arm_one_of(rows, n, i);
        if (!one || !aa_failed(&view[one - rows], &view[i]))
            continue;
        char text[2400];
        aa_failed_line(view, n, &view[one - rows], &view[i], text, sizeof text);
        fprintf(f, "%s\n", text);
    }
}

/* The first ranked row of each series, in the order they ran; returns
 * how many (at most `cap` are kept). */
static size_t series_starts(const result_row *rows, size_t n, size_t *starts, size_t cap)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ranked(&rows[i]))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = ranked(&rows[j]) && same_series(&rows[j], &rows[i]);
        if (!seen && count++ < cap)
            starts[count - 1] = i;
    }
    return count;
}

void run_summary(FILE *f, const result_row *rows, size_t n, const char *csv_path)
{
    /* configs, each once: a second arm is the same config timed again */
    size_t ok = 0, flagged = 0, configs = 0, again = 0, each[ROW_FLAG_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        if (RESULT_SECOND_ARM(&rows[i])) {
            again += ran(&rows[i]) != 0;
            continue;
        }
        configs++;
        if (ran(&rows[i])) {
            ok++;
            flagged += rows[i].flags[0] != '\0';
            for (int k = 0; k < ROW_FLAG_COUNT; k++)
                each[k] += flags_have(rows[i].flags, row_flag_names[k]);
        }
    }
    fprintf(f, "summary: %zu of %zu configs ran", ok, configs);
    if (again)
        fprintf(f, " (%zu timed twice: the A/A check)", again);
    if (flagged) {
        /* each flag's count: a machine where every row is noisy (a VM's
         * jitter) reads apart from one where the probes drifted */
        fprintf(f, "; %zu flagged (", flagged);
        for (int k = 0, said = 0; k < ROW_FLAG_COUNT; k++)
            if (each[k])
                fprintf(f, "%s%zu %s", said++ ? ", " : "", each[k], row_flag_names[k]);
        fprintf(f, ")\n  (their notes say why; the flags explain a figure, the comparisons "
                   "follow the paired intervals)");
    }
    fputc('\n', f);
    /* One series: its fastest and slowest. Several (models, effective
     * batches): each its own, since a ratio across models compares
     * different arithmetic. */
    enum { SHOWN = 64 };
    size_t starts[SHOWN], series = series_starts(rows, n, starts, SHOWN);
    /* the rows as the report will read them, for its A/A sentences (none
     * where there is no memory for them: the rest of the summary stands) */
    csv_row *view = malloc((n ? n : 1) * sizeof *view);
    for (size_t i = 0; view && i < n; i++)
        csv_row_of_result(&rows[i], &view[i]);
    for (size_t k = 0; k < series && k < SHOWN; k++) {
        const result_row *r = &rows[starts[k]];
        if (series > 1) {
            char model[RESULT_TEXT_LEN];
            console_model_name(r, model, sizeof model);
            fprintf(f, "  %s %s, E %lld", model, r->dtype, (long long)r->effective_batch);
            if (r->devices > 1)
                fprintf(f, ", %lld devices", (long long)r->devices);
            fputs(":\n", f);
        }
        series_lines(f, rows, n, starts[k], series > 1 ? "  " : "");
        if (view)
            aa_lines(f, rows, view, n, starts[k], series > 1 ? "  " : "");
    }
    if (series > SHOWN)
        fprintf(f, "  (and %zu more series: the report compares every one)\n", series - SHOWN);
    fprintf(f, "  csv      %s\n", csv_path);
    /* the report lands beside the CSV, under its name */
    size_t len = strlen(csv_path);
    int dot = len > 4 && !strcmp(csv_path + len - 4, ".csv") ? (int)len - 4 : (int)len;
    fprintf(f, "  report   accubench report %s (writes %.*s.md, .html and .json)\n", csv_path, dot,
            csv_path);
    if (view)
        aa_failed_lines(f, rows, view, n);
    free(view);
}
