/* The Markdown report's headings carry text from the CSV (a model name, the
 * CSV's own name, a peer's name): every character that Markdown or the
 * HTML inside it would read as markup is escaped, so a heading shows the
 * text as it is, and a name cannot open a link, an image, emphasis, code,
 * a tag, or a new line of its own. Paragraphs, bullets and table cells
 * carry the report's own Markdown beside such text: no tag or entity
 * opens there (a host's `<img onerror=..>` ran in a viewer that passes
 * HTML through), the rest stays Markdown, and a table's columns stay
 * aligned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report_doc.h"
#include "table.h"

/* d's Markdown (d freed). */
static char *md_of(doc *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    doc_write_md(d, f, "run");
    fclose(f);
    doc_free(d);
    return buf;
}

/* The Markdown of a one-heading document. */
static char *heading_md(int level, const char *text)
{
    doc d = {0};
    doc_heading(&d, level, "model %s", text);
    return md_of(&d);
}

static void expect(int level, const char *text, const char *md)
{
    char *got = heading_md(level, text);
    CHECK(got && !strcmp(got, md));
    if (got && strcmp(got, md))
        fprintf(stderr, "  heading of '%s':\n  got      '%s'\n  expected '%s'\n", text, got, md);
    free(got);
}

/* The Markdown of a paragraph, a bullet and a one-row table of `text`. */
static char *body_md(const char *text)
{
    doc d = {0};
    doc_para(&d, "host %s", text);
    doc_bullet(&d, "**%s** ran", text);
    const char *const head[] = {"model", "ms", NULL};
    table *t = doc_table(&d, "lr", head);
    if (t) {
        table_add(t, text);
        table_add(t, "1.5");
    }
    return md_of(&d);
}

static void test_body_has_no_html(void)
{
    char *md = body_md("<img src=x onerror=alert(1)> & co");
    CHECK(md && !strchr(md, '<'));
    CHECK(md && strstr(md, "host &lt;img src=x onerror=alert(1)> &amp; co\n\n"));
    CHECK(md && strstr(md, "- **&lt;img src=x onerror=alert(1)> &amp; co** ran\n"));
    /* the column as wide as its escaped cell: the header padded to it */
    CHECK(md && strstr(md, "| model                                    |  ms |\n"));
    CHECK(md && strstr(md, "| &lt;img src=x onerror=alert(1)> &amp; co | 1.5 |\n"));
    if (md && !strstr(md, "| model                                    |  ms |\n"))
        fprintf(stderr, "%s", md);
    free(md);
}

int main(void)
{
    test_body_has_no_html();
    expect(2, "tiny", "## model tiny\n\n");
    expect(2, "gpt-small (run 1), 2 devices", "## model gpt-small (run 1), 2 devices\n\n");
    expect(3, "*x*_y_", "### model \\*x\\*\\_y\\_\n\n");
    expect(3, "[a](http://e/)", "### model \\[a\\](http://e/)\n\n");
    expect(3, "![i](x.png)", "### model !\\[i\\](x.png)\n\n");
    expect(3, "<script>alert(1)</script>", "### model &lt;script&gt;alert(1)&lt;/script&gt;\n\n");
    expect(3, "a & b `c` ~~d~~ \\e", "### model a &amp; b \\`c\\` \\~\\~d\\~\\~ \\\\e\n\n");
    /* a line break would end the heading and start a block of its own */
    expect(2, "m\n# not a heading\r\n", "## model m \\# not a heading  \n\n");
    /* a closing run of #s would be eaten as the heading's closing sequence */
    expect(2, "m #", "## model m \\#\n\n");
    return check_finish("test_report_md_escape");
}
