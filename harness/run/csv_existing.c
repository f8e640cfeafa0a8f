#include "csv_existing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv_read.h"
#include "csv_writer.h"

/* The metadata that make two runs' rows comparable. */
static const char *const same_keys[] = {"backend", "device", "dtype", "optimizer",
                                        "mem_cap_bytes"};

int csv_existing_check(const char *path, csv_existing want, char *why, size_t why_len)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0)
        return 0;
    if (want == CSV_REFUSE) {
        snprintf(why, why_len, "--csv %s exists; add --append to add this run's rows to it, "
                 "or --replace to start it again (refused: it would be overwritten)", path);
        return -1;
    }
    return 1;
}

static const char *writer_meta(const csv_writer *w, const char *key)
{
    for (int i = 0; i < w->meta_count; i++)
        if (strcmp(w->keys[i], key) == 0)
            return w->values[i];
    return NULL;
}

/* This build's columns, in order, or a reason. */
static int same_columns(const csv_table *t, char *why, size_t why_len)
{
    size_t i = 0;
    while (i < t->cols && (int)i < result_column_count &&
           strcmp(t->header[i], result_columns[i].name) == 0)
        i++;
    if (i == t->cols && (int)i == result_column_count)
        return 0;
    snprintf(why, why_len, "--append %s: its columns are not this build's (column %zu is %s, "
             "not %s); write another --csv or --replace it", t->path, i + 1,
             i < t->cols ? t->header[i] : "missing",
             (int)i < result_column_count ? result_columns[i].name : "none");
    return -1;
}

static int same_settings(const csv_table *t, const csv_writer *w, char *why, size_t why_len)
{
    for (size_t k = 0; k < sizeof same_keys / sizeof same_keys[0]; k++) {
        const char *theirs = csv_meta_get(t, same_keys[k]), *mine = writer_meta(w, same_keys[k]);
        if (!mine || (theirs && strcmp(theirs, mine) == 0))
            continue;
        snprintf(why, why_len, "--append %s: its rows are not comparable with this run's "
                 "(%s is '%.80s' there, '%.80s' here); write another --csv or --replace it",
                 t->path, same_keys[k], theirs ? theirs : "(none)", mine);
        return -1;
    }
    return 0;
}

/* The rows as lines of text: the cells of each, joined by commas. */
static int keep_rows(csv_writer *w, const csv_table *t, char *why, size_t why_len)
{
    size_t len = 0, used = 0;
    for (size_t r = 0; r < t->rows; r++) {
        const char *cell = t->text + t->row_at[r];
        for (size_t c = 0; c < t->cols; c++) {
            size_t n = strlen(cell);
            len += n + 1;
            cell += n + 1;
        }
    }
    char *kept = malloc(len + 1);
    if (!kept) {
        snprintf(why, why_len, "--append %s: out of memory holding its rows", t->path);
        return -1;
    }
    for (size_t r = 0; r < t->rows; r++) {
        const char *cell = t->text + t->row_at[r];
        for (size_t c = 0; c < t->cols; c++) {
            size_t n = strlen(cell);
            memcpy(kept + used, cell, n);
            used += n;
            kept[used++] = c + 1 < t->cols ? ',' : '\n';
            cell += n + 1;
        }
    }
    kept[used] = '\0';
    free(w->kept);
    w->kept = kept;
    return 0;
}

int csv_existing_adopt(csv_writer *w, const char *path, char *why, size_t why_len)
{
    csv_table t;
    char reason[400];
    if (csv_read(path, &t, reason, sizeof reason)) {
        snprintf(why, why_len, "--append %s: %s", path, reason);
        return -1;
    }
    int rc = same_columns(&t, why, why_len) || same_settings(&t, w, why, why_len) ||
             keep_rows(w, &t, why, why_len);
    /* Its other lines (a peer's, an earlier run's) stay, while there is room. */
    for (size_t i = 0; !rc && i < t.meta_count && w->meta_count < CSV_MAX_META - 16; i++)
        if (!writer_meta(w, t.meta[i].key))
            csv_writer_meta(w, t.meta[i].key, "%s", t.meta[i].value);
    csv_free(&t);
    return rc ? -1 : 0;
}
