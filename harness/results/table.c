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
    free(t->at);
    free(t->text);
    memset(t, 0, sizeof *t);
}

/* Appends `len` bytes of `text` as the next cell. */
static void add_cell(table *t, const char *text, size_t len)
{
    if (t->failed)
        return;
    if (t->count == t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 64;
        size_t *p = realloc(t->at, ncap * sizeof *p);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->at = p;
        t->cap = ncap;
    }
    if (t->text_len + len + 1 > t->text_cap) {
        size_t ncap = t->text_cap ? 2 * t->text_cap : 1024;
        while (ncap < t->text_len + len + 1)
            ncap *= 2;
        char *p = realloc(t->text, ncap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->text = p;
        t->text_cap = ncap;
    }
    char *cell = t->text + t->text_len;
    memcpy(cell, text, len);
    cell[len] = '\0';
    /* A pipe would split a Markdown cell: no field of ours has one, but a
     * note might. */
    for (char *c = cell; *c; c++)
        if (*c == '|' || *c == '\n')
            *c = '/';
    t->at[t->count++] = t->text_len;
    t->text_len += len + 1;
}

void table_add(table *t, const char *text)
{
    text = text ? text : "";
    add_cell(t, text, strlen(text));
}

void table_addf(table *t, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = 1;
    } else if ((size_t)n < sizeof small) {
        add_cell(t, small, (size_t)n);
    } else {
        char *s = NULL;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
            s = NULL;
        va_end(ap);
        if (s)
            add_cell(t, s, strlen(s));
        else
            t->failed = 1;
        free(s);
    }
}

static size_t rows_of(const table *t)
{
    return t->cols ? t->count / t->cols : 0;
}

static const char *cell(const table *t, size_t r, size_t c)
{
    size_t i = r * t->cols + c;
    return i < t->count ? t->text + t->at[i] : "";
}

/* n spaces (a cell's padding to its column's width). */
static void pad(FILE *f, size_t n)
{
    static const char spaces[] = "                                ";
    for (; n >= sizeof spaces - 1; n -= sizeof spaces - 1)
        fputs(spaces, f);
    fwrite(spaces, 1, n, f);
}

void md_put_text(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
}

size_t md_text_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '<' ? 4 : *s == '&' ? 5 : 1;
    return n;
}

static void write_md(const table *t, FILE *f, int no_html)
{
    size_t rows = rows_of(t) + (t->count % (t->cols ? t->cols : 1) ? 1 : 0);
    size_t width[32] = {0};
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < t->cols; c++) {
            const char *text = cell(t, r, c);
            size_t w = no_html ? md_text_len(text) : strlen(text);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t c = 0; c < t->cols; c++)
        if (width[c] < 3)
            width[c] = 3;
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < t->cols; c++) {
            const char *text = cell(t, r, c);
            size_t len = no_html ? md_text_len(text) : strlen(text);
            fputs("| ", f);
            if (t->align[c] == 'r')
                pad(f, width[c] - len);
            if (no_html)
                md_put_text(f, text);
            else
                fputs(text, f);
            if (t->align[c] != 'r')
                pad(f, width[c] - len);
            fputc(' ', f);
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

void table_write_md(const table *t, FILE *f) { write_md(t, f, 0); }
void table_write_md_no_html(const table *t, FILE *f) { write_md(t, f, 1); }

const char *fmt_sig(char *buf, size_t len, double v, int sig)
{
    if (!isfinite(v)) { /* unmeasured, or past a double (an edited row) */
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

const char *fmt_pct(char *buf, size_t len, double pct)
{
    if (!isfinite(pct))
        snprintf(buf, len, "-");
    else if (fabs(pct) < 1e6)
        snprintf(buf, len, "%.*f", pct < 99.95 ? 1 : 0, pct);
    else
        snprintf(buf, len, "%.3g", pct);
    return buf;
}

void html_escape(FILE *f, const char *s)
{
    for (;;) {
        size_t plain = strcspn(s, "&<>\""); /* written in one piece */
        fwrite(s, 1, plain, f);
        s += plain;
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: return; /* the end */
        }
        s++;
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
            fputc('<', f);
            fputs(tag, f);
            fputs(t->align[c] == 'r' ? " class=\"num\">" : ">", f);
            html_escape(f, cell(t, r, c));
            fputs("</", f);
            fputs(tag, f);
            fputc('>', f);
        }
        fputs(r == 0 ? "</tr></thead>\n<tbody>\n" : "</tr>\n", f);
    }
    fputs(rows ? "</tbody>\n</table>\n" : "</table>\n", f);
}
