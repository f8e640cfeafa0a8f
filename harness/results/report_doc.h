/* The report as a document: headings, paragraphs, bullets, tables and
 * charts, built once from the numbers (report_build.c) and written by
 * separate writers, Markdown (report_doc.c) and HTML (report_html.c). */
#ifndef ACCUBENCH_REPORT_DOC_H
#define ACCUBENCH_REPORT_DOC_H

#include <stdio.h>

#include "table.h"

typedef enum doc_kind {
    DOC_HEADING, /* level 1..3 */
    DOC_PARA,
    DOC_BULLET,  /* consecutive bullets form one list */
    DOC_TABLE,
    DOC_CHART,   /* name: the chart's file suffix (wallclock, ...) */
} doc_kind;

typedef struct doc_block {
    doc_kind kind;
    int level;
    char *text;  /* heading, paragraph, bullet, chart caption */
    char *name;  /* chart */
    table *tab;  /* table */
} doc_block;

typedef struct doc {
    doc_block *blocks;
    size_t count, cap;
    int failed; /* an allocation failed: the document is incomplete */
} doc;

void doc_free(doc *d);
void doc_heading(doc *d, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void doc_para(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_bullet(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A new table (see table_init) to fill with table_add; owned by the
 * document. NULL when out of memory (then d->failed is set). */
table *doc_table(doc *d, const char *align, const char *const *header);
void doc_chart(doc *d, const char *name, const char *caption);

/* Markdown. Charts are images at CHART_BASE.NAME.png, relative to the
 * Markdown file. */
void doc_write_md(const doc *d, FILE *f, const char *chart_base);
/* A self-contained HTML page; charts are inlined from
 * CHART_PREFIX.NAME.svg (a path), or named as missing. */
void doc_write_html(const doc *d, FILE *f, const char *title, const char *chart_prefix);

#endif
