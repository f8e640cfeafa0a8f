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

/* The model column's least width. */
#define CONSOLE_MODEL_WIDTH 10

/* The header line; it starts a run's table (the legend starts afresh).
 * model_width: the model column's, CONSOLE_MODEL_WIDTH or the longest
 * name of the run that is no custom shape (console_model_width): a
 * preset is shown as it is, only a shape ("kind:...") past it goes to
 * the legend. */
void console_table_header(FILE *f, int model_width);
/* Folds one model name of the run into *width (start at
 * CONSOLE_MODEL_WIDTH): a name without ':' widens it to its length. */
void console_model_width(const char *name, int *width);
/* r's line; `levers` (what sets the row apart beyond the columns shown:
 * "recompute block", "" for none) leads its note. */
void console_table_row(FILE *f, const result_row *r, const char *levers);
/* The model's name as the table shows it: whole, or "gpt#1" as the legend
 * above its first row names it. */
void console_model_name(const result_row *r, char *out, size_t len);

#endif
