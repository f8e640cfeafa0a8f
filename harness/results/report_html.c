/* The report as one self-contained HTML page: styles inline, charts inlined
 * as SVG (see report_doc.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report_doc.h"

static const char style[] =
    "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;"
    "color:#222;line-height:1.45}\n"
    "h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ddd}h3{margin-top:1.4em}\n"
    /* a figure never breaks inside ("1.19x [1.07..1.32]" read as two
     * numbers, 9.7e-08 as 9.7e- and 08): a table wider than the page
     * scrolls sideways instead of squeezing its cells */
    "table{border-collapse:collapse;margin:0.6em 0 1.2em;font-size:0.92em;"
    "display:block;max-width:100%;overflow-x:auto}\n"
    "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left}\n"
    "th{background:#f3f3f3}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.num{white-space:nowrap}\n"
    "figure{margin:1em 0 2em}figcaption{color:#555;font-size:0.92em}\n"
    "figure svg{width:100%;height:auto;border:1px solid #eee}\n"
    ".missing{color:#a00000}\n";

/* Reads a whole file; NULL when it cannot. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[8192];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* Whether the element text [p, end) is what a gnuplot chart holds: no
 * script, no event attribute (on...=), no embedded document, no link out
 * of the file. An SVG beside the CSV may be anyone's: one that is not a
 * plain chart is never copied into the page. */
static int svg_is_plain(const char *p, const char *end)
{
    static const char *const banned[] = {"<script", "<foreignobject", "<iframe", "<embed",
                                         "<object", "javascript:", "<!entity", "<?xml-stylesheet"};
    for (const char *c = p; c < end; c++) {
        for (size_t i = 0; i < sizeof banned / sizeof *banned; i++)
            if ((size_t)(end - c) >= strlen(banned[i]) &&
                strncasecmp(c, banned[i], strlen(banned[i])) == 0)
                return 0;
        /* an attribute named on...: whitespace, "on", letters, "=" */
        if (isspace((unsigned char)*c) && end - c > 3 && strncasecmp(c + 1, "on", 2) == 0) {
            const char *a = c + 3;
            while (a < end && isalpha((unsigned char)*a))
                a++;
            while (a < end && isspace((unsigned char)*a))
                a++;
            if (a < end && *a == '=')
                return 0;
        }
        if (end - c > 6 && strncasecmp(c, "href=", 5) == 0 && c[6] != '#')
            return 0;
    }
    return 1;
}

/* Writes the <svg> element of an SVG file, dropping the XML declaration,
 * and gives its ids (and the references to them) a prefix: several gnuplot
 * charts on one page would otherwise share ids like gpPt1. Returns 0, or -1
 * when the file is missing or is not an SVG. */
static int inline_svg(FILE *out, const char *path, const char *prefix)
{
    char *svg = slurp(path);
    char *p = svg ? strstr(svg, "<svg") : NULL;
    char *close = p ? strstr(p, "</svg>") : NULL;
    if (!close || !svg_is_plain(p, close)) {
        free(svg);
        return -1;
    }
    close[strlen("</svg>")] = '\0'; /* nothing after the element */
    static const char *const refs[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    while (*p) {
        const char *hit = NULL;
        size_t hit_len = 0;
        for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) {
            size_t l = strlen(refs[i]);
            if (!strncmp(p, refs[i], l)) {
                hit = refs[i];
                hit_len = l;
                break;
            }
        }
        if (hit) {
            fwrite(p, 1, hit_len, out);
            fputs(prefix, out);
            p += hit_len;
        } else {
            fputc(*p++, out);
        }
    }
    fputc('\n', out);
    free(svg);
    return 0;
}

void doc_write_html(const doc *d, FILE *f, const char *title, const char *chart_prefix)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    html_escape(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
    for (size_t i = 0; i < d->count; i++) {
        const doc_block *b = &d->blocks[i];
        int prev_bullet = i > 0 && d->blocks[i - 1].kind == DOC_BULLET;
        if (b->kind != DOC_BULLET && prev_bullet)
            fputs("</ul>\n", f);
        switch (b->kind) {
        case DOC_HEADING:
            fprintf(f, "<h%d>", b->level);
            html_escape(f, b->text);
            fprintf(f, "</h%d>\n", b->level);
            break;
        case DOC_PARA:
            fputs("<p>", f);
            html_escape(f, b->text);
            fputs("</p>\n", f);
            break;
        case DOC_BULLET:
            fputs(prev_bullet ? "<li>" : "<ul>\n<li>", f);
            html_escape(f, b->text);
            fputs("</li>\n", f);
            break;
        case DOC_TABLE:
            table_write_html(b->tab, f);
            break;
        case DOC_CHART: {
            char path[4096], prefix[64];
            snprintf(path, sizeof path, "%s.%s.svg", chart_prefix, b->name);
            snprintf(prefix, sizeof prefix, "c%zu_", i);
            fputs("<figure>\n", f);
            if (inline_svg(f, path, prefix)) {
                fputs("<p class=\"missing\">chart not rendered: ", f);
                html_escape(f, path);
                fputs(" is missing or not a plain chart</p>\n", f);
            }
            fputs("<figcaption>", f);
            html_escape(f, b->text);
            fputs("</figcaption>\n</figure>\n", f);
            break;
        }
        }
    }
    if (d->count && d->blocks[d->count - 1].kind == DOC_BULLET)
        fputs("</ul>\n", f);
    fputs("</body>\n</html>\n", f);
}
