/* The report document and its Markdown writer (see report_doc.h). */
#include "report_doc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void doc_free(doc *d)
{
    for (size_t i = 0; i < d->count; i++) {
        free(d->blocks[i].text);
        free(d->blocks[i].name);
        if (d->blocks[i].tab) {
            table_free(d->blocks[i].tab);
            free(d->blocks[i].tab);
        }
    }
    free(d->blocks);
    memset(d, 0, sizeof *d);
}

static doc_block *doc_append_block(doc *d, doc_kind kind)
{
    if (d->count == d->cap) {
        size_t ncap = d->cap ? 2 * d->cap : 32;
        doc_block *p = realloc(d->blocks, ncap * sizeof *p);
        if (!p) {
            d->failed = 1;
            return NULL;
        }
        d->blocks = p;
        d->cap = ncap;
    }
    doc_block *b = &d->blocks[d->count++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

static void add_text(doc *d, doc_kind kind, int level, const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    doc_block *b = s ? doc_append_block(d, kind) : NULL;
    if (!b) {
        free(s);
        d->failed = 1;
        return;
    }
    b->level = level;
    b->text = s;
}

void doc_heading(doc *d, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_text(d, DOC_HEADING, level, fmt, ap);
    va_end(ap);
}

void doc_para(doc *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_text(d, DOC_PARA, 0, fmt, ap);
    va_end(ap);
}

void doc_bullet(doc *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_text(d, DOC_BULLET, 0, fmt, ap);
    va_end(ap);
}

table *doc_table(doc *d, const char *align, const char *const *header)
{
    table *t = calloc(1, sizeof *t);
    doc_block *b = t ? doc_append_block(d, DOC_TABLE) : NULL;
    if (!b) {
        free(t);
        d->failed = 1;
        return NULL;
    }
    table_init(t, align, header);
    b->tab = t;
    return t;
}

void doc_chart(doc *d, const char *name, const char *caption)
{
    doc_block *b = doc_append_block(d, DOC_CHART);
    if (!b)
        return;
    b->name = strdup(name);
    b->text = strdup(caption);
    if (!b->name || !b->text)
        d->failed = 1;
}

/* A heading's text as Markdown shows it as it is: its text comes from the
 * CSV (a model's or a file's name), so every character that would open
 * markup (emphasis, code, a link or image, a tag or entity, strikethrough,
 * the closing #s) is escaped, and a line break, which would end the
 * heading and start a block of its own, is a space. */
static void md_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '\\': case '`': case '*': case '_': case '[': case ']': case '~': case '#':
            fputc('\\', f);
            fputc(*s, f);
            break;
        case '\n': case '\r': fputc(' ', f); break;
        default: fputc(*s, f);
        }
    }
}

/* A link's destination as Markdown reads it: the file's name
 * percent-encoded, but for the characters a URL path keeps as they are. A
 * space or a parenthesis in the CSV's name ("my run (1).csv") ended the
 * destination early and the image did not resolve. */
static void md_url(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~/", c))
            fputc(c, f);
        else
            fprintf(f, "%%%02X", c);
    }
}

void doc_write_md(const doc *d, FILE *f, const char *chart_base)
{
    for (size_t i = 0; i < d->count; i++) {
        const doc_block *b = &d->blocks[i];
        int prev_bullet = i > 0 && d->blocks[i - 1].kind == DOC_BULLET;
        if (b->kind != DOC_BULLET && prev_bullet)
            fputc('\n', f);
        switch (b->kind) {
        case DOC_HEADING:
            fprintf(f, "%.*s ", b->level, "####");
            md_escape(f, b->text);
            fputs("\n\n", f);
            break;
        case DOC_PARA: /* no HTML from the CSV's text (md_put_text) */
            md_put_text(f, b->text);
            fputs("\n\n", f);
            break;
        case DOC_BULLET:
            fputs("- ", f);
            md_put_text(f, b->text);
            fputc('\n', f);
            break;
        case DOC_TABLE:
            table_write_md_no_html(b->tab, f);
            fputc('\n', f);
            break;
        case DOC_CHART:
            fprintf(f, "![%s](", b->text);
            md_url(f, chart_base);
            fprintf(f, ".%s.png)\n\n", b->name);
            break;
        }
    }
    if (d->count && d->blocks[d->count - 1].kind == DOC_BULLET)
        fputc('\n', f);
}
