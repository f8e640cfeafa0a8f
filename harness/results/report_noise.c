/* "Is the effective batch past the noise scale?": E against the measured
 * B_simple of each series (docs/noise-scale.md), with the paper's caveat
 * once. */
#include <stdlib.h>

#include "noise_plan.h"
#include "report_parts.h"

/* The group's row that is its noise series' tightest (tightest[], from
 * noise_tightest), or NULL: groups that differ in the sync, the shard or
 * the recompute alone share one series, and it is said once, from the row
 * plan --noise uses. */
static const csv_row *best_row(const report_input *in, const report_group *g,
                               const size_t *tightest)
{
    for (size_t i = 0; i < g->n; i++)
        if (tightest[g->idx[i]] == g->idx[i])
            return &in->rows[g->idx[i]];
    return NULL;
}

void report_noise(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    int heading = 0;
    size_t *tightest = malloc((in->t->rows ? in->t->rows : 1) * sizeof *tightest);
    if (!tightest || noise_tightest(in->rows, in->t->rows, tightest)) {
        free(tightest);
        return;
    }
    for (size_t i = 0; i < ng; i++) {
        const csv_row *r = best_row(in, &g[i], tightest);
        if (!r)
            continue;
        if (!heading++) {
            doc_heading(d, 2, "Is the effective batch past the noise scale?");
            doc_para(d, "The simple noise scale B_simple = tr(Sigma) / |G|^2 (McCandlish et "
                        "al. 2018, appendix A), estimated from the micro-batch and window "
                        "gradient norms at the starting weights (grad_noise_scale, with its "
                        "jackknife error over the windows). It approximates the critical "
                        "batch size only under the paper's assumptions (a well-conditioned, "
                        "locally quadratic loss; plain SGD at its best learning rate), and "
                        "it grows as training goes on: read it as an order of magnitude.");
        }
        double ratio = (double)r->effective_batch / r->grad_noise_scale;
        doc_bullet(d, "%s, E = %lld (%s): E is %s times the measured noise scale "
                   "B_simple = %s +- %s examples; %s", r->model, (long long)r->effective_batch,
                   rp_split(r).s, rp_num(ratio, 2).s, rp_num(r->grad_noise_scale, 3).s,
                   rp_num(r->grad_noise_scale_err, 2).s,
                   noise_scale_verdict((double)r->effective_batch, r->grad_noise_scale,
                                       r->grad_noise_scale_err));
    }
    free(tightest);
}
