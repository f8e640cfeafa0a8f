#include "row_compare.h"

timed_figures row_figures(const csv_row *r)
{
    return (timed_figures){.comparison = r->comparison, .rounds = r->rounds,
                           .samples = r->samples, .round_ms = r->round_ms, .median = r->step_ms_median,
                           .ci_lo = r->step_ms_ci_lo, .ci_hi = r->step_ms_ci_hi,
                           .p10 = r->step_ms_p10, .p90 = r->step_ms_p90,
                           .noise_pct = r->step_noise_pct};
}

paired_ratio row_ratio(const csv_row *a, const csv_row *b)
{
    timed_figures fa = row_figures(a), fb = row_figures(b);
    return figures_ratio(&fa, &fb);
}

paired_verdict row_verdict(const csv_row *a, const csv_row *b)
{
    paired_ratio p = row_ratio(a, b);
    return paired_judge(&p, PAIRED_THRESHOLD);
}

void row_ratio_text(const csv_row *a, const csv_row *b, char *out, size_t len)
{
    paired_ratio p = row_ratio(a, b);
    paired_ratio_text(&p, out, len);
}
