/* Reading back the CSV that `accubench run` writes (see csv_read.h). */
#include "csv_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const csv_required_columns[] = {
    "backend", "device", "model", "dtype", "mode", "reduction",
    "effective_batch", "micro_batch", "accum_steps", "status", "step_ms_median", NULL,
};

static void say(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* Grows *arr (of elem bytes each) so that index n fits. */
static int grow(void *arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap <= n)
        ncap *= 2;
    void *p = realloc(*(void **)arr, ncap * elem);
    if (!p)
        return -1;
    *(void **)arr = p;
    *cap = ncap;
    return 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Splits `line` in place at commas into fields (trimmed); returns the count. */
static size_t split_fields(char *line, char ***fields, size_t *cap)
{
    size_t n = 0;
    for (char *p = line;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (grow(fields, cap, n, sizeof **fields))
            return (size_t)-1;
        (*fields)[n++] = trim(p);
        if (!comma)
            return n;
        p = comma + 1;
    }
}

/* One `# key: value` line: kept when it has the shape, ignored otherwise
 * (a plain comment). */
static int add_meta(csv_table *t, size_t *cap, char *text)
{
    char *colon = strchr(text, ':');
    if (!colon)
        return 0;
    *colon = '\0';
    char *key = trim(text), *value = trim(colon + 1);
    if (!*key || strchr(key, ' '))
        return 0;
    if (grow(&t->meta, cap, t->meta_count, sizeof *t->meta))
        return -1;
    csv_meta *m = &t->meta[t->meta_count];
    m->key = strdup(key);
    m->value = strdup(value);
    if (!m->key || !m->value) {
        free(m->key);
        free(m->value);
        return -1;
    }
    t->meta_count++;
    return 0;
}

void csv_free(csv_table *t)
{
    for (size_t i = 0; i < t->meta_count; i++) {
        free(t->meta[i].key);
        free(t->meta[i].value);
    }
    for (size_t i = 0; i < t->cols; i++)
        free(t->header[i]);
    for (size_t i = 0; i < t->rows * t->cols; i++)
        free(t->cells[i]);
    free(t->meta);
    free(t->header);
    free(t->cells);
    free(t->line);
    free(t->path);
    memset(t, 0, sizeof *t);
}

int csv_read(const char *path, csv_table *t, char *why, size_t why_len)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        say(why, why_len, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL, **fields = NULL;
    size_t buf_cap = 0, fields_cap = 0, meta_cap = 0, cells_cap = 0, line_cap = 0;
    int lineno = 0, rc = -1;
    ssize_t len;
    t->path = strdup(path);
    if (!t->path)
        goto oom;
    while ((len = getline(&buf, &buf_cap, f)) >= 0) {
        lineno++;
        if (memchr(buf, '\0', (size_t)len)) {
            say(why, why_len, "%s:%d: not a CSV (binary data)", path, lineno);
            goto fail;
        }
        char *text = trim(buf);
        if (!*text)
            continue;
        if (*text == '#') {
            if (!t->header && add_meta(t, &meta_cap, text + 1))
                goto oom;
            continue;
        }
        size_t n = split_fields(text, &fields, &fields_cap);
        if (n == (size_t)-1)
            goto oom;
        if (!t->header) {
            if (n < 2) {
                say(why, why_len, "%s:%d: not a CSV (the header row has no commas)", path, lineno);
                goto fail;
            }
            t->header = calloc(n, sizeof *t->header);
            if (!t->header)
                goto oom;
            t->cols = n;
            for (size_t i = 0; i < n; i++) {
                if (!*fields[i] || csv_column(t, fields[i]) >= 0) {
                    say(why, why_len, "%s:%d: header column %zu is %s", path, lineno, i + 1,
                        *fields[i] ? "a duplicate" : "empty");
                    goto fail;
                }
                if (!(t->header[i] = strdup(fields[i])))
                    goto oom;
            }
            continue;
        }
        if (n != t->cols) {
            say(why, why_len, "%s:%d: %zu fields, but the header has %zu", path, lineno, n,
                t->cols);
            goto fail;
        }
        if (grow(&t->cells, &cells_cap, (t->rows + 1) * t->cols - 1, sizeof *t->cells) ||
            grow(&t->line, &line_cap, t->rows, sizeof *t->line))
            goto oom;
        for (size_t i = 0; i < n; i++) {
            char *cell = strdup(fields[i]);
            if (!cell) {
                for (size_t j = 0; j < i; j++)
                    free(t->cells[t->rows * t->cols + j]);
                goto oom;
            }
            t->cells[t->rows * t->cols + i] = cell;
        }
        t->line[t->rows++] = lineno;
    }
    if (ferror(f)) {
        say(why, why_len, "%s: read error: %s", path, strerror(errno));
        goto fail;
    }
    if (!t->header) {
        say(why, why_len, "%s: not an accubench CSV (no header row)", path);
        goto fail;
    }
    rc = 0;
    goto done;
oom:
    say(why, why_len, "%s:%d: out of memory", path, lineno);
fail:
    csv_free(t);
done:
    free(buf);
    free(fields);
    fclose(f);
    return rc;
}

const char *csv_meta_get(const csv_table *t, const char *key)
{
    for (size_t i = 0; i < t->meta_count; i++)
        if (!strcmp(t->meta[i].key, key))
            return t->meta[i].value;
    return NULL;
}

int csv_meta_has_word(const csv_table *t, const char *key, const char *word)
{
    const char *v = csv_meta_get(t, key);
    if (!v)
        return -1;
    size_t len = strlen(word);
    while (*v) {
        size_t n = strcspn(v, " ");
        if (n == len && !strncmp(v, word, len))
            return 1;
        v += n;
        v += strspn(v, " ");
    }
    return 0;
}

int csv_column(const csv_table *t, const char *name)
{
    for (size_t i = 0; i < t->cols; i++)
        if (t->header[i] && !strcmp(t->header[i], name))
            return (int)i;
    return -1;
}

const char *csv_cell(const csv_table *t, size_t row, int col)
{
    return col < 0 ? "" : t->cells[row * t->cols + (size_t)col];
}

/* ------------------------------------------------------- into result rows */

/* Each parse_* returns 0, or -1 when the text is not a value of its type. */
static int parse_TEXT(const char *s, char *dst)
{
    snprintf(dst, RESULT_TEXT_LEN, "%s", s);
    return 0;
}

static int parse_INT(const char *s, int64_t *dst)
{
    char *end;
    *dst = -1;
    if (!*s)
        return 0;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *dst = v;
    return 0;
}

static int parse_REAL(const char *s, double *dst)
{
    char *end;
    *dst = NAN;
    if (!*s)
        return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE && v != 0)
        return -1;
    if (*end)
        return -1;
    *dst = v;
    return 0;
}

/* Storage of a field for parse_<type>: TEXT fields are arrays (decay). */
#define FIELD_ADDR_TEXT(r, name) (r)->name
#define FIELD_ADDR_INT(r, name) &(r)->name
#define FIELD_ADDR_REAL(r, name) &(r)->name

int csv_result_rows(const csv_table *t, const char *const *required,
                    result_row **out, char *why, size_t why_len)
{
    *out = NULL;
    for (const char *const *r = required; r && *r; r++)
        if (csv_column(t, *r) < 0) {
            say(why, why_len, "%s: missing column %s", t->path, *r);
            return -1;
        }
    result_row *rows = calloc(t->rows ? t->rows : 1, sizeof *rows);
    if (!rows) {
        say(why, why_len, "%s: out of memory", t->path);
        return -1;
    }
    for (size_t i = 0; i < t->rows; i++) {
        result_row *r = &rows[i];
        int col;
#define PARSE(name, type, pass, role)                                            \
        col = csv_column(t, #name);                                              \
        if (parse_##type(csv_cell(t, i, col), FIELD_ADDR_##type(r, name))) {     \
            say(why, why_len, "%s:%d: column %s: '%s' is not a number", t->path, \
                t->line[i], #name, csv_cell(t, i, col));                         \
            free(rows);                                                          \
            return -1;                                                           \
        }
        RESULT_COLUMNS(PARSE)
#undef PARSE
    }
    *out = rows;
    return 0;
}

int csv_load(const char *path, const char *const *required, csv_table *t,
             result_row **rows, char *why, size_t why_len)
{
    if (csv_read(path, t, why, why_len))
        return -1;
    if (csv_result_rows(t, required, rows, why, why_len)) {
        csv_free(t);
        return -1;
    }
    return 0;
}

int result_ran(const result_row *r)
{
    return !strcmp(r->status, STATUS_OK) && !isnan(r->step_ms_median);
}
