/* Reading back the CSV that `accubench run` writes.
 *
 * The file is `# key: value` metadata lines, one header row, then one row per
 * config. Columns are found by their header name, never by position, so a
 * file from an older or newer writer still reads. An empty field means "not
 * measured". Text fields never contain commas, so there is no quoting. */
#ifndef ACCUBENCH_CSV_READ_H
#define ACCUBENCH_CSV_READ_H

#include <stddef.h>
#include <stdio.h>

#include "result_row.h"

typedef struct csv_meta {
    char *key, *value;
} csv_meta;

typedef struct csv_table {
    char *path;
    csv_meta *meta;
    size_t meta_count;
    char **header;  /* column names, in file order */
    size_t cols;
    char *text;     /* every row's cells, each NUL-terminated, row after row:
                     * one block the size of the file, not one per cell */
    size_t *row_at; /* where each row's first cell starts in text */
    int *line;      /* the file line of each row, for messages */
    size_t rows;
} csv_table;

/* One row as read back: the columns of RESULT_COLUMNS, text by reference
 * into its csv_table (valid until csv_free), numbers parsed, unmeasured
 * fields NAN / -1 / "". A few hundred bytes whatever the text holds, where
 * result_row (what the run fills) carries fixed text buffers. */
typedef struct csv_row {
#define CSV_ROW_TEXT(name) const char *name;
#define CSV_ROW_INT(name) int64_t name;
#define CSV_ROW_REAL(name) double name;
#define CSV_ROW_FIELD(name, type, pass, role) CSV_ROW_##type(name)
    RESULT_COLUMNS(CSV_ROW_FIELD)
#undef CSV_ROW_FIELD
#undef CSV_ROW_TEXT
#undef CSV_ROW_INT
#undef CSV_ROW_REAL
    int repeat; /* 1: an earlier row of the file names the same config (a
                 * config run again with --append; csv_load marks it): a
                 * figure over configs reads its first row, as compare does */
} csv_row;

/* The offset of each column's field in csv_row, in RESULT_COLUMNS order
 * (result_columns[i] describes csv_row_offset[i]). */
extern const size_t csv_row_offset[];

/* The longest line a CSV may hold: a header of 300000 columns is 2 MiB. */
#define CSV_MAX_LINE (64 << 20)

/* `path` opened for reading without waiting: a regular file, or a pipe (a
 * FIFO nobody writes reads as empty at once); a folder or a device
 * (/dev/zero, endless) is refused. NULL with a one-line reason. */
FILE *csv_open_input(const char *path, char *why, size_t why_len);

/* Reads `path` into *t. Returns 0, or -1 with a one-line reason naming the
 * file (and line) in `why`; *t is then empty and needs no csv_free. */
int csv_read(const char *path, csv_table *t, char *why, size_t why_len);
void csv_free(csv_table *t);

/* The value of metadata `key` ("" when empty), or NULL when absent. */
const char *csv_meta_get(const csv_table *t, const char *key);
/* Whether the value of metadata `key` holds `word` among its space-separated
 * words: 1 or 0, or -1 when the file has no such line. */
int csv_meta_has_word(const csv_table *t, const char *key, const char *word);
/* The index of column `name`, or -1 when the header lacks it. */
int csv_column(const csv_table *t, const char *name);
/* The text of one cell; "" when col is -1. */
const char *csv_cell(const csv_table *t, size_t row, int col);

/* The one-line refusal of a row whose field count is not the header's:
 * "FILE:LINE: N fields, but the header has M" (a file cut short, a cell
 * lost or added). */
void csv_say_field_count(char *why, size_t why_len, const char *path, int line, size_t fields,
                         size_t header);

/* The row ran: status ok and a step time measured. */
int result_ran(const csv_row *r);
/* The row ran and is a config's first (or only) arm, and its first row in
 * the file: what a figure over configs reads, each config once
 * (RESULT_SECOND_ARM; repeat). */
int result_ran_once(const csv_row *r);
/* The row ran and is not a second arm: every measurement, a config run
 * again with --append among them, for what pools or checks them all (a
 * fit, the worst gradient error) rather than picking among configs. */
int result_measured(const csv_row *r);

/* The columns the report and compare need (the config, its status and its
 * step time): a file without one of them is refused. */
extern const char *const csv_required_columns[];

#endif
