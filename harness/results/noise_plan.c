#include "noise_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_read.h"
#include "reduction.h"
#include "row_index.h"

/* A row whose noise scale a report may use. */
static int noise_usable(const csv_row *r)
{
    return reduction_exact_named(r->reduction) && !strcmp(r->status, "ok") &&
           r->grad_noise_scale > 0 && isfinite(r->grad_noise_scale_err);
}

/* The columns of a noise series, as a row_index key. */
static row_key noise_series_key(void)
{
    static const char *const columns[] = {"model", "effective_batch", "mode", "reduction",
                                          "backend", "devices"};
    row_key k = {{0}};
    for (size_t c = 0; c < sizeof columns / sizeof *columns; c++) {
        row_key one = row_key_column(columns[c]);
        for (size_t j = 0; j < ROW_KEY_COLUMNS; j++)
            k.use[j] |= one.use[j];
    }
    return k;
}

static double relative_err(const csv_row *r)
{
    return r->grad_noise_scale_err / r->grad_noise_scale;
}

int noise_tightest(const csv_row *rows, size_t n, size_t *out)
{
    row_key key = noise_series_key();
    row_index ix;
    size_t *best = malloc((n ? n : 1) * sizeof *best);
    if (!best || row_index_init(&ix, &key, rows, n)) {
        free(best);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        best[i] = n;
    for (size_t i = 0; i < n; i++) {
        if (!noise_usable(&rows[i]))
            continue;
        size_t head = row_index_add(&ix, i);
        /* strictly tighter: of equal estimates the first in the file */
        if (best[head] == n || relative_err(&rows[i]) < relative_err(&rows[best[head]]))
            best[head] = i;
    }
    for (size_t i = 0; i < n; i++) {
        size_t head = row_index_find(&ix, &rows[i]);
        out[i] = head == ROW_NONE ? n : best[head];
    }
    row_index_free(&ix);
    free(best);
    return 0;
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
    if (csv_load(csv_path, csv_required_columns, &t, &rows, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    int lines = 0;
    size_t *tightest = malloc((t.rows ? t.rows : 1) * sizeof *tightest);
    if (!tightest || noise_tightest(rows, t.rows, tightest)) {
        fprintf(stderr, "accubench: out of memory\n");
        free(tightest);
        free(rows);
        csv_free(&t);
        return 2;
    }
    for (size_t i = 0; i < t.rows; i++) {
        const csv_row *r = &rows[i];
        if (tightest[i] != i)
            continue;
        double ratio = (double)r->effective_batch / r->grad_noise_scale;
        fprintf(out, "%s E=%lld: E is %.2g times the measured noise scale (B_simple %.3g +- "
                "%.2g examples, at %lldx%lld); %s\n", r->model, (long long)r->effective_batch, ratio,
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
    free(tightest);
    free(rows);
    csv_free(&t);
    return lines ? 0 : 1;
}
