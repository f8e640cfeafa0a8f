/* "The A/A check": each config a run timed twice (`--micro 16,16`: arms 1
 * and 2 of one comparison), arm 2 over arm 1 by the rule, and whether the
 * rule held. A config against itself must never come out faster or
 * slower, so the pair is the run's own evidence that the rounds favour
 * neither arm on this machine (an order or a warm cache that would). The
 * interval's level it cannot show: the threshold, more than the interval,
 * keeps a pair from being called apart; build/rule-check shows the level
 * (docs/measuring.md, "The A/A check"). */
#include <stdlib.h>
#include <string.h>

#include "aa_check.h"
#include "paired.h"
#include "report_parts.h"
#include "row_compare.h"
#include "row_index.h"

static int timed(const csv_row *r)
{
    return !strcmp(r->status, "ok") && r->step_ms_median > 0;
}

/* Arm 1 of the config whose arm 2 is `two`, timed beside it in its own
 * run: the row of the same comparison id where they were timed in rounds
 * (an id no other run shares), else the last arm 1 of the config written
 * before it. It may be a rerun's row (--append): the pair is that run's
 * own evidence, and an earlier run's arm 1 was timed under other rounds.
 * NULL if that arm did not run. */
static const csv_row *own_arm_one(const report_input *in, const csv_row *two,
                                  const row_key *but_arm)
{
    const csv_row *found = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *one = &in->rows[i];
        if (one->arm != 1 || strcmp(one->comparison, two->comparison) ||
            !row_key_equal(but_arm, one, two))
            continue;
        if (*two->comparison || one < two)
            found = one;
        if (*two->comparison)
            break;
    }
    return found && timed(found) ? found : NULL;
}

size_t aa_pairs(const report_input *in, const report_group *g, size_t ng, size_t (*pairs)[2])
{
    row_key but_arm = row_key_config_but("arm");
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        for (size_t i = 0; i < g[k].n; i++) {
            const csv_row *two = &in->rows[g[k].idx[i]];
            /* a config run again (--append) is checked from its first run */
            const csv_row *one = two->arm == 2 && !two->repeat && timed(two)
                                     ? own_arm_one(in, two, &but_arm)
                                     : NULL;
            if (!one)
                continue;
            pairs[n][0] = (size_t)(one - in->rows);
            pairs[n][1] = g[k].idx[i];
            n++;
        }
    return n;
}

int aa_group_held(const report_input *in, const report_group *group, size_t failed[2])
{
    size_t(*pairs)[2] = malloc((group->n ? group->n : 1) * sizeof *pairs);
    if (!pairs)
        return -2;
    size_t n = aa_pairs(in, group, 1, pairs);
    int held = -1;
    for (size_t i = 0; i < n && held; i++) {
        const csv_row *one = &in->rows[pairs[i][0]], *two = &in->rows[pairs[i][1]];
        if (row_verdict(one, two) == PAIRED_UNKNOWN)
            continue;
        held = !aa_failed(one, two);
        failed[0] = pairs[i][0];
        failed[1] = pairs[i][1];
    }
    free(pairs);
    return held;
}

void report_aa(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    size_t(*pairs)[2] = malloc((in->t->rows ? in->t->rows : 1) * sizeof *pairs);
    if (!pairs) {
        d->failed = 1;
        return;
    }
    size_t n = aa_pairs(in, g, ng, pairs);
    if (n) {
        doc_heading(d, 2, "The A/A check");
        doc_para(d, "A config timed twice in the same interleaved rounds: the rule must never "
                    "call it faster or slower than itself.");
    }
    for (size_t i = 0; i < n; i++) {
        const csv_row *one = &in->rows[pairs[i][0]], *two = &in->rows[pairs[i][1]];
        char text[2400];
        aa_sentence(one, two, text, sizeof text);
        doc_bullet(d, "%s", text);
        /* a failed pair says what it means for the verdicts and how to
         * check them again, in the line the console ends on */
        if (aa_failed(one, two)) {
            aa_failed_line(in->rows, in->t->rows, one, two, text, sizeof text);
            doc_bullet(d, "%s", text);
        }
    }
    free(pairs);
}
