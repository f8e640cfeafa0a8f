#include "console_table.h"

#include <string.h>

void console_table_header(FILE *f)
{
    fprintf(f, "%-5s %-5s %-11s %-13s %5s %11s %10s %16s %6s %11s %6s %9s  %s\n", "model",
           "dtype", "mode", "reduction", "E", "micro x K", "step ms", "p10..p90", "noise",
           "samples/s", "mfu%", "grad err", "status");
}

void console_table_row(FILE *f, const result_row *r)
{
    char split[32], range[40] = "", last[16] = "";
    if (r->last_micro_batch != r->micro_batch)
        snprintf(last, sizeof last, "+%lld", (long long)r->last_micro_batch);
    snprintf(split, sizeof split, "%lldx%lld%s", (long long)r->micro_batch,
             (long long)r->accum_steps, last);
    fprintf(f, "%-5s %-5s %-11s %-13s %5lld %11s ", r->model, r->dtype, r->mode, r->reduction,
           (long long)r->effective_batch, split);
    if (strcmp(r->status, STATUS_OK) != 0) {
        fprintf(f, "%10s %16s %6s %11s %6s %9s  %s: %s\n", "-", "", "", "", "", "", r->status,
               r->note);
    } else {
        snprintf(range, sizeof range, "%.3f..%.3f", r->step_ms_p10, r->step_ms_p90);
        fprintf(f, "%10.3f %16s %5.1f%% %11.1f %6.1f %9.2e  %s%s%s\n", r->step_ms_median, range,
               r->step_noise_pct, r->samples_per_s, r->mfu_pct, r->grad_rel_err, r->status,
               r->note[0] ? ": " : "", r->note);
    }
    fflush(f);
}

