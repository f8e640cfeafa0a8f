/* The table `accubench run` prints as configs finish: one line a row. Its
 * columns are columns of RESULT_COLUMNS, named in one list in
 * console_table.c (header, width, format): showing another is one entry. */
#ifndef ACCUBENCH_CONSOLE_TABLE_H
#define ACCUBENCH_CONSOLE_TABLE_H

#include <stdio.h>

#include "result_row.h"

void console_table_header(FILE *f);
void console_table_row(FILE *f, const result_row *r);

#endif
