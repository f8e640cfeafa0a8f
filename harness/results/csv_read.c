/* Reading back the CSV that `accubench run` writes (see csv_read.h). */
#include "csv_read.h"
#include "parse.h"
#include "plural.h"
#include "text_line.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const csv_required_columns[] = {
    "backend", "device", "model", "dtype", "mode", "reduction",
    "effective_batch", "micro_batch", "accum_steps", "status", "step_ms_median", NULL,
};

static void say_read_error(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

void csv_say_field_count(char *why, size_t why_len, const char *path, int line, size_t fields,
                         size_t header)
{
    say_read_error(why, why_len, "%s:%d: %zu %s, but the header has %zu", path, line, fields,
                   plural((long long)fields, "field", "fields"), header);
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
        (*fields)[n++] = trim_blanks(p);
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
    char *key = trim_blanks(text), *value = trim_blanks(colon + 1);
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
    free(t->meta);
    free(t->header);
    free(t->text);
    free(t->row_at);
    free(t->line);
    free(t->path);
    memset(t, 0, sizeof *t);
}

/* What spreadsheets put before the first byte of a UTF-8 file. */
static const char UTF8_BOM[] = "\xEF\xBB\xBF";

/* The first field equal to an earlier one, -1 when none, -2 out of
 * memory: one pass over a hash table, so a header of a million columns
 * takes as long as reading it (a scan per column would be quadratic). */
static long first_duplicate(char *const *fields, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof *slot); /* field index + 1; 0: empty */
    if (!slot)
        return -2;
    long dup = -1;
    for (size_t i = 0; i < n && dup < 0; i++) {
        size_t h = 14695981039346656037ull;
        for (const unsigned char *c = (const unsigned char *)fields[i]; *c; c++)
            h = (h ^ *c) * 1099511628211ull;
        for (size_t k = h & (cap - 1);; k = (k + 1) & (cap - 1)) {
            if (!slot[k]) {
                slot[k] = i + 1;
                break;
            }
            if (!strcmp(fields[slot[k] - 1], fields[i])) {
                dup = (long)i;
                break;
            }
        }
    }
    free(slot);
    return dup;
}

/* A pipe is `report <(cat run.csv)`; a FIFO opened blocking would wait
 * for a writer for ever. */
FILE *csv_open_input(const char *path, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        say_read_error(why, why_len, "cannot open %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        say_read_error(why, why_len, "%s is %s, not a CSV file", path,
                       S_ISDIR(st.st_mode) ? "a folder" : "a device or socket");
        close(fd);
        return NULL;
    }
    /* Reads block again: a pipe's writer may be slower than this reader. */
    FILE *f = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        say_read_error(why, why_len, "cannot open %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

/* What csv_read carries from line to line: the table it fills, where it
 * is in the file (for the error lines), and the capacities its arrays
 * have grown to. */
typedef struct csv_reader {
    csv_table *t;
    const char *path;
    int lineno;
    char **fields; /* the current line's, pointing into its text */
    size_t fields_cap, meta_cap, text_cap, text_len, row_cap, line_cap;
} csv_reader;

/* What one line did: the read goes on, stops with the reason in why, or
 * stops for want of memory (csv_read says so, with the line). */
enum { LINE_OK = 0, LINE_BAD = -1, LINE_OOM = -2 };

/* The header row (r->fields, n of them): at least two columns, none
 * empty and none twice, since cells are looked up by column name. */
static int take_header(csv_reader *r, size_t n, char *why, size_t why_len)
{
    csv_table *t = r->t;
    char **fields = r->fields;
    if (n < 2) {
        say_read_error(why, why_len, "%s:%d: not a CSV (the header row has no commas)",
                       r->path, r->lineno);
        return LINE_BAD;
    }
    t->header = calloc(n, sizeof *t->header);
    if (!t->header)
        return LINE_OOM;
    t->cols = n;
    long dup = first_duplicate(fields, n);
    if (dup == -2)
        return LINE_OOM;
    for (size_t i = 0; i < n; i++) {
        if (!*fields[i] || (long)i == dup) {
            say_read_error(why, why_len, "%s:%d: header column %zu is %s", r->path, r->lineno,
                           i + 1, *fields[i] ? "a duplicate" : "empty");
            return LINE_BAD;
        }
        if (!(t->header[i] = strdup(fields[i])))
            return LINE_OOM;
    }
    return LINE_OK;
}

/* One data row (r->fields, n of them), as many fields as the header has:
 * its cells are appended to t->text, each ending in '\0', with where the
 * row starts and its line in the file (for later error lines). */
static int read_row_cells(csv_reader *r, size_t n, char *why, size_t why_len)
{
    csv_table *t = r->t;
    char **fields = r->fields;
    if (n != t->cols) {
        csv_say_field_count(why, why_len, r->path, r->lineno, n, t->cols);
        return LINE_BAD;
    }
    if (grow(&t->row_at, &r->row_cap, t->rows, sizeof *t->row_at) ||
        grow(&t->line, &r->line_cap, t->rows, sizeof *t->line))
        return LINE_OOM;
    size_t need = 0;
    for (size_t i = 0; i < n; i++)
        need += strlen(fields[i]) + 1;
    if (grow(&t->text, &r->text_cap, r->text_len + need - 1, 1))
        return LINE_OOM;
    t->row_at[t->rows] = r->text_len;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(fields[i]) + 1;
        memcpy(t->text + r->text_len, fields[i], l);
        r->text_len += l;
    }
    t->line[t->rows++] = r->lineno;
    return LINE_OK;
}

/* One line of the file (in buf, changed in place; binary data never gets
 * here): blank lines skipped, `#` lines before the header kept as
 * metadata, then the header and the rows. */
static int take_line(csv_reader *r, char *buf, char *why, size_t why_len)
{
    char *text = buf;
    if (r->lineno == 1 && !strncmp(text, UTF8_BOM, 3))
        text += 3;
    text = trim_blanks(text);
    if (!*text)
        return LINE_OK;
    if (*text == '#')
        return !r->t->header && add_meta(r->t, &r->meta_cap, text + 1) ? LINE_OOM : LINE_OK;
    size_t n = split_fields(text, &r->fields, &r->fields_cap);
    if (n == (size_t)-1)
        return LINE_OOM;
    return r->t->header ? read_row_cells(r, n, why, why_len) : take_header(r, n, why, why_len);
}

int csv_read(const char *path, csv_table *t, char *why, size_t why_len)
{
    memset(t, 0, sizeof *t);
    FILE *f = csv_open_input(path, why, why_len);
    if (!f)
        return -1;
    csv_reader r = {.t = t, .path = path};
    char *buf = NULL;
    size_t buf_cap = 0;
    int rc = -1;
    ssize_t len;
    t->path = strdup(path);
    if (!t->path)
        goto oom;
    for (;;) {
        r.lineno++;
        len = text_line_read(f, &buf, &buf_cap, CSV_MAX_LINE);
        if (len == TEXT_LINE_END)
            break;
        if (len == TEXT_LINE_OOM)
            goto oom;
        if (len == TEXT_LINE_NUL) {
            say_read_error(why, why_len, "%s:%d: not a CSV (binary data)", path, r.lineno);
            goto fail;
        }
        if (len == TEXT_LINE_LONG) {
            say_read_error(why, why_len, "%s:%d: a line of over %d MiB (not a CSV)", path,
                           r.lineno, CSV_MAX_LINE >> 20);
            goto fail;
        }
        /* accubench writes every line whole, its end included (the file is
         * renamed into place): a row without one is the file's last, cut
         * short by a copy or a disk that filled, and its last field with it */
        size_t rows_before = t->rows;
        int unended = len > 0 && buf[len - 1] != '\n';
        int line_rc = take_line(&r, buf, why, why_len);
        if (line_rc == LINE_OOM)
            goto oom;
        if (line_rc == LINE_BAD)
            goto fail;
        if (unended && t->rows > rows_before) {
            say_read_error(why, why_len, "%s:%d: the last row has no line end: the file was "
                           "cut short", path, r.lineno);
            goto fail;
        }
    }
    if (ferror(f)) {
        say_read_error(why, why_len, "%s: read error: %s", path, strerror(errno));
        goto fail;
    }
    if (!t->header) {
        say_read_error(why, why_len, "%s: not an accubench CSV (no header row)", path);
        goto fail;
    }
    rc = 0;
    goto done;
oom:
    say_read_error(why, why_len, "%s:%d: out of memory", path, r.lineno);
fail:
    csv_free(t);
done:
    free(buf);
    free(r.fields);
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
    if (col < 0)
        return "";
    const char *p = t->text + t->row_at[row];
    for (int c = 0; c < col; c++)
        p += strlen(p) + 1;
    return p;
}

/* ------------------------------------------------------- into result rows */

const size_t csv_row_offset[] = {
#define OFFSET(name, type, pass, role) offsetof(csv_row, name),
    RESULT_COLUMNS(OFFSET)
#undef OFFSET
};

int result_ran(const csv_row *r)
{
    return !strcmp(r->status, STATUS_OK) && !isnan(r->step_ms_median);
}

int result_ran_once(const csv_row *r)
{
    return result_ran(r) && !RESULT_SECOND_ARM(r) && !r->repeat;
}

int result_measured(const csv_row *r)
{
    return result_ran(r) && !RESULT_SECOND_ARM(r);
}
