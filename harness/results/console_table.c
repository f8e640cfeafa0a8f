/* The table `accubench run` prints as configs finish (see console_table.h). */
#include "console_table.h"

#include <stdio.h>
#include <string.h>

/* "16x4", or "24x3+16" when the last micro-batch is smaller. */
static void split_cell(const result_row *r, char *out, size_t len)
{
    char last[24] = "";
    if (r->last_micro_batch != r->micro_batch)
        snprintf(last, sizeof last, "+%lld", (long long)r->last_micro_batch);
    snprintf(out, len, "%lldx%lld%s", (long long)r->micro_batch, (long long)r->accum_steps,
             last);
}

static void band_cell(const result_row *r, char *out, size_t len)
{
    snprintf(out, len, "%.3f..%.3f", r->step_ms_p10, r->step_ms_p90);
}

/* The columns shown, in order, each a column of RESULT_COLUMNS by name: its
 * header, its width (negative: left-aligned) and a printf format for its
 * value, or a function for a cell made of several columns. A row that did
 * not run shows its config columns (pass "config") and, for every measured
 * one, `not_run` ("" when NULL). The status and note close every line. */
typedef struct console_column {
    const char *column;
    const char *header;
    int width;
    const char *format; /* for a TEXT "%s", an INT "%lld", a REAL "%.3f" etc. */
    void (*cell)(const result_row *r, char *out, size_t len);
    const char *not_run;
} console_column;

static const console_column SHOWN[] = {
    {"model", "model", -5, "%s", NULL, NULL},
    {"dtype", "dtype", -5, "%s", NULL, NULL},
    {"mode", "mode", -11, "%s", NULL, NULL},
    {"reduction", "reduction", -13, "%s", NULL, NULL},
    {"effective_batch", "E", 5, "%lld", NULL, NULL},
    {"devices", "dev", 3, "%lld", NULL, NULL},
    {"sync", "sync", -7, "%s", NULL, NULL},
    {"micro_batch", "micro x K", 11, NULL, split_cell, NULL},
    {"step_ms_median", "step ms", 10, "%.3f", NULL, "-"},
    {"step_ms_p10", "p10..p90", 16, NULL, band_cell, NULL},
    {"step_noise_pct", "noise", 6, "%.1f%%", NULL, NULL},
    {"samples_per_s", "samples/s", 11, "%.1f", NULL, NULL},
    {"mfu_pct", "mfu%", 6, "%.1f", NULL, NULL},
    {"grad_rel_err", "grad err", 9, "%.2e", NULL, NULL},
};
#define N_SHOWN (sizeof SHOWN / sizeof SHOWN[0])

static void cell_text(const console_column *s, const result_row *r, int ran, char *out,
                      size_t len)
{
    const result_column *c = result_column_find(s->column);
    if (!c) { /* a name not in RESULT_COLUMNS: the test of this file catches it */
        snprintf(out, len, "?");
    } else if (!ran && strcmp(c->pass, "config") != 0) {
        snprintf(out, len, "%s", s->not_run ? s->not_run : "");
    } else if (s->cell) {
        s->cell(r, out, len);
    } else if (c->type == RESULT_IS_TEXT) {
        snprintf(out, len, s->format, result_text(r, c));
    } else if (c->type == RESULT_IS_INT) {
        snprintf(out, len, s->format, (long long)result_number(r, c));
    } else {
        snprintf(out, len, s->format, result_number(r, c));
    }
}

void console_table_header(FILE *f)
{
    for (size_t i = 0; i < N_SHOWN; i++)
        fprintf(f, "%*s ", SHOWN[i].width, SHOWN[i].header);
    fprintf(f, " %s\n", "status");
}

void console_table_row(FILE *f, const result_row *r)
{
    int ran = strcmp(r->status, STATUS_OK) == 0;
    char text[RESULT_TEXT_LEN];
    for (size_t i = 0; i < N_SHOWN; i++) {
        cell_text(&SHOWN[i], r, ran, text, sizeof text);
        fprintf(f, "%*s ", SHOWN[i].width, text);
    }
    /* A row that did not run always says why, even with no reason given. */
    fprintf(f, " %s%s%s\n", r->status, !ran || r->note[0] ? ": " : "", r->note);
    fflush(f);
}
