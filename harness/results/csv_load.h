/* A results CSV as every reader takes it: read, each row converted, and
 * each config's later rows marked (a config run again with --append), so
 * that report, plan, compare and the rest read a config's first row. */
#ifndef ACCUBENCH_CSV_LOAD_H
#define ACCUBENCH_CSV_LOAD_H

#include <stddef.h>

#include "csv_read.h"

/* csv_read, csv_result_rows (columns in `required` must be there), then
 * row_index_mark_repeats. Returns 0, or -1 with a one-line reason in why;
 * on failure nothing is left to free. */
int csv_load(const char *path, const char *const *required, csv_table *t,
             csv_row **rows, char *why, size_t why_len);

#endif
