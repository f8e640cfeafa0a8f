/* What `accubench report` prints once its files are written (report.h):
 * the A/B/C verdicts and the A/A checks in the report's own sentences
 * (abc_sentences, aa_sentence: no second wording), then one line per A/A
 * pair the rule called apart, last, so that make bench, which prints the
 * report's output at its end, ends on them. */
#include <stdlib.h>

#include "aa_check.h"
#include "report_parts.h"
#include "report_verdict.h"

static void print_sentence(void *f, const char *sentence)
{
    fprintf(f, "  - %s\n", sentence);
}

int report_console(const report_input *in, FILE *f)
{
    size_t ng = 0, nv = 0;
    report_group *g = report_groups(in->rows, in->t->rows, &ng);
    abc_verdict *v = NULL;
    size_t(*pairs)[2] = malloc((in->t->rows ? in->t->rows : 1) * sizeof *pairs);
    if (!g || !pairs ||
        abc_verdicts(in, g, ng, rp_main_mode(in->t, in->rows, in->t->rows), &v, &nv)) {
        report_groups_free(g, ng);
        free(pairs);
        return -1;
    }
    /* the report's headings, without its Markdown */
    char text[2400];
    if (nv)
        fprintf(f, "\nThe A/B/C verdict\n");
    for (size_t i = 0; i < nv; i++) {
        abc_heading(in, &v[i], text, sizeof text);
        fprintf(f, "%s\n", text);
        abc_sentences(in, &v[i], print_sentence, f);
    }
    size_t n = aa_pairs(in, g, ng, pairs);
    if (n)
        fprintf(f, "\nThe A/A check\n");
    for (size_t i = 0; i < n; i++) {
        aa_sentence(&in->rows[pairs[i][0]], &in->rows[pairs[i][1]], text, sizeof text);
        print_sentence(f, text);
    }
    int said = 0;
    for (size_t i = 0; i < n; i++) {
        const csv_row *one = &in->rows[pairs[i][0]], *two = &in->rows[pairs[i][1]];
        if (!aa_failed(one, two))
            continue;
        aa_failed_line(in->rows, in->t->rows, one, two, text, sizeof text);
        fprintf(f, "%s%s\n", said++ ? "" : "\n", text);
    }
    report_groups_free(g, ng);
    free(v);
    free(pairs);
    return 0;
}
