/* "Is the effective batch past the noise scale?": E against the measured
 * B_simple of each series (docs/noise-scale.md), with the paper's caveat
 * once. */
#include <math.h>
#include <string.h>

#include "noise_plan.h"
#include "reduction.h"
#include "report_parts.h"

/* The group's row with the tightest noise scale, or NULL. */
static const csv_row *best_row(const report_input *in, const report_group *g)
{
    const csv_row *best = NULL;
    for (size_t i = 0; i < g->n; i++) {
        const csv_row *r = &in->rows[g->idx[i]];
        if (!reduction_exact_named(r->reduction) || strcmp(r->status, "ok") ||
            !(r->grad_noise_scale > 0) || !isfinite(r->grad_noise_scale_err))
            continue;
        if (!best || r->grad_noise_scale_err / r->grad_noise_scale <
                         best->grad_noise_scale_err / best->grad_noise_scale)
            best = r;
    }
    return best;
}

void report_noise(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    int heading = 0;
    for (size_t i = 0; i < ng; i++) {
        const csv_row *r = best_row(in, &g[i]);
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
                   "B_simple = %s +- %s; %s", r->model, (long long)r->effective_batch,
                   rp_split(r).s, rp_num(ratio, 2).s, rp_num(r->grad_noise_scale, 3).s,
                   rp_num(r->grad_noise_scale_err, 2).s,
                   noise_scale_verdict((double)r->effective_batch, r->grad_noise_scale,
                                       r->grad_noise_scale_err));
    }
}
