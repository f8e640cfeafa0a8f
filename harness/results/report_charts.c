/* A chart in the report, or why it was not drawn: scripts/plots.sh draws
 * no placeholder for a chart with nothing to draw and leaves its reason in
 * PREFIX.NAME.why instead. */
#include <stdio.h>
#include <string.h>

#include "report_parts.h"

void report_chart(const report_input *in, doc *d, const char *name, const char *caption)
{
    char path[4200], why[600] = "";
    FILE *f = NULL;
    if (in->chart_prefix) {
        snprintf(path, sizeof path, "%s.%s.why", in->chart_prefix, name);
        f = fopen(path, "r");
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
