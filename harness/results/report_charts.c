/* A chart in the report, or why it was not drawn: scripts/plots.sh draws
 * no placeholder for a chart with nothing to draw and leaves its reason in
 * PREFIX.NAME.why instead; a chart it failed to draw (or that --no-charts
 * left undrawn) has neither, and is not linked. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report_parts.h"

/* Whether PREFIX.NAME.EXT is there to link or inline. */
static int chart_file(const char *prefix, const char *name, const char *ext)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.%s.%s", prefix, name, ext);
    return access(path, R_OK) == 0;
}

void report_chart(const report_input *in, doc *d, const char *name, const char *caption)
{
    char path[4200], why[600] = "";
    FILE *f = NULL;
    if (in->chart_prefix) {
        snprintf(path, sizeof path, "%s.%s.why", in->chart_prefix, name);
        f = fopen(path, "r");
    }
    if (!f && in->chart_prefix && !chart_file(in->chart_prefix, name, "png") &&
        !chart_file(in->chart_prefix, name, "svg")) {
        doc_para(d, "Not drawn, %s: no chart file beside the CSV (%s).", caption,
                 in->charts_note ? "see the note under Charts"
                                 : "scripts/plots.sh did not draw it: make plots says why");
        return;
    }
    if (!f) {
        doc_chart(d, name, caption);
        return;
    }
    size_t n = fread(why, 1, sizeof why - 1, f);
    fclose(f);
    why[n] = '\0';
    for (char *p = why; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    while (n && why[n - 1] == ' ')
        why[--n] = '\0';
    doc_para(d, "Not drawn, %s: %s.", caption, n ? why : "nothing to draw");
}
