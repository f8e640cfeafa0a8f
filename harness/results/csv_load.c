/* A results CSV read for the readers (csv_load.h). */
#include "csv_load.h"

#include <stdio.h>
#include <stdlib.h>

#include "csv_rows.h"
#include "row_index.h"

int csv_load(const char *path, const char *const *required, csv_table *t,
             csv_row **rows, char *why, size_t why_len)
{
    if (csv_read(path, t, why, why_len))
        return -1;
    if (csv_result_rows(t, required, rows, why, why_len)) {
        csv_free(t);
        return -1;
    }
    if (row_index_mark_repeats(*rows, t->rows) < 0) {
        snprintf(why, why_len, "%s: out of memory", path);
        free(*rows);
        *rows = NULL;
        csv_free(t);
        return -1;
    }
    return 0;
}
