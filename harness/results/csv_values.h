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

/* The columns that must be above zero when measured (NULL-terminated). */
extern const char *const csv_positive_columns[];

#endif
