#include "csv_writer.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "split_text.h"
#include "stats.h"

void csv_writer_init(csv_writer *w, const char *path)
{
    memset(w, 0, sizeof *w);
    snprintf(w->path, sizeof w->path, "%s", path);
}

void csv_writer_free(csv_writer *w)
{
    free(w->rows);
    free(w->kept);
    w->kept = NULL;
    w->rows = NULL;
    w->count = w->capacity = 0;
}

void csv_writer_meta(csv_writer *w, const char *key, const char *fmt, ...)
{
    int slot = 0;
    while (slot < w->meta_count && strcmp(w->keys[slot], key) != 0)
        slot++;
    if (slot == CSV_MAX_META)
        return;
    if (slot == w->meta_count)
        w->meta_count++;
    snprintf(w->keys[slot], sizeof w->keys[slot], "%s", key);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->values[slot], sizeof w->values[slot], fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof w->values[slot]) /* cut: never silently */
        memcpy(w->values[slot] + sizeof w->values[slot] - 4, "...", 4);
    for (char *c = w->values[slot]; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

const char *csv_writer_meta_value(const csv_writer *w, const char *key)
{
    for (int i = 0; i < w->meta_count; i++)
        if (strcmp(w->keys[i], key) == 0)
            return w->values[i];
    return NULL;
}

void csv_writer_meta_remove(csv_writer *w, const char *key)
{
    for (int slot = 0; slot < w->meta_count; slot++)
        if (!strcmp(w->keys[slot], key)) {
            w->meta_count--;
            memmove(w->keys[slot], w->keys[slot + 1],
                    (size_t)(w->meta_count - slot) * sizeof w->keys[0]);
            memmove(w->values[slot], w->values[slot + 1],
                    (size_t)(w->meta_count - slot) * sizeof w->values[0]);
            return;
        }
}

void csv_write_header(FILE *f)
{
    const char *sep = "";
#define HEADER(name, type, pass, role) \
    fprintf(f, "%s%s", sep, #name);    \
    sep = ",";
    RESULT_COLUMNS(HEADER)
#undef HEADER
    fputc('\n', f);
}

void csv_put_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == ',' ? ';' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void put_int(FILE *f, int64_t v)
{
    if (v >= 0)
        fprintf(f, "%lld", (long long)v);
}

static void put_real(FILE *f, double v)
{
    if (!isnan(v) && !isinf(v))
        fprintf(f, "%.*g", STATS_CSV_DIGITS, v);
}

void csv_write_row(FILE *f, const result_row *r)
{
    const char *sep = "";
#define PUT_TEXT(name) csv_put_text(f, r->name);
#define PUT_INT(name) put_int(f, r->name);
#define PUT_REAL(name) put_real(f, r->name);
#define CELL(name, type, pass, role) \
    fputs(sep, f);                   \
    PUT_##type(name) sep = ",";
    RESULT_COLUMNS(CELL)
#undef CELL
#undef PUT_TEXT
#undef PUT_INT
#undef PUT_REAL
    fputc('\n', f);
}

static int write_csv(FILE *f, void *ctx, char *why, size_t why_len)
{
    const csv_writer *w = ctx;
    (void)why;
    (void)why_len;
    fputs("# accubench results\n", f);
    for (int i = 0; i < w->meta_count; i++)
        fprintf(f, "# %s: %s\n", w->keys[i], w->values[i]);
    csv_write_header(f);
    if (w->kept)
        fputs(w->kept, f);
    for (size_t i = 0; i < w->count; i++)
        csv_write_row(f, &w->rows[i]);
    return 0;
}

/* The CSV and the files of `with`, one set (atomic_write_files). */
static int flush_with(csv_writer *w, const atomic_file_job *with, int n_with, char *why,
                      size_t why_len)
{
    atomic_file_job jobs[ATOMIC_FILES_MAX] = {{w->path, write_csv, w}};
    if (n_with < 0 || n_with > ATOMIC_FILES_MAX - 1) {
        snprintf(why, why_len, "cannot write %s with %d files beside it (at most %d)", w->path,
                 n_with, ATOMIC_FILES_MAX - 1);
        return -1;
    }
    for (int i = 0; i < n_with; i++)
        jobs[1 + i] = with[i];
    if (atomic_write_files(jobs, 1 + n_with, why, why_len))
        return -1;
    w->written = 1;
    return 0;
}

int csv_writer_flush(csv_writer *w, char *why, size_t why_len)
{
    return flush_with(w, NULL, 0, why, why_len);
}

/* A ragged split is spelled out in the note as the console and the report
 * write it ("split K=4: 3+3+3+1"): micro_batch, accum_steps and
 * last_micro_batch hold it, but not at a glance. */
static void note_split(result_row *r)
{
    if (!split_is_ragged(r->micro_batch, r->last_micro_batch))
        return;
    char text[64], note[RESULT_TEXT_LEN];
    split_text(text, sizeof text, (long long)r->micro_batch, (long long)r->accum_steps,
               (long long)r->last_micro_batch);
    snprintf(note, sizeof note, "split %s%s%s", text, r->note[0] ? "; " : "", r->note);
    memcpy(r->note, note, sizeof note);
}

int csv_writer_append(csv_writer *w, const result_row *r, char *why, size_t why_len)
{
    return csv_writer_append_with(w, r, NULL, 0, why, why_len);
}

int csv_writer_append_with(csv_writer *w, const result_row *r, const atomic_file_job *with,
                           int n_with, char *why, size_t why_len)
{
    if (w->count == w->capacity) {
        size_t cap = w->capacity ? 2 * w->capacity : 32;
        result_row *grown = realloc(w->rows, cap * sizeof *grown);
        if (!grown) {
            snprintf(why, why_len, "out of memory holding result rows");
            return -1;
        }
        w->rows = grown;
        w->capacity = cap;
    }
    w->rows[w->count] = *r;
    note_split(&w->rows[w->count++]);
    return flush_with(w, with, n_with, why, why_len);
}

long csv_rows_on_disk(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    /* Lines other than `#` metadata and blanks: the header, then the rows. */
    long lines = 0;
    int c, at_start = 1, counted = 0;
    while ((c = getc(f)) != EOF) {
        if (at_start && c != '#' && c != '\n' && c != '\r')
            counted = 1;
        if (at_start && c == '#')
            counted = 0;
        at_start = c == '\n';
        if (at_start) {
            lines += counted;
            counted = 0;
        }
    }
    lines += counted; /* a last line without its newline */
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return -1;
    return lines > 0 ? lines - 1 : 0;
}
