#include "key_cells.h"

#include <string.h>

#include "row_index.h"

static int is_shown(const char *const *shown, const char *name)
{
    for (const char *const *a = shown; a && *a; a++)
        if (!strcmp(*a, name))
            return 1;
    return 0;
}

/* The first picked row of the sets, or NULL. */
static const csv_row *first_row(const key_rows *sets, size_t nsets)
{
    for (size_t k = 0; k < nsets; k++)
        for (size_t i = 0; i < sets[k].n; i++)
            if (!sets[k].pick || sets[k].pick(&sets[k].rows[i]))
                return &sets[k].rows[i];
    return NULL;
}

size_t key_cells_differing(const key_rows *sets, size_t nsets, const char *const *shown,
                           const result_column **out, size_t max)
{
    const csv_row *first = first_row(sets, nsets);
    size_t n = 0;
    for (int i = 0; first && i < result_column_count && n < max; i++) {
        const result_column *c = &result_columns[i];
        if (c->role != RESULT_KEY || is_shown(shown, c->name))
            continue;
        row_key one = row_key_column(c->name);
        int differs = 0;
        for (size_t k = 0; k < nsets && !differs; k++)
            for (size_t r = 0; r < sets[k].n && !differs; r++) {
                const csv_row *row = &sets[k].rows[r];
                differs = (!sets[k].pick || sets[k].pick(row)) &&
                          !row_key_equal(&one, first, row);
            }
        if (differs)
            out[n++] = c;
    }
    return n;
}

void key_cells_add(table *tb, const result_column *c, const csv_row *r)
{
    const char *field = (const char *)r + csv_row_offset[c - result_columns];
    if (c->type == RESULT_IS_TEXT) {
        const char *text = *(const char *const *)field;
        table_add(tb, *text ? text : "-");
    } else if (c->type == RESULT_IS_INT && *(const int64_t *)field >= 0) {
        table_addf(tb, "%lld", (long long)*(const int64_t *)field);
    } else {
        table_add(tb, "-");
    }
}
