/* Rows read back from a results CSV, found by their key columns in constant
 * time: a hash over the columns that identify a config (the KEY and SPLIT
 * marks of RESULT_COLUMNS), a series (KEY only), a config but for one
 * column, or one column alone. What makes report and compare linear in the
 * number of rows. */
#ifndef ACCUBENCH_ROW_INDEX_H
#define ACCUBENCH_ROW_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "csv_read.h"

/* Which columns of RESULT_COLUMNS make a key: one flag per column, as
 * many as the table has. */
#define ROW_KEY_ONE(name, type, pass, role) +1
enum { ROW_KEY_COLUMNS = 0 RESULT_COLUMNS(ROW_KEY_ONE) };
#undef ROW_KEY_ONE
typedef struct row_key {
    unsigned char use[ROW_KEY_COLUMNS];
} row_key;

row_key row_key_config(void);                 /* KEY and SPLIT: compare's match */
row_key row_key_series(void);                 /* KEY: one table of the report */
row_key row_key_config_but(const char *name); /* KEY and SPLIT but one column */
row_key row_key_column(const char *name);     /* one column */

/* Equal in every column of the key (unmeasured equals unmeasured). */
int row_key_equal(const row_key *k, const csv_row *a, const csv_row *b);
uint64_t row_key_hash(const row_key *k, const csv_row *r);

/* Rows added by index; each key remembers the first row added with it. */
typedef struct row_index {
    row_key key;
    const csv_row *rows;
    size_t *slot; /* row + 1, 0 = empty; open addressing */
    size_t cap;   /* a power of two, at least twice the rows it may hold */
    size_t count;
} row_index;

/* For up to `max_rows` rows of `rows`. Returns 0, or -1 when out of memory. */
int row_index_init(row_index *ix, const row_key *k, const csv_row *rows, size_t max_rows);
void row_index_free(row_index *ix);
/* Adds row i unless a row with its key is in already. Returns the first
 * row added with that key (i itself when it is the first). */
size_t row_index_add(row_index *ix, size_t i);
/* The first row added with r's key, or ROW_NONE. */
#define ROW_NONE ((size_t)-1)
size_t row_index_find(const row_index *ix, const csv_row *r);

/* Marks rows[i].repeat on each row whose config (every KEY and SPLIT
 * column, the arm among them) an earlier row names: a config run again
 * with --append. Returns how many, or -1 out of memory (none marked). */
long row_index_mark_repeats(csv_row *rows, size_t n);

/* The sentence a reader prints where rows[0..n) repeat configs (marked:
 * "NAME holds 2 rows of configs named earlier in it ...: each config's
 * first row is read"), "" where they repeat none. Every reader that picks
 * among configs says it in these words (compare after "# repeated: ").
 * row_index_repeats_sentence: the same of a count. */
void row_index_repeats_text(const csv_row *rows, size_t n, const char *name, char *out,
                            size_t len);
void row_index_repeats_sentence(long repeats, const char *name, char *out, size_t len);

#endif
