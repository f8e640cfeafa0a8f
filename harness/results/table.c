/* Tables of text cells, written as Markdown or HTML (see table.h). */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void table_init(table *t, const char *align, const char *const *header)
{
    memset(t, 0, sizeof *t);
    while (header[t->cols] && t->cols < sizeof t->align - 1)
        t->cols++;
    for (size_t i = 0; i < t->cols; i++)
        t->align[i] = (align && i < strlen(align)) ? align[i] : 'l';
    for (size_t i = 0; i < t->cols; i++)
        table_add(t, header[i]);
}

void table_free(table *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

static void add_owned(table *t, char *cell)
{
    if (!cell) {
        t->failed = 1;
        return;
    }
    if (t->count == t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 64;
        char **p = realloc(t->cells, ncap * sizeof *p);
        if (!p) {
            free(cell);
            t->failed = 1;
            return;
        }
        t->cells = p;
        t->cap = ncap;
    }
    /* A pipe would split a Markdown cell: no field of ours has one, but a
     * note might. */
    for (char *c = cell; *c; c++)
        if (*c == '|' || *c == '\n')
            *c = '/';
    t->cells[t->count++] = cell;
}

void table_add(table *t, const char *text)
{
    add_owned(t, strdup(text ? text : ""));
}

void table_addf(table *t, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    add_owned(t, s);
}

static size_t rows_of(const table *t)
{
    return t->cols ? t->count / t->cols : 0;
}

static const char *cell(const table *t, size_t r, size_t c)
{
    size_t i = r * t->cols + c;
    return i < t->count ? t->cells[i] : "";
}

void table_write_md(const table *t, FILE *f)
{
    size_t rows = rows_of(t) + (t->count % (t->cols ? t->cols : 1) ? 1 : 0);
    size_t width[32] = {0};
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            size_t w = strlen(cell(t, r, c));
            if (w > width[c])
                width[c] = w;
        }
    for (size_t c = 0; c < t->cols; c++)
        if (width[c] < 3)
            width[c] = 3;
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < t->cols; c++) {
            int w = (int)width[c];
            if (t->align[c] == 'r')
                fprintf(f, "| %*s ", w, cell(t, r, c));
            else
                fprintf(f, "| %-*s ", w, cell(t, r, c));
        }
        fputs("|\n", f);
        if (r == 0) {
            for (size_t c = 0; c < t->cols; c++) {
                fputs(t->align[c] == 'r' ? "| " : "| :", f);
                for (size_t i = 0; i < width[c] - 1; i++)
                    fputc('-', f);
                fputs(t->align[c] == 'r' ? ": " : " ", f);
            }
            fputs("|\n", f);
        }
    }
}

const char *fmt_sig(char *buf, size_t len, double v, int sig)
{
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return buf;
    }
    double a = fabs(v);
    if (a != 0 && (a < 1e-3 || a >= 1e12)) {
        snprintf(buf, len, "%.*e", sig > 1 ? sig - 1 : 0, v);
        return buf;
    }
    /* digits after the point so that `sig` digits are significant */
    int before = a >= 1 ? (int)floor(log10(a)) + 1 : 0;
    int after = sig - before;
    if (a > 0 && a < 1)
        after = sig - (int)floor(log10(a)) - 1;
    snprintf(buf, len, "%.*f", after > 0 ? after : 0, v);
    return buf;
}

void html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

void table_write_html(const table *t, FILE *f)
{
    size_t rows = rows_of(t) + (t->count % (t->cols ? t->cols : 1) ? 1 : 0);
    fputs("<table>\n", f);
    for (size_t r = 0; r < rows; r++) {
        fputs(r == 0 ? "<thead><tr>" : "<tr>", f);
        for (size_t c = 0; c < t->cols; c++) {
            const char *tag = r == 0 ? "th" : "td";
            fprintf(f, "<%s%s>", tag, t->align[c] == 'r' ? " class=\"num\"" : "");
            html_escape(f, cell(t, r, c));
            fprintf(f, "</%s>", tag);
        }
        fputs(r == 0 ? "</tr></thead>\n<tbody>\n" : "</tr>\n", f);
    }
    fputs(rows ? "</tbody>\n</table>\n" : "</table>\n", f);
}
