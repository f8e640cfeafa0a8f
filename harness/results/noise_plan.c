#include "noise_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_load.h"
#include "csv_read.h"
#include "noise_pool.h"
#include "reduction.h"
#include "row_index.h"
#include "stats.h"

/* A row whose noise scale a report may use: ran ok, an exact reduction,
 * an estimate the pool takes, a config's first arm of its first row (its
 * second arm copies the estimate, and a rerun of the same seed reads the
 * same windows again: taken twice, it would weigh double against the
 * other splits; so does the split in another dtype, recompute, shard or
 * sync: noise_series_pools takes each split once). The report's noise
 * section pools these rows too; its time-to-target table pools only its
 * curve's series (one dtype, shard, recompute), whose rows are among them. */
static int noise_usable(const csv_row *r)
{
    return reduction_exact_named(r->reduction) && !strcmp(r->status, "ok") &&
           !RESULT_SECOND_ARM(r) && !r->repeat &&
           noise_pool_takes(r->grad_noise_scale, r->grad_noise_scale_err);
}

/* The columns of a noise series, as a row_index key; with `split`, the
 * micro-batch too: one split of the series. */
static row_key noise_series_key(int split)
{
    static const char *const columns[] = {"model", "effective_batch", "mode", "reduction",
                                          "backend", "devices", "micro_batch"};
    size_t n = sizeof columns / sizeof *columns - !split;
    row_key k = {{0}};
    for (size_t c = 0; c < n; c++) {
        row_key one = row_key_column(columns[c]);
        for (size_t j = 0; j < ROW_KEY_COLUMNS; j++)
            k.use[j] |= one.use[j];
    }
    return k;
}

int noise_series_pools(const csv_row *rows, size_t n, size_t *head, noise_pool *pool)
{
    row_key key = noise_series_key(0), split_key = noise_series_key(1);
    row_index ix, splits;
    if (row_index_init(&ix, &key, rows, n))
        return -1;
    if (row_index_init(&splits, &split_key, rows, n)) {
        row_index_free(&ix);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        pool[i] = (noise_pool){0};
    for (size_t i = 0; i < n; i++) {
        /* a split taken once: in another dtype, recompute, shard or sync
         * it read the very same windows, and would weigh double */
        if (!noise_usable(&rows[i]) || row_index_add(&splits, i) != i)
            continue;
        size_t h = row_index_add(&ix, i);
        noise_pool_add(&pool[h], rows[i].grad_noise_scale, rows[i].grad_noise_scale_err,
                       (long)rows[i].noise_windows);
    }
    for (size_t i = 0; i < n; i++) {
        size_t h = row_index_find(&ix, &rows[i]);
        head[i] = h == ROW_NONE ? n : h;
    }
    row_index_free(&splits);
    row_index_free(&ix);
    return 0;
}

const char *noise_pooled_text(const noise_pool *p, char *out, size_t len)
{
    if (p->n < 2)
        return NULL;
    snprintf(out, len, "pooled from %zu rows", p->n);
    return out;
}

double noise_interval_errors(long windows)
{
    return windows >= 2 ? stats_t_975((int)(windows < 100000 ? windows - 1 : 99999)) : 2.0;
}

const char *noise_scale_verdict(double effective, double b, double err, long windows)
{
    double spread = noise_interval_errors(windows) * (err > 0 ? err : 0);
    if (effective > b + spread)
        return "past it: a larger E buys little per step";
    if (effective < b - spread)
        return "below it: a larger E still buys nearly as much per step";
    return b - spread > 0 ? "within its 95% interval: this estimate cannot say which side E is on"
                          : "undetermined: its 95% interval reaches 0";
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
    char again[4400];
    row_index_repeats_text(rows, t.rows, csv_path, again, sizeof again);
    if (*again)
        fprintf(out, "%s\n", again);
    int lines = 0;
    size_t *head = malloc((t.rows ? t.rows : 1) * sizeof *head);
    noise_pool *pool = malloc((t.rows ? t.rows : 1) * sizeof *pool);
    if (!head || !pool || noise_series_pools(rows, t.rows, head, pool)) {
        fprintf(stderr, "accubench: out of memory\n");
        free(head);
        free(pool);
        free(rows);
        csv_free(&t);
        return 2;
    }
    for (size_t i = 0; i < t.rows; i++) {
        const csv_row *r = &rows[i];
        if (head[i] != i)
            continue;
        double b, err;
        noise_pool_result(&pool[i], &b, &err);
        char from[80];
        if (!noise_pooled_text(&pool[i], from, sizeof from))
            snprintf(from, sizeof from, "at %lldx%lld", (long long)r->micro_batch,
                     (long long)r->accum_steps);
        fprintf(out, "%s E=%lld: E is %.2g times the measured noise scale (B_simple %.3g +- "
                "%.2g examples, %s); %s\n", r->model, (long long)r->effective_batch,
                (double)r->effective_batch / b, b, err, from,
                noise_scale_verdict((double)r->effective_batch, b, err, pool[i].windows));
        lines++;
    }
    if (lines)
        fprintf(out, "B_simple (McCandlish et al. 2018) approximates the critical batch only "
                     "under the paper's assumptions, and grows as training goes on.\n");
    else
        fprintf(stderr, "accubench: %s has no noise scale (run with --noise-windows and K > 1)\n",
                csv_path);
    free(head);
    free(pool);
    free(rows);
    csv_free(&t);
    return lines ? 0 : 1;
}
