#include "noise_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_read.h"
#include "reduction.h"

/* The row of the same series as r (all but the split) with the tightest
 * estimate, or r itself. */
static int tightest(const csv_row *rows, size_t n, size_t i)
{
    size_t best = i;
    for (size_t j = 0; j < n; j++) {
        const csv_row *a = &rows[j], *b = &rows[best];
        if (strcmp(a->model, b->model) || a->effective_batch != b->effective_batch ||
            strcmp(a->mode, b->mode) || strcmp(a->reduction, b->reduction) ||
            strcmp(a->backend, b->backend) || a->devices != b->devices ||
            !(a->grad_noise_scale > 0))
            continue;
        if (a->grad_noise_scale_err / a->grad_noise_scale <
            b->grad_noise_scale_err / b->grad_noise_scale)
            best = j;
    }
    return (int)best;
}

const char *noise_scale_verdict(double effective, double b, double err)
{
    double spread = 2 * (err > 0 ? err : 0);
    if (effective > b + spread)
        return "past it: a larger E buys little per step";
    if (effective < b - spread)
        return "below it: a larger E still buys nearly as much per step";
    return b - spread > 0 ? "within two errors of it: this estimate cannot say which side E is on"
                          : "undetermined: the estimate is within two errors of 0";
}

int noise_plan_main(FILE *out, const char *csv_path)
{
    csv_table t;
    csv_row *rows;
    char why[600];
    if (csv_load(csv_path, NULL, &t, &rows, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    int lines = 0;
    for (size_t i = 0; i < t.rows; i++) {
        const csv_row *r = &rows[i];
        if (!reduction_exact_named(r->reduction) || !(r->grad_noise_scale > 0) ||
            tightest(rows, t.rows, i) != (int)i)
            continue;
        double ratio = (double)r->effective_batch / r->grad_noise_scale;
        fprintf(out, "%s E=%lld: E is %.2g times the measured noise scale (B_simple %.3g +- "
                "%.2g, at %lldx%lld); %s\n", r->model, (long long)r->effective_batch, ratio,
                r->grad_noise_scale, r->grad_noise_scale_err, (long long)r->micro_batch,
                (long long)r->accum_steps,
                noise_scale_verdict((double)r->effective_batch, r->grad_noise_scale,
                                    r->grad_noise_scale_err));
        lines++;
    }
    if (lines)
        fprintf(out, "B_simple (McCandlish et al. 2018) approximates the critical batch only "
                     "under the paper's assumptions, and grows as training goes on.\n");
    else
        fprintf(stderr, "accubench: %s has no noise scale (run with --noise-windows and K > 1)\n",
                csv_path);
    free(rows);
    csv_free(&t);
    return lines ? 0 : 1;
}
