/* The CSV a run writes: `# key: value` metadata lines, one header row, one
 * row per config. The whole file is rewritten to a temporary name and
 * renamed over the real one after every row, so the file on disk is always
 * complete: an interrupted sweep keeps every row it measured. */
#ifndef ACCUBENCH_CSV_WRITER_H
#define ACCUBENCH_CSV_WRITER_H

#include <stddef.h>
#include <stdio.h>

#include "atomic_file.h"
#include "result_row.h"

#define CSV_MAX_META 48
/* A metadata value's room: the longest the run writes is a column list
 * (pass_timed names some 60 columns, over 600 characters) or the command
 * line; one longer still is cut and ends in "..." so a reader sees it was. */
#define CSV_META_VALUE_LEN 2048

/* The metadata line of a run that has not finished (still measuring,
 * interrupted, the device lost): configs planned have no row. Where a
 * later run appends to the file, the earlier run's line goes on under
 * CSV_UNFINISHED_EARLIER, and a later run that finishes keeps saying it. */
#define CSV_UNFINISHED "unfinished"
#define CSV_UNFINISHED_EARLIER "unfinished_earlier"

typedef struct csv_writer {
    char path[4096];
    char keys[CSV_MAX_META][40];
    char values[CSV_MAX_META][CSV_META_VALUE_LEN];
    int meta_count;
    result_row *rows;
    size_t count, capacity;
    char *kept; /* an earlier run's rows (run --append), written before these */
    size_t kept_rows; /* how many rows kept holds */
    int written; /* 1 once a write of the file succeeded: until then it is as it was */
} csv_writer;

void csv_writer_init(csv_writer *w, const char *path);
void csv_writer_free(csv_writer *w);

/* Sets (or replaces) a metadata line. */
void csv_writer_meta(csv_writer *w, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of a metadata line, NULL where there is none of that key. */
const char *csv_writer_meta_value(const csv_writer *w, const char *key);

/* Takes a metadata line out (none of that key: nothing). */
void csv_writer_meta_remove(csv_writer *w, const char *key);

/* Writes the file as it stands now (also with no rows yet). Returns 0, or -1
 * with a one-line reason. */
int csv_writer_flush(csv_writer *w, char *why, size_t why_len);

/* Adds a row (a ragged split spelled out at the front of its note) and
 * flushes. */
int csv_writer_append(csv_writer *w, const result_row *r, char *why, size_t why_len);

/* csv_writer_append, with the files of `with` (n_with of them, at most
 * ATOMIC_FILES_MAX - 1) written in the same set as the CSV: a file that
 * must hold what the rows on disk hold (the loss curves of --train-steps)
 * is renamed with the CSV or not at all, so a disk that fills while it is
 * written leaves both as they were, never a row without its curves. */
int csv_writer_append_with(csv_writer *w, const result_row *r, const atomic_file_job *with,
                           int n_with, char *why, size_t why_len);

/* The rows the file at path holds now, read back: what a run reports after
 * a failed write, rather than the rows it meant to write. -1 when the file
 * cannot be read (gone with a deleted folder, say). */
long csv_rows_on_disk(const char *path);

/* Writes a text cell: commas and line breaks would break the format, so
 * they become ';' and ' ' (a custom model's shape, "mlp:hidden=32,layers=2",
 * reads "mlp:hidden=32;layers=2"). Every table of the results writes its
 * text cells through it, so that a name reads the same in each. */
void csv_put_text(FILE *f, const char *s);

/* Writes the header row / one row (exposed for the tests and other writers). */
void csv_write_header(FILE *f);
void csv_write_row(FILE *f, const result_row *r);

#endif
