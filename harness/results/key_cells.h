/* The key columns a table of rows shows beyond its own: every KEY column
 * (result_row.h) whose value is not the same in all the rows, so that no
 * two lines of the table read alike (two rows that differ only in sync
 * or devices, say), and each such column's cell. compare's table and the
 * report's configs that did not run both name their rows so. */
#ifndef ACCUBENCH_KEY_CELLS_H
#define ACCUBENCH_KEY_CELLS_H

#include <stddef.h>

#include "csv_read.h"
#include "table.h"

/* A set of rows: rows[i] for each i < n where pick is NULL or pick[i]. */
typedef struct key_rows {
    const csv_row *rows;
    size_t n;
    int (*pick)(const csv_row *r); /* NULL: every row */
} key_rows;

/* The KEY columns not named in shown (NULL-terminated) whose value differs
 * between any two picked rows of the sets, in the CSV's column order, into
 * out (at most max). Returns how many. */
size_t key_cells_differing(const key_rows *sets, size_t nsets, const char *const *shown,
                           const result_column **out, size_t max);

/* Column c's cell for row r: its text or number, "-" where the row has
 * none (sync and shard of one process). */
void key_cells_add(table *tb, const result_column *c, const csv_row *r);

#endif
