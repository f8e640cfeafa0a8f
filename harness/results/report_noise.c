/* "Is the effective batch past the noise scale?": E against the measured
 * B_simple of each series, its rows pooled as plan --noise pools them
 * (noise_plan.h, docs/noise-scale.md), with the paper's caveat once. */
#include <stdlib.h>

#include "noise_plan.h"
#include "noise_pool.h"
#include "report_parts.h"

/* The group's row that heads its noise series (head[], from
 * noise_series_pools), or NULL: groups that differ in the sync, the shard
 * or the recompute alone share one series, and it is said once, as plan
 * --noise says it. */
static const csv_row *head_row(const report_input *in, const report_group *g,
                               const size_t *head)
{
    for (size_t i = 0; i < g->n; i++)
        if (head[g->idx[i]] == g->idx[i])
            return &in->rows[g->idx[i]];
    return NULL;
}

void report_noise(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    int heading = 0;
    size_t nrows = in->t->rows ? in->t->rows : 1;
    size_t *head = malloc(nrows * sizeof *head);
    noise_pool *pool = malloc(nrows * sizeof *pool);
    if (!head || !pool || noise_series_pools(in->rows, in->t->rows, head, pool)) {
        free(head);
        free(pool);
        return;
    }
    for (size_t i = 0; i < ng; i++) {
        const csv_row *r = head_row(in, &g[i], head);
        if (!r)
            continue;
        if (!heading++) {
            doc_heading(d, 2, "Is the effective batch past the noise scale?");
            doc_para(d, "The simple noise scale B_simple = tr(Sigma) / |G|^2 (McCandlish et "
                        "al. 2018, appendix A), estimated from the micro-batch and window "
                        "gradient norms at the starting weights (grad_noise_scale, with its "
                        "jackknife error over the windows; where several splits of one E "
                        "measured it, their estimates pooled, with an error that does not "
                        "shrink with rows that share their windows). It approximates the "
                        "critical batch size only under the paper's assumptions (a "
                        "well-conditioned, locally quadratic loss; plain SGD at its best "
                        "learning rate), and it grows as training goes on: read it as an "
                        "order of magnitude.");
        }
        const noise_pool *p = &pool[r - in->rows];
        double b, err;
        noise_pool_result(p, &b, &err);
        char pooled[80];
        const char *from = noise_pooled_text(p, pooled, sizeof pooled);
        doc_bullet(d, "%s, E = %lld (%s): E is %s times the measured noise scale "
                   "B_simple = %s +- %s examples; %s", r->model, (long long)r->effective_batch,
                   from ? from : rp_split(r).s, rp_num((double)r->effective_batch / b, 2).s,
                   rp_num(b, 3).s, rp_num(err, 2).s,
                   noise_scale_verdict((double)r->effective_batch, b, err, p->windows));
    }
    free(head);
    free(pool);
}
