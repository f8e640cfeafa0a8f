/* A results CSV's rows as csv_row (see csv_rows.h). */
#include "csv_rows.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_values.h"
#include "levers.h"

/* The bands a median lies in by construction (stats.c, the peer's
 * peer_timing.py): order statistics of the same samples. */
static const struct {
    const char *lo, *hi, *band;
    size_t lo_at, hi_at;
} median_bands[] = {
    {"step_ms_ci_lo", "step_ms_ci_hi", "its 95% interval", offsetof(csv_row, step_ms_ci_lo),
     offsetof(csv_row, step_ms_ci_hi)},
    {"step_ms_p10", "step_ms_p90", "its p10..p90", offsetof(csv_row, step_ms_p10),
     offsetof(csv_row, step_ms_p90)},
};

/* Figures of one row that bound one another: a median lies inside its own
 * 95% interval (step_ms_ci_lo..hi) and inside its p10..p90, as every
 * writer computes them from one set of samples. Each pair is checked where
 * both ends are measured, against the median where it is. NULL, or the
 * one-line refusal in why: "FILE:LINE: step_ms_median 5 lies outside its
 * 95% interval, step_ms_ci_lo..step_ms_ci_hi 6..7 (...)", the cells as the
 * file writes them. */
static const char *median_bands_check(const csv_table *t, size_t row, const csv_row *r,
                                      char *why, size_t why_len)
{
    double m = r->step_ms_median;
    for (size_t i = 0; i < sizeof median_bands / sizeof median_bands[0]; i++) {
        const char *lo_name = median_bands[i].lo, *hi_name = median_bands[i].hi;
        double lo = *(const double *)((const char *)r + median_bands[i].lo_at);
        double hi = *(const double *)((const char *)r + median_bands[i].hi_at);
        if (isnan(lo) || isnan(hi))
            continue;
        const char *lo_text = csv_cell(t, row, csv_column(t, lo_name));
        const char *hi_text = csv_cell(t, row, csv_column(t, hi_name));
        if (!isnan(m) && (m < lo || m > hi))
            snprintf(why, why_len, "%s:%d: step_ms_median %s lies outside %s, %s..%s %s..%s "
                     "(a median is inside its own band: the row was edited or damaged)",
                     t->path, t->line[row], csv_cell(t, row, csv_column(t, "step_ms_median")),
                     median_bands[i].band, lo_name, hi_name, lo_text, hi_text);
        else if (lo > hi)
            snprintf(why, why_len, "%s:%d: %s %s is above %s %s (a band's low end is below "
                     "its high end: the row was edited or damaged)", t->path, t->line[row],
                     lo_name, lo_text, hi_name, hi_text);
        else
            continue;
        return why;
    }
    return NULL;
}

/* The statuses a run writes (result_row.h): another word in the column is
 * an edit, and a reader would take the row for a config that did not run
 * ("No verdict: C did not run (weird)"), or compare for a regression. */
static const char *status_check(const csv_table *t, size_t row, const csv_row *r, char *why,
                                size_t why_len)
{
    static const char *const known[] = {STATUS_OK, STATUS_OOM, STATUS_SKIPPED, STATUS_ERROR};
    if (!r->status || !*r->status)
        return NULL;
    for (size_t k = 0; k < sizeof known / sizeof *known; k++)
        if (!strcmp(r->status, known[k]))
            return NULL;
    snprintf(why, why_len, "%s:%d: status '%s' is none of %s, %s, %s, %s (the row was edited "
             "or damaged)", t->path, t->line[row], r->status, known[0], known[1], known[2],
             known[3]);
    return why;
}

/* The split's own arithmetic: K micro-batches of the micro-batch size on
 * each of the devices reach the effective batch, the last one smaller
 * where it does not divide (K = ceil(E / (micro x devices)), as
 * harness/run/step/split.h splits it); a step time stands on at least one
 * timed step. */
static const char *split_check(const csv_table *t, size_t row, const csv_row *r, char *why,
                               size_t why_len)
{
    long long e = (long long)r->effective_batch, m = (long long)r->micro_batch,
              k = (long long)r->accum_steps, d = r->devices > 0 ? (long long)r->devices : 1;
    /* in doubles: a hostile row's sizes would overflow m x d in integers */
    double want = m > 0 ? ceil((double)e / ((double)m * (double)d)) : 0;
    if (e > 0 && m > 0 && k > 0 && (double)k != want) {
        snprintf(why, why_len, "%s:%d: accum_steps %lld does not make effective batch %lld of "
                 "micro-batch %lld on %lld %s (that takes %.0f: the row was edited or damaged)",
                 t->path, t->line[row], k, e, m, d, d == 1 ? "device" : "devices", want);
        return why;
    }
    if (r->samples == 0 && r->step_ms_median > 0) {
        snprintf(why, why_len, "%s:%d: a step time of %s ms over 0 samples (no step was timed: "
                 "the row was edited or damaged)", t->path, t->line[row],
                 csv_cell(t, row, csv_column(t, "step_ms_median")));
        return why;
    }
    return NULL;
}

/* The split's own sizes: every writer gives each row its effective batch,
 * micro-batch and K, whatever its status, so an empty cell is an edit; read
 * as the unmeasured -1 it would print a "4x-1" split and a naive time of
 * -K x pass_ms. Checked where the file has the column. */
static const char *split_sizes_check(const csv_table *t, size_t row, const csv_row *r,
                                     char *why, size_t why_len)
{
    static const struct {
        const char *name;
        size_t at;
    } sizes[] = {{"effective_batch", offsetof(csv_row, effective_batch)},
                 {"micro_batch", offsetof(csv_row, micro_batch)},
                 {"accum_steps", offsetof(csv_row, accum_steps)}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int col = csv_column(t, sizes[i].name);
        if (col < 0 || *(const int64_t *)((const char *)r + sizes[i].at) >= 0)
            continue;
        snprintf(why, why_len, "%s:%d: column %s is empty (every row names its split: the row "
                 "was edited or damaged) (field %d of the row)", t->path, t->line[row],
                 sizes[i].name, col + 1);
        return why;
    }
    return NULL;
}

/* The figures of one row that bound one another, each where the file
 * measures it: the split's sizes given; a median inside its own 95%
 * interval and its p10..p90; a status a run writes (ok, oom, skipped,
 * error); accum_steps the split's own (ceil(E / (micro x devices))); a step
 * time over at least one sample. NULL, or the one-line refusal in why
 * ("FILE:LINE: ... (the row was edited or damaged)"), the cells as the file
 * writes them. */
static const char *row_check(const csv_table *t, size_t row, const csv_row *r, char *why,
                             size_t why_len)
{
    const char *bad = split_sizes_check(t, row, r, why, why_len);
    if (!bad)
        bad = median_bands_check(t, row, r, why, why_len);
    if (!bad)
        bad = status_check(t, row, r, why, why_len);
    if (!bad)
        bad = split_check(t, row, r, why, why_len);
    return bad;
}

static void row_clear(csv_row *r)
{
    for (int i = 0; i < result_column_count; i++) {
        char *field = (char *)r + csv_row_offset[i];
        switch (result_columns[i].type) {
        case RESULT_IS_TEXT: *(const char **)field = ""; break;
        case RESULT_IS_INT: *(int64_t *)field = -1; break;
        case RESULT_IS_REAL: *(double *)field = NAN; break;
        }
    }
}

/* Parses one cell into its field. Returns 0, or -1 with the reason (what
 * the text is not, or why the number cannot be) in *what. */
static int parse_cell(const result_column *c, const char *s, char *field, const char **what)
{
    if (c->type == RESULT_IS_TEXT) {
        *(const char **)field = s;
        return 0;
    }
    if (!*s)
        return 0; /* not measured */
    double v;
    int64_t x;
    if ((*what = csv_value_parse(c, s, &v, &x)))
        return -1;
    if (c->type == RESULT_IS_INT)
        *(int64_t *)field = x;
    else
        *(double *)field = v;
    return 0;
}

int csv_result_rows(const csv_table *t, const char *const *required,
                    csv_row **out, char *why, size_t why_len)
{
    *out = NULL;
    for (const char *const *r = required; r && *r; r++)
        if (csv_column(t, *r) < 0) {
            snprintf(why, why_len, "%s: missing column %s", t->path, *r);
            return -1;
        }
    /* the file's columns in RESULT_COLUMNS, found once by name */
    const result_column **known = calloc(t->cols ? t->cols : 1, sizeof *known);
    csv_row *rows = calloc(t->rows ? t->rows : 1, sizeof *rows);
    if (!rows || !known) {
        free(known);
        free(rows);
        snprintf(why, why_len, "%s: out of memory", t->path);
        return -1;
    }
    for (size_t c = 0; c < t->cols; c++)
        known[c] = result_column_find(t->header[c]);
    for (size_t i = 0; i < t->rows; i++) {
        csv_row *r = &rows[i];
        row_clear(r);
        const char *cell = t->text + t->row_at[i];
        for (size_t c = 0; c < t->cols; cell += strlen(cell) + 1, c++) {
            const result_column *col = known[c];
            const char *what = NULL;
            if (col && parse_cell(col, cell, (char *)r + csv_row_offset[col - result_columns],
                                  &what)) {
                csv_value_say(why, why_len, t->path, t->line[i], col->name, cell, what, c + 1);
                free(known);
                free(rows);
                return -1;
            }
        }
        if (row_check(t, i, r, why, why_len)) {
            free(known);
            free(rows);
            return -1;
        }
        if (r->arm < 1) /* a file from before the column: one arm */
            r->arm = 1;
    }
    free(known);
    *out = rows;
    return 0;
}

void csv_row_of_result(const result_row *r, csv_row *out)
{
#define OF_TEXT(name) out->name = r->name;
#define OF_INT(name) out->name = r->name;
#define OF_REAL(name) out->name = r->name;
#define OF_FIELD(name, type, pass, role) OF_##type(name)
    RESULT_COLUMNS(OF_FIELD)
#undef OF_FIELD
#undef OF_TEXT
#undef OF_INT
#undef OF_REAL
    out->repeat = 0;
}

int csv_key_defaults(const csv_table *t, csv_row *rows, const csv_table *against, char *said,
                     size_t said_len)
{
    int filled = 0;
    said[0] = '\0';
    /* each lever, then devices */
    for (int d = 0; d <= LEVER_COUNT; d++) {
        const lever *l = d < LEVER_COUNT ? &levers[d] : NULL;
        if (l && l->ranks_only) /* its empty cell is a one-process row already */
            continue;
        const result_column *c = result_column_find(l ? l->column : "devices");
        if (!c || csv_column(t, c->name) >= 0)
            continue;
        const char *text = l ? lever_off_name(l) : "1"; /* as the CSV writes it */
        for (size_t i = 0; i < t->rows; i++) {
            char *field = (char *)&rows[i] + csv_row_offset[c - result_columns];
            if (c->type == RESULT_IS_TEXT)
                *(const char **)field = text;
            else if (c->type == RESULT_IS_INT)
                *(int64_t *)field = 1; /* devices */
        }
        if (against && csv_column(against, c->name) < 0)
            continue;
        size_t used = strlen(said);
        snprintf(said + used, said_len - used, "%s%s=%s", filled ? ", " : "", c->name, text);
        filled++;
    }
    return filled;
}
