/* Rows found by their key columns in constant time (see row_index.h). */
#include "row_index.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static row_key key_of_roles(int with_split, const char *except)
{
    row_key k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < result_column_count && i < (int)sizeof k.use; i++) {
        const result_column *c = &result_columns[i];
        k.use[i] = (c->role == RESULT_KEY || (with_split && c->role == RESULT_SPLIT)) &&
                   !(except && !strcmp(c->name, except));
    }
    return k;
}

row_key row_key_config(void) { return key_of_roles(1, NULL); }
row_key row_key_series(void) { return key_of_roles(0, NULL); }
row_key row_key_config_but(const char *name) { return key_of_roles(1, name); }

row_key row_key_column(const char *name)
{
    row_key k;
    memset(&k, 0, sizeof k);
    for (int i = 0; i < result_column_count && i < (int)sizeof k.use; i++)
        k.use[i] = !strcmp(result_columns[i].name, name);
    return k;
}

static const void *field(const csv_row *r, int i)
{
    return (const char *)r + csv_row_offset[i];
}

int row_key_equal(const row_key *k, const csv_row *a, const csv_row *b)
{
    for (int i = 0; i < result_column_count; i++) {
        if (!k->use[i])
            continue;
        const void *fa = field(a, i), *fb = field(b, i);
        switch (result_columns[i].type) {
        case RESULT_IS_TEXT:
            if (strcmp(*(const char *const *)fa, *(const char *const *)fb))
                return 0;
            break;
        case RESULT_IS_INT:
            if (*(const int64_t *)fa != *(const int64_t *)fb)
                return 0;
            break;
        case RESULT_IS_REAL: {
            double x = *(const double *)fa, y = *(const double *)fb;
            if (!(x == y || (isnan(x) && isnan(y))))
                return 0;
            break;
        }
        }
    }
    return 1;
}

/* FNV-1a over the key's fields, each followed by a separator so that
 * ("ab", "c") and ("a", "bc") differ. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

uint64_t row_key_hash(const row_key *k, const csv_row *r)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < result_column_count; i++) {
        if (!k->use[i])
            continue;
        const void *f = field(r, i);
        switch (result_columns[i].type) {
        case RESULT_IS_TEXT: {
            const char *s = *(const char *const *)f;
            h = mix(h, s, strlen(s));
            break;
        }
        case RESULT_IS_INT: h = mix(h, f, sizeof(int64_t)); break;
        case RESULT_IS_REAL: {
            double x = *(const double *)f;
            if (isnan(x))
                x = NAN; /* every NaN hashes alike, as they compare alike */
            else if (x == 0)
                x = 0; /* and -0 as 0 */
            h = mix(h, &x, sizeof x);
            break;
        }
        }
    }
    return h;
}

int row_index_init(row_index *ix, const row_key *k, const csv_row *rows, size_t max_rows)
{
    memset(ix, 0, sizeof *ix);
    ix->key = *k;
    ix->rows = rows;
    ix->cap = 16;
    while (ix->cap < 2 * max_rows)
        ix->cap *= 2;
    ix->slot = calloc(ix->cap, sizeof *ix->slot);
    return ix->slot ? 0 : -1;
}

void row_index_free(row_index *ix)
{
    free(ix->slot);
    memset(ix, 0, sizeof *ix);
}

/* The slot holding r's key, or the empty slot where it would go. */
static size_t find_slot(const row_index *ix, const csv_row *r)
{
    size_t mask = ix->cap - 1, s = (size_t)row_key_hash(&ix->key, r) & mask;
    while (ix->slot[s] && !row_key_equal(&ix->key, &ix->rows[ix->slot[s] - 1], r))
        s = (s + 1) & mask;
    return s;
}

size_t row_index_add(row_index *ix, size_t i)
{
    size_t s = find_slot(ix, &ix->rows[i]);
    if (ix->slot[s])
        return ix->slot[s] - 1;
    if (2 * (ix->count + 1) > ix->cap)
        return i; /* more rows than promised: not kept, but never lost */
    ix->slot[s] = i + 1;
    ix->count++;
    return i;
}

size_t row_index_find(const row_index *ix, const csv_row *r)
{
    size_t s = find_slot(ix, r);
    return ix->slot[s] ? ix->slot[s] - 1 : ROW_NONE;
}

long row_index_mark_repeats(csv_row *rows, size_t n)
{
    row_key config = row_key_config();
    row_index ix;
    if (row_index_init(&ix, &config, rows, n))
        return -1;
    long repeats = 0;
    for (size_t i = 0; i < n; i++) {
        rows[i].repeat = row_index_add(&ix, i) != i;
        repeats += rows[i].repeat;
    }
    row_index_free(&ix);
    return repeats;
}

void row_index_repeats_sentence(long repeats, const char *name, char *out, size_t len)
{
    if (repeats <= 0)
        snprintf(out, len, "%s", "");
    else
        snprintf(out, len, "%s holds %ld %s of configs named earlier in it (a config run again "
                 "with --append): each config's first row is read", name, repeats,
                 repeats == 1 ? "row" : "rows");
}

void row_index_repeats_text(const csv_row *rows, size_t n, const char *name, char *out,
                            size_t len)
{
    long repeats = 0;
    for (size_t i = 0; i < n; i++)
        repeats += rows[i].repeat;
    row_index_repeats_sentence(repeats, name, out, len);
}
