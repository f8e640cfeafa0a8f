/* Which numbers a results CSV can hold. Every column of RESULT_COLUMNS
 * measures or counts something that cannot be negative, NaN or infinite;
 * sizes and times cannot be zero either. A file that says otherwise was
 * edited or damaged, and report and compare refuse it rather than print
 * "+inf%" or a "-4x0" split. */
#ifndef ACCUBENCH_CSV_VALUES_H
#define ACCUBENCH_CSV_VALUES_H

#include "result_row.h"

/* NULL when v can be a value of column c, else why not ("cannot be
 * negative"). */
const char *csv_value_check(const result_column *c, double v);

/* Parses the text s of a numeric column c into *real (and, for an INT
 * column, *whole, exact past 2^53), then checks it (csv_value_check).
 * NULL, or why the text cannot be a value of c ("is not a number",
 * "cannot be negative"): the one judge of a number for every reader of
 * accubench's files (the results CSV, the curves file beside it). An
 * empty text is "not a number" here: readers that allow an unmeasured
 * cell check for it first. */
const char *csv_value_parse(const result_column *c, const char *s, double *real,
                            int64_t *whole);

/* The one-line refusal of a cell: "FILE:LINE: column NAME: 'TEXT' WHAT
 * (field N of the row)", N counted from 1. */
void csv_value_say(char *why, size_t why_len, const char *path, int line, const char *column,
                   const char *text, const char *what, size_t field);

/* The columns that must be above zero when measured (NULL-terminated). */
extern const char *const csv_positive_columns[];

#endif
