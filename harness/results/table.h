/* A table of text cells, built once and written as Markdown (aligned, so it
 * also reads as plain text) or as HTML. The report and compare share it. */
#ifndef ACCUBENCH_TABLE_H
#define ACCUBENCH_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef struct table {
    size_t cols, count, cap; /* count = cells so far, header included */
    size_t *at;              /* row-major; row 0 is the header: where each
                              * cell starts in text */
    char *text;              /* the cells, each NUL-terminated: one block
                              * for a table of a million rows, not a
                              * million allocations */
    size_t text_len, text_cap;
    char align[32];          /* per column: 'l' or 'r' */
    int failed;              /* an allocation failed: the table is short */
} table;

/* A table whose columns are named by `header` (NULL-terminated, at most
 * 31); `align` is one letter a column ("lrr...": left, right). */
void table_init(table *t, const char *align, const char *const *header);
void table_free(table *t);
/* Appends the next cell, row by row. */
void table_add(table *t, const char *text);
void table_addf(table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* As Markdown: as it is for a terminal (compare), or with no HTML in it
 * (the report's file, which a Markdown viewer renders): text from a CSV
 * (a model's or a host's name) cannot open a tag there (md_put_text). */
void table_write_md(const table *t, FILE *f);
void table_write_md_no_html(const table *t, FILE *f);
void table_write_html(const table *t, FILE *f);

/* s with the two characters that open HTML in Markdown, '<' (a tag) and
 * '&' (an entity), written as entities, which every viewer shows as the
 * characters; the rest, the report's own Markdown among it, as it is.
 * md_text_len: the length it writes. */
void md_put_text(FILE *f, const char *s);
size_t md_text_len(const char *s);

/* v with `sig` significant digits in plain notation (no exponent between
 * 1e-3 and 1e12), "-" when v is NAN (not measured). Returns buf. */
const char *fmt_sig(char *buf, size_t len, double v, int sig);

/* A noise percentage as every table prints it: one decimal ("0.7",
 * "6.9"), whole from 100 ("250"), "-" when NAN; the same decimals beside
 * each other, never "6.9 / 0.056". Returns buf. */
const char *fmt_pct(char *buf, size_t len, double pct);

/* Writes s with &, <, >, " escaped. */
void html_escape(FILE *f, const char *s);

#endif
