#include "result_row.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void result_row_clear(result_row *r)
{
    memset(r, 0, sizeof *r);
#define CLEAR_TEXT(name)
#define CLEAR_INT(name) r->name = -1;
#define CLEAR_REAL(name) r->name = NAN;
#define CLEAR(name, type, pass, role) CLEAR_##type(name)
    RESULT_COLUMNS(CLEAR)
#undef CLEAR
#undef CLEAR_TEXT
#undef CLEAR_INT
#undef CLEAR_REAL
}

const result_column result_columns[] = {
#define COLUMN(name, type, pass, role) \
    {#name, RESULT_IS_##type, #pass, RESULT_##role, offsetof(result_row, name)},
    RESULT_COLUMNS(COLUMN)
#undef COLUMN
};
const int result_column_count = (int)(sizeof result_columns / sizeof result_columns[0]);

const result_column *result_column_find(const char *name)
{
    for (int i = 0; i < result_column_count; i++)
        if (strcmp(result_columns[i].name, name) == 0)
            return &result_columns[i];
    return NULL;
}

const char *result_text(const result_row *r, const result_column *c)
{
    return c->type == RESULT_IS_TEXT ? (const char *)r + c->offset : "";
}

double result_number(const result_row *r, const result_column *c)
{
    const char *field = (const char *)r + c->offset;
    switch (c->type) {
    case RESULT_IS_INT: return (double)*(const int64_t *)field;
    case RESULT_IS_REAL: return *(const double *)field;
    case RESULT_IS_TEXT: break;
    }
    return NAN;
}

int result_column_equal(const result_row *a, const result_row *b, const result_column *c)
{
    const char *fa = (const char *)a + c->offset, *fb = (const char *)b + c->offset;
    switch (c->type) {
    case RESULT_IS_TEXT: return strcmp(fa, fb) == 0;
    case RESULT_IS_INT: return *(const int64_t *)fa == *(const int64_t *)fb;
    case RESULT_IS_REAL: {
        double x = *(const double *)fa, y = *(const double *)fb;
        return x == y || (isnan(x) && isnan(y));
    }
    }
    return 0;
}

/* Equal in every KEY column, and in every SPLIT one too when with_split,
 * except the column called `except` (none when NULL). */
static int same_in_key(const result_row *a, const result_row *b, int with_split,
                       const char *except)
{
    for (int i = 0; i < result_column_count; i++) {
        const result_column *c = &result_columns[i];
        if ((c->role == RESULT_KEY || (with_split && c->role == RESULT_SPLIT)) &&
            !(except && strcmp(c->name, except) == 0) && !result_column_equal(a, b, c))
            return 0;
    }
    return 1;
}

int result_same_config(const result_row *a, const result_row *b)
{
    return same_in_key(a, b, 1, NULL);
}

int result_same_series(const result_row *a, const result_row *b)
{
    return same_in_key(a, b, 0, NULL);
}

int result_same_config_but(const result_row *a, const result_row *b, const char *column)
{
    return same_in_key(a, b, 1, column);
}

static size_t column_size(const result_column *c)
{
    return c->type == RESULT_IS_TEXT ? RESULT_TEXT_LEN
           : c->type == RESULT_IS_INT ? sizeof(int64_t)
                                      : sizeof(double);
}

void result_copy_pass(result_row *to, const result_row *from, const char *pass)
{
    for (int i = 0; i < result_column_count; i++) {
        const result_column *c = &result_columns[i];
        if (!strcmp(c->pass, pass))
            memcpy((char *)to + c->offset, (const char *)from + c->offset, column_size(c));
    }
}

void result_key_names(char *out, size_t len, const char *sep)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < result_column_count && used < len; i++)
        if (result_columns[i].role != RESULT_VALUE)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? sep : "",
                                     result_columns[i].name);
}

void row_note(result_row *r, const char *fmt, ...)
{
    size_t cap = sizeof r->note, used = strlen(r->note);
    int cut = used + 2 >= cap; /* full: no room for another remark */
    if (used && !cut) {
        memcpy(r->note + used, "; ", 3);
        used += 2;
    }
    if (!cut) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(r->note + used, cap - used, fmt, ap);
        va_end(ap);
        cut = n < 0 || (size_t)n >= cap - used;
    }
    /* a remark cut short, or left out, says so: the note never ends in a
     * sentence that reads whole but is not */
    if (cut)
        memcpy(r->note + cap - 4, "...", 4);
}
