/* What the report's builders share: the rows grouped into A/B/C tables and
 * the way numbers are printed (see report_parts.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_table.h"
#include "grad_dtype.h"
#include "levers.h"
#include "report_parts.h"
#include "row_index.h"
#include "split_text.h"

/* Order of the leaders: effective batch ascending, then file order. */
static int by_effective(const void *pa, const void *pb, void *ctx)
{
    const csv_row *rows = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int64_t ea = rows[a].effective_batch, eb = rows[b].effective_batch;
    return ea != eb ? (ea < eb ? -1 : 1) : (a > b) - (a < b);
}

/* Order in a table: micro-batch descending, then file order. */
static int by_micro_desc(const void *pa, const void *pb, void *ctx)
{
    const csv_row *rows = ctx;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int64_t ma = rows[a].micro_batch, mb = rows[b].micro_batch;
    if (ma != mb)
        return ma > mb ? -1 : 1;
    /* a config timed twice (an A/A check): its first arm first, so that the
     * A/B/C and the K=1 reference are read from it */
    if (rows[a].arm != rows[b].arm)
        return rows[a].arm < rows[b].arm ? -1 : 1;
    return (a > b) - (a < b);
}

/* The groups: one A/B/C table per series of rows equal in every key column
 * (result_row.h), i.e. the splits of one config; effective batch ascending,
 * then in file order. Linear but for the sorts: the series are found by a
 * hash of their key columns (row_index.h), and all groups share one array
 * of row numbers. */
report_group *report_groups(const csv_row *rows, size_t n, size_t *count)
{
    size_t one = n ? n : 1;
    report_group *g = calloc(one, sizeof *g);
    size_t *leader = calloc(one, sizeof *leader), *group_of = calloc(one, sizeof *group_of);
    size_t *size = calloc(one, sizeof *size), *all = calloc(one, sizeof *all);
    row_key series = row_key_series();
    row_index ix;
    size_t ng = 0;
    int ix_ok = row_index_init(&ix, &series, rows, n) == 0;
    if (!g || !leader || !group_of || !size || !all || !ix_ok) {
        free(g);
        g = NULL;
        free(all);
        goto done;
    }
    /* group_of[i]: the first row of i's series, then its group's number */
    for (size_t i = 0; i < n; i++)
        if ((group_of[i] = row_index_add(&ix, i)) == i)
            leader[ng++] = i;
    qsort_r(leader, ng, sizeof *leader, by_effective, (void *)rows);
    for (size_t k = 0; k < ng; k++)
        size[leader[k]] = k; /* a leader's group number, kept at its row */
    for (size_t i = 0; i < n; i++) {
        group_of[i] = size[group_of[i]];
        g[group_of[i]].n++;
    }
    /* every group's rows in one array, file order within each */
    for (size_t k = 0, at = 0; k < ng; at += g[k].n, k++) {
        g[k].idx = all + at;
        size[k] = 0;
    }
    for (size_t i = 0; i < n; i++)
        g[group_of[i]].idx[size[group_of[i]]++] = i;
    for (size_t k = 0; k < ng; k++) {
        qsort_r(g[k].idx, g[k].n, sizeof *g[k].idx, by_micro_desc, (void *)rows);
        for (size_t j = 0; j < g[k].n; j++) {
            const csv_row *r = &rows[g[k].idx[j]];
            if (r->accum_steps == 1 && result_ran_once(r) && !g[k].k1)
                g[k].k1 = r;
        }
    }
    if (!ng)
        free(all);
    *count = ng;
done:
    row_index_free(&ix);
    free(leader);
    free(group_of);
    free(size);
    return g;
}

void report_groups_free(report_group *g, size_t n)
{
    if (g && n)
        free(g[0].idx); /* the groups' one shared array */
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

rp_text rp_split(const csv_row *r)
{
    rp_text t;
    split_arm_text(t.s, sizeof t.s, (long long)r->micro_batch, (long long)r->accum_steps,
                   (long long)r->last_micro_batch, (long long)r->arm);
    return t;
}

/* ", PHRASE VALUE" for each lever that sets the row apart whose
 * ranks_only is `ranks`. */
static size_t put_levers(char *out, size_t len, size_t used, const lever_values *lv, int ranks)
{
    for (int i = 0; i < LEVER_COUNT && used < len; i++)
        if (levers[i].ranks_only == ranks && lever_set(&levers[i], lv->v[i]))
            used += (size_t)snprintf(out + used, len - used, ", %s %s", levers[i].phrase,
                                     lv->v[i]);
    return used;
}

rp_text rp_levers_of(lever_values lv, const char *sync)
{
    rp_text t;
    t.s[0] = '\0';
    /* the one-process levers, then the data-parallel part: the sync (empty
     * for one process) and the levers that vary only with ranks */
    size_t used = put_levers(t.s, sizeof t.s, 0, &lv, 0);
    if (sync && *sync && used < sizeof t.s)
        used += (size_t)snprintf(t.s + used, sizeof t.s - used, ", %s sync", sync);
    put_levers(t.s, sizeof t.s, used, &lv, 1);
    return t;
}

rp_text rp_levers(const csv_row *r)
{
    return rp_levers_of(lever_values_of_csv(r), r->sync);
}

rp_text rp_series(const csv_row *r)
{
    rp_text t;
    char devices[48] = "";
    if (r->devices > 1)
        snprintf(devices, sizeof devices, ", %lld devices", (long long)r->devices);
    snprintf(t.s, sizeof t.s, "%s, %s reduction, %s, %s%s%s", r->mode, r->reduction, r->dtype,
             r->backend, devices, rp_levers(r).s);
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
    else if (b >= 1024)
        snprintf(t.s, sizeof t.s, "%.1f KiB", (double)b / 1024);
    else /* a cap of 1 byte read "0.0 KiB", as if none */
        snprintf(t.s, sizeof t.s, "%lld bytes", (long long)b);
    return t;
}

rp_text rp_bytes_beside(int64_t b, int64_t other)
{
    rp_text t = rp_bytes(b), o = rp_bytes(other);
    if (b >= 1024 && b != other && !strcmp(t.s, o.s)) {
        size_t used = strlen(t.s);
        snprintf(t.s + used, sizeof t.s - used, " (%lld bytes)", (long long)b);
    }
    return t;
}

rp_text rp_pct(double v)
{
    rp_text t;
    if (!isfinite(v))
        snprintf(t.s, sizeof t.s, "-");
    else if (fabs(v) < 1e6)
        snprintf(t.s, sizeof t.s, "%+.1f%%", v);
    else /* a figure past belief (an edited row): three digits, not 300 */
        snprintf(t.s, sizeof t.s, "%+.3g%%", v);
    return t;
}

rp_text rp_share(double pct)
{
    rp_text t;
    snprintf(t.s, sizeof t.s, "%s%s", rp_num(pct, 3).s, pct > 100 ? " (!)" : "");
    return t;
}

int rp_traced_apart(const csv_row *r)
{
    return r->cupti_step_ms > RP_TRACE_STEP_APART * r->step_ms_median;
}

/* The naive prediction of a step: K passes at the one-pass time (NAN for
 * a ragged split, split_text.h). */
double rp_grad_tolerance(const csv_row *r)
{
    const dtype_info *di = dtype_info_named(r->dtype);
    int g = *r->grad_dtype ? axis_find(&grad_dtype_axis, r->grad_dtype) : -1;
    return grad_dtype_tolerance(di ? di : dtype_info_of(DTYPE_FP32), (grad_dtype)g);
}

double rp_naive_ms(const csv_row *r)
{
    return split_naive_ms((long long)r->micro_batch, (long long)r->accum_steps,
                          (long long)r->last_micro_batch, r->pass_ms);
}

const char *rp_meta(const csv_table *t, const char *key, const char *dflt)
{
    const char *v = csv_meta_get(t, key);
    return v && *v ? v : dflt;
}

/* Whether s is the first mode of a `# modes:` line ("async (what it
 * does); sync (...)"): the run's own first choice, read from the file. */
static int listed_first(const char *modes, const char *s)
{
    size_t len = strlen(s);
    return *s && !strncmp(modes, s, len) && (modes[len] == ' ' || modes[len] == ';' ||
                                             modes[len] == '\0');
}

const char *rp_main_mode(const csv_table *t, const csv_row *rows, size_t n)
{
    const char *listed = rp_meta(t, "modes", "");
    const char *best = n ? rows[0].mode : "";
    row_key mode = row_key_column("mode");
    row_index ix;
    size_t *c = calloc(n ? n : 1, sizeof *c), *first = calloc(n ? n : 1, sizeof *first);
    if (!c || !first || row_index_init(&ix, &mode, rows, n)) {
        free(c);
        free(first);
        return best;
    }
    for (size_t i = 0; i < n; i++)
        c[first[i] = row_index_add(&ix, i)]++;
    size_t best_n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t ci = c[first[i]];
        if (ci > best_n || (ci == best_n && listed_first(listed, rows[i].mode))) {
            best = rows[i].mode;
            best_n = ci;
        }
    }
    row_index_free(&ix);
    free(c);
    free(first);
    return best;
}
