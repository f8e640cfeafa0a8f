/* What the report's builders share: the rows grouped into A/B/C tables and
 * the way numbers are printed (see report_parts.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_parts.h"

/* The groups: one A/B/C table per series of rows equal in every key column
 * (result_row.h), i.e. the splits of one config; effective batch ascending,
 * then in file order. */
report_group *report_groups(const result_row *rows, size_t n, size_t *count)
{
    report_group *g = calloc(n ? n : 1, sizeof *g);
    size_t *leader = calloc(n ? n : 1, sizeof *leader);
    size_t ng = 0;
    if (!g || !leader) {
        free(g);
        free(leader);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < ng && !result_same_series(&rows[leader[k]], &rows[i]))
            k++;
        if (k == ng)
            leader[ng++] = i;
    }
    /* insertion sort of the leaders by effective batch keeps file order */
    for (size_t a = 1; a < ng; a++)
        for (size_t b = a; b > 0 && rows[leader[b - 1]].effective_batch >
                                        rows[leader[b]].effective_batch; b--) {
            size_t t = leader[b];
            leader[b] = leader[b - 1];
            leader[b - 1] = t;
        }
    for (size_t k = 0; k < ng; k++) {
        g[k].idx = calloc(n, sizeof *g[k].idx);
        if (!g[k].idx)
            continue;
        for (size_t i = 0; i < n; i++)
            if (result_same_series(&rows[leader[k]], &rows[i]))
                g[k].idx[g[k].n++] = i;
        /* micro-batch descending: insertion sort, a table has few rows */
        for (size_t a = 1; a < g[k].n; a++)
            for (size_t b = a; b > 0 && rows[g[k].idx[b - 1]].micro_batch <
                                            rows[g[k].idx[b]].micro_batch; b--) {
                size_t t = g[k].idx[b];
                g[k].idx[b] = g[k].idx[b - 1];
                g[k].idx[b - 1] = t;
            }
        for (size_t j = 0; j < g[k].n; j++) {
            const result_row *r = &rows[g[k].idx[j]];
            if (r->accum_steps == 1 && result_ran(r))
                g[k].k1 = r;
        }
    }
    free(leader);
    *count = ng;
    return g;
}

void report_groups_free(report_group *g, size_t n)
{
    for (size_t k = 0; g && k < n; k++)
        free(g[k].idx);
    free(g);
}

rp_text rp_num(double v, int sig)
{
    rp_text t;
    fmt_sig(t.s, sizeof t.s, v, sig);
    return t;
}

/* A count: whole numbers print whole ("216", not "216.0"). */
rp_text rp_count(double v)
{
    rp_text t;
    if (!isnan(v) && v == floor(v) && fabs(v) < 1e15)
        snprintf(t.s, sizeof t.s, "%.0f", v);
    else
        fmt_sig(t.s, sizeof t.s, v, 4);
    return t;
}

rp_text rp_split(const result_row *r)
{
    rp_text t;
    if (r->last_micro_batch > 0 && r->last_micro_batch != r->micro_batch)
        snprintf(t.s, sizeof t.s, "%lldx%lld (last %lld)", (long long)r->micro_batch,
                 (long long)r->accum_steps, (long long)r->last_micro_batch);
    else
        snprintf(t.s, sizeof t.s, "%lldx%lld", (long long)r->micro_batch,
                 (long long)r->accum_steps);
    return t;
}

rp_text rp_bytes(int64_t b)
{
    rp_text t;
    if (b < 0)
        snprintf(t.s, sizeof t.s, "-");
    else if (b >= (int64_t)1 << 30)
        snprintf(t.s, sizeof t.s, "%.2f GiB", (double)b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(t.s, sizeof t.s, "%.1f MiB", (double)b / (1 << 20));
    else
        snprintf(t.s, sizeof t.s, "%.1f KiB", (double)b / 1024);
    return t;
}

rp_text rp_pct(double v)
{
    rp_text t;
    if (isnan(v))
        snprintf(t.s, sizeof t.s, "-");
    else
        snprintf(t.s, sizeof t.s, "%+.1f%%", v);
    return t;
}

/* The naive prediction of a step: K passes at the one-pass time. */
double rp_naive_ms(const result_row *r)
{
    return (double)r->accum_steps * r->pass_ms;
}

const char *rp_meta(const csv_table *t, const char *key, const char *dflt)
{
    const char *v = csv_meta_get(t, key);
    return v && *v ? v : dflt;
}

/* The mode most rows ran in (the sweep's own axis; the rest are the modes
 * comparison). */
const char *rp_main_mode(const result_row *rows, size_t n)
{
    const char *best = n ? rows[0].mode : "async";
    size_t best_n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = 0;
        for (size_t j = 0; j < n; j++)
            c += !strcmp(rows[i].mode, rows[j].mode);
        if (c > best_n || (c == best_n && !strcmp(rows[i].mode, "async"))) {
            best = rows[i].mode;
            best_n = c;
        }
    }
    return best;
}
