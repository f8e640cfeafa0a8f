/* The table `accubench run` prints as configs finish (see console_table.h). */
#include "console_table.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "split_text.h"
#include "table.h"

/* Custom model names too long for the model column, in the order they were
 * first shown: the column says "gpt#1" and a legend line above that row
 * says what it stands for. Reset by console_table_header (one run). */
#define LEGEND_MAX 32
static char legend[LEGEND_MAX][RESULT_TEXT_LEN];
static int legend_count;
/* The model column's width, set by console_table_header (one run): a
 * preset longer than 10 (llama3.2-1b) was shown "llama3#1" with a legend
 * line, as a custom shape is. */
static int model_column = CONSOLE_MODEL_WIDTH;

static int model_width(void) { return model_column; }

void console_model_width(const char *name, int *width)
{
    int n = (int)strlen(name);
    if (!strchr(name, ':') && n > *width)
        *width = n;
}

static size_t kind_length(const char *name)
{
    return strcspn(name, ":");
}

/* The number of legend entry i among the names of its kind: gpt#1, gpt#2,
 * mlp#1. */
static int number_in_kind(int i)
{
    size_t k = kind_length(legend[i]);
    int n = 1;
    for (int j = 0; j < i; j++)
        n += kind_length(legend[j]) == k && !strncmp(legend[j], legend[i], k);
    return n;
}

/* The legend number of a long name, or 0 when the legend is full; *is_new
 * when this call entered it. */
static int legend_number(const char *name, int *is_new)
{
    *is_new = 0;
    for (int i = 0; i < legend_count; i++)
        if (!strcmp(legend[i], name))
            return number_in_kind(i);
    if (legend_count == LEGEND_MAX)
        return 0;
    snprintf(legend[legend_count], sizeof legend[0], "%s", name);
    *is_new = 1;
    return number_in_kind(legend_count++);
}

/* The kind before the shape ("gpt" of "gpt:d=128,..."), then "#n". A name
 * past a full legend is cut, its end marked "~". */
static void short_model(const char *name, int number, char *out, size_t len)
{
    int w = model_width();
    if (number) {
        size_t kind = kind_length(name);
        snprintf(out, len, "%.*s#%d", (int)(kind < 6 ? kind : 6), name, number);
    } else {
        snprintf(out, len, "%.*s~", w - 1, name);
    }
}

void console_model_name(const result_row *r, char *out, size_t len)
{
    if ((int)strlen(r->model) <= model_width()) {
        snprintf(out, len, "%s", r->model);
        return;
    }
    int fresh;
    short_model(r->model, legend_number(r->model, &fresh), out, len);
}

static void split_cell(const result_row *r, char *out, size_t len)
{
    split_arm_text(out, len, (long long)r->micro_batch, (long long)r->accum_steps,
                   (long long)r->last_micro_batch, (long long)r->arm);
}

/* Four significant digits, trailing zeros kept ("0.1839", "62.24",
 * "0.08200"): as the run's summary and the report print the same step
 * time, so that one figure never reads two ways on one screen; seven
 * characters up to 10^7 ms. */
static void step_cell(const result_row *r, char *out, size_t len)
{
    fmt_sig(out, len, r->step_ms_median, 4);
}

/* "0.7%", and whole from 100% ("250%"): five characters. */
static void noise_cell(const result_row *r, char *out, size_t len)
{
    char pct[32];
    if (isnan(r->step_noise_pct))
        snprintf(out, len, "%s", "");
    else
        snprintf(out, len, "%s%%", fmt_pct(pct, sizeof pct, r->step_noise_pct));
}

/* Tokens per second where the model reads tokens (the GPT), samples per
 * second otherwise: "241.5k samp/s", "82.9k tok/s". */
static void throughput_cell(const result_row *r, char *out, size_t len)
{
    int tokens = !isnan(r->tokens_per_s);
    double v = tokens ? r->tokens_per_s : r->samples_per_s;
    const char *unit = tokens ? "tok/s" : "samp/s";
    static const char *const prefix[] = {"", "k", "M", "G", "T"};
    int p = 0;
    while (fabs(v) >= 999.95 && p < 4) {
        v /= 1000;
        p++;
    }
    if (isnan(v))
        snprintf(out, len, "%s", "");
    else
        snprintf(out, len, "%.1f%s %s", v, prefix[p], unit);
}

/* The columns shown, in order, each a column of RESULT_COLUMNS by name: its
 * header, its width (negative: left-aligned) and a printf format for its
 * value, or a function for a cell made of several columns. A row that did
 * not run shows its config columns (pass "config") and "-" for the step,
 * then its status. One dtype is said above the table (several: each row's
 * note names its own, sweep_row.c), and the p10..p90 band is in the CSV: the line stays within
 * CONSOLE_WIDTH with the longest rows (a custom GPT on several devices at a
 * ragged split). */
typedef struct console_column {
    const char *column;
    const char *header;
    int width;
    const char *format; /* for a TEXT "%s", an INT "%lld", a REAL "%.3f" etc. */
    void (*cell)(const result_row *r, char *out, size_t len);
} console_column;

static const console_column SHOWN[] = {
    {"model", "model", 0, NULL, console_model_name}, /* model_width() */
    {"mode", "mode", -11, "%s", NULL},
    {"reduction", "reduction", -13, "%s", NULL},
    {"effective_batch", "E", 5, "%lld", NULL},
    {"devices", "dev", 3, "%lld", NULL},
    {"sync", "sync", -7, "%s", NULL},
    {"micro_batch", "split", 15, NULL, split_cell},
    {"step_ms_median", "step ms", 7, NULL, step_cell},
    {"step_noise_pct", "noise", 5, NULL, noise_cell},
    {"samples_per_s", "throughput", 13, NULL, throughput_cell},
    {"mfu_pct", "mfu%", 5, "%.1f", NULL},
    {"grad_rel_err", "grad err", 8, "%.1e", NULL},
};
#define N_SHOWN (sizeof SHOWN / sizeof SHOWN[0])

/* Column i's printf width: negative left-aligned. */
static int column_width(size_t i)
{
    return i == 0 ? -model_width() : SHOWN[i].width;
}

static void cell_text(const console_column *s, const result_row *r, char *out, size_t len)
{
    const result_column *c = result_column_find(s->column);
    if (!c) /* a name not in RESULT_COLUMNS: the test of this file catches it */
        snprintf(out, len, "?");
    else if (s->cell)
        s->cell(r, out, len);
    else if (c->type == RESULT_IS_TEXT)
        snprintf(out, len, s->format, result_text(r, c));
    else if (c->type == RESULT_IS_INT)
        snprintf(out, len, s->format, (long long)result_number(r, c));
    else if (isnan(result_number(r, c)))
        snprintf(out, len, "%s", "");
    else
        snprintf(out, len, s->format, result_number(r, c));
}

void console_table_header(FILE *f, int width)
{
    legend_count = 0;
    model_column = width > CONSOLE_MODEL_WIDTH ? width : CONSOLE_MODEL_WIDTH;
    for (size_t i = 0; i < N_SHOWN; i++)
        fprintf(f, "%*s ", column_width(i), SHOWN[i].header);
    fprintf(f, "%s\n", "status");
}

/* "status: note" after `at` characters of the line: on it while it fits
 * CONSOLE_WIDTH, else the note on lines of its own below, indented, broken
 * at spaces. */
static void status_and_note(FILE *f, int at, const char *status, const char *note)
{
    fputs(status, f);
    at += (int)strlen(status);
    if (!*note) {
        fputc('\n', f);
        return;
    }
    fputc(':', f);
    if (at + 2 + (int)strlen(note) <= CONSOLE_WIDTH) {
        fprintf(f, " %s\n", note);
        return;
    }
    const int indent = 4;
    while (*note) {
        int room = CONSOLE_WIDTH - indent, n = (int)strlen(note);
        if (n > room) {
            n = room;
            while (n > 0 && note[n] != ' ')
                n--;
            if (n == 0)
                n = room; /* one word longer than the line */
        }
        fprintf(f, "\n%*s%.*s", indent, "", n, note);
        note += n;
        while (*note == ' ')
            note++;
    }
    fputc('\n', f);
}

/* One cell in the column that starts at `stop`, the line being at `at`;
 * returns where the line is after it and its separating space. A left-
 * aligned cell leaves its padding unwritten, so a right-aligned cell wider
 * than its column can take it (a ragged A/A split beside an empty sync)
 * and the columns after it stay in line; only where there is no room does
 * the line shift. */
static int cell_at(FILE *f, int at, int stop, int width, const char *text)
{
    int len = (int)strlen(text), start = width < 0 ? stop : stop + width - len;
    if (start < at) /* never into the cell before, nor its separating space */
        start = at;
    fprintf(f, "%*s%s ", start - at, "", text);
    return start + len + 1;
}

void console_table_row(FILE *f, const result_row *r, const char *levers)
{
    int ran = strcmp(r->status, STATUS_OK) == 0;
    char text[RESULT_TEXT_LEN];
    if ((int)strlen(r->model) > model_width()) {
        int fresh, n = legend_number(r->model, &fresh);
        if (fresh) {
            short_model(r->model, n, text, sizeof text);
            fprintf(f, "%s = %s\n", text, r->model);
        }
    }
    int at = 0, stop = 0;
    for (size_t i = 0; i < N_SHOWN; i++) {
        const result_column *c = result_column_find(SHOWN[i].column);
        int config = c && strcmp(c->pass, "config") == 0;
        if (!ran && !config) { /* the step's "-", then straight to the status */
            at = cell_at(f, at, stop, column_width(i), "-");
            break;
        }
        cell_text(&SHOWN[i], r, text, sizeof text);
        at = cell_at(f, at, stop, column_width(i), text);
        stop += abs(column_width(i)) + 1;
    }
    char note[RESULT_TEXT_LEN * 2];
    snprintf(note, sizeof note, "%s%s%s", levers, *levers && *r->note ? "; " : "", r->note);
    status_and_note(f, at, r->status, note);
    fflush(f);
}
