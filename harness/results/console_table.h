/* The table `accubench run` prints as configs finish: one line a row,
 * within CONSOLE_WIDTH columns (a long note continues on lines of its own).
 * Its columns are columns of RESULT_COLUMNS, named in one list in
 * console_table.c (header, width, format): showing another is one entry.
 * A custom model name too long for its column is shown as "gpt#1", with a
 * legend line ("gpt#1 = gpt:d=128,...") above the first row that uses it;
 * the CSV holds the whole name. */
#ifndef ACCUBENCH_CONSOLE_TABLE_H
#define ACCUBENCH_CONSOLE_TABLE_H

#include <stdio.h>

#include "result_row.h"

#define CONSOLE_WIDTH 120

/* The header line; it starts a run's table (the legend starts afresh). */
void console_table_header(FILE *f);
/* r's line; `levers` (what sets the row apart beyond the columns shown:
 * "recompute block", "" for none) leads its note. */
void console_table_row(FILE *f, const result_row *r, const char *levers);
/* The model's name as the table shows it: whole, or "gpt#1" as the legend
 * above its first row names it. */
void console_model_name(const result_row *r, char *out, size_t len);

#endif
