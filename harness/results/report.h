/* accubench report FILE.csv: a Markdown report and a self-contained HTML
 * page (charts inlined as SVG) from one run's CSV. */
#ifndef ACCUBENCH_REPORT_H
#define ACCUBENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "csv_read.h"
#include "curves_read.h"
#include "report_doc.h"

/* argv[0] is "report". Usage:
 *   report FILE.csv [--out DIR] [--mem-cap BYTES] [--target-loss X] [--no-charts]
 * (BYTES as run's --mem-cap takes it: 8G, 512M, 1000000; 0 = no cap)
 * Writes DIR/NAME.md and DIR/NAME.html (DIR: the CSV's folder by default),
 * rendering the charts with scripts/plots.sh first unless --no-charts.
 * Returns 0, or 2 with one line on stderr starting "accubench: ". */
int report_main(int argc, char **argv);

/* What the analysis reads. */
typedef struct report_input {
    const char *csv_path;
    const csv_table *t;
    const csv_row *rows;
    const curves_table *curves; /* NAME.curves.csv beside it; NULL: none */
    int64_t mem_cap;          /* bytes; -1 = no cap */
    const char *mem_cap_from; /* where the cap came from, for the text */
    const char *chart_base;   /* the charts' file-name prefix, no folder */
    const char *chart_prefix; /* the same with its folder (NULL: unknown) */
    const char *charts_note;  /* why charts are missing, or NULL */
    double target_loss;       /* --target-loss; NAN: each series' default */
} report_input;

/* Builds the report's document from the numbers. Returns 0, or -1 when out
 * of memory. */
int report_build(const report_input *in, doc *d);

/* What the report says on the console once written (report_console.c):
 * its A/B/C verdicts and A/A checks in its own words, then a line per A/A
 * pair the rule called apart (aa_check.h's AA_FAILED_LEAD), last.
 * Returns 0, or -1 when out of memory. */
int report_console(const report_input *in, FILE *f);

/* The record of in (a report_input *) as JSON into f, RUN.json beside the
 * report (report_json.c): an atomic_writer (atomic_file.h). Returns 0. */
int report_json_write(FILE *f, void *ctx, char *why, size_t why_len);

#endif
