/* The lines a run ends on: how many rows are flagged; the fastest and
 * slowest configs with their intervals and ratio, for each series (model,
 * effective batch, dtype, device count) where the run has several, and
 * each A/A pair in the report's sentence (aa_check.h); where the CSV is
 * and how to make its report; last, a line per A/A pair the rule called
 * apart. */
#ifndef ACCUBENCH_RUN_SUMMARY_H
#define ACCUBENCH_RUN_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "result_row.h"

void run_summary(FILE *f, const result_row *rows, size_t n, const char *csv_path);

/* How many of the rows ran: status ok, with a step time. */
size_t run_summary_ran(const result_row *rows, size_t n);

/* The one line a sweep where no config ran ends on, into out: "no config
 * ran: 2 oom, 1 skipped (each row's note in PATH says why)". */
void run_summary_none(const result_row *rows, size_t n, const char *csv_path, char *out,
                      size_t len);

#endif
