/* A results CSV's rows as csv_row (RESULT_COLUMNS): every cell parsed
 * and judged (csv_values.h), and the figures of each row against each
 * other, so that a row no run writes (an edited or damaged one) is
 * refused with its file and line, before any reader prints a figure of it. */
#ifndef ACCUBENCH_CSV_ROWS_H
#define ACCUBENCH_CSV_ROWS_H

#include <stddef.h>

#include "csv_read.h"

/* Converts every row into a csv_row (RESULT_COLUMNS). Columns in
 * `required` (a NULL-terminated list of names) must be in the header; any
 * other column the file lacks is left unmeasured. A value that cannot be
 * (not a number, NaN or infinite, negative, a size or step time of zero:
 * csv_value_check) is refused, and so is a row whose median lies outside
 * its own interval or p10..p90, or whose split or status no run writes
 * (row_check). Returns 0 and a malloc'ed array in *out
 * (free()), or -1 with a one-line reason ("FILE:LINE: column NAME: 'TEXT'
 * is not a number (field N of the row)") in `why`. */
int csv_result_rows(const csv_table *t, const char *const *required,
                    csv_row **out, char *why, size_t why_len);

/* A run's own row as a reader's row, its text by reference into r (valid
 * while r is): so that the run's summary states what the report will,
 * through the report's own sentences (aa_check.h), before the file is
 * read back. Not a repeat. */
void csv_row_of_result(const result_row *r, csv_row *out);

/* Key columns a file has no column for, read as the value every row had
 * before the column was written: each lever's default (levers.h: recompute
 * none, as the planner reads it too, grad_dtype fp32), devices 1. (sync
 * and shard are empty for one process: a file without them reads so
 * already.) Sets the field in every row; writes the
 * columns filled that `against` has (any, when NULL) into `said`
 * ("recompute=none, devices=1"; "" when none) and returns their count:
 * what a reader comparing the two files should be told. */
int csv_key_defaults(const csv_table *t, csv_row *rows, const csv_table *against, char *said,
                     size_t said_len);

#endif
