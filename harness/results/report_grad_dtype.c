/* "How far can the gradient be accumulated in bf16?": for each series
 * whose accumulated gradient was held in a dtype that rounds it
 * (grad_dtype.h), its error against the fp32 full-batch gradient at each
 * K, beside the fp32 accumulator's error in the same config, and the
 * largest K at which it still passes the tolerance the run holds it to
 * (grad_dtype_tolerance: the same figure the row's note used). */
#include <math.h>
#include <string.h>

#include "grad_dtype.h"
#include "reduction.h"
#include "report_parts.h"
#include "row_index.h"

/* The series' accumulator, when it rounds; NULL otherwise. */
static const grad_dtype_info *rounding_accumulator(const csv_row *r)
{
    int g = r->grad_dtype ? axis_find(&grad_dtype_axis, r->grad_dtype) : -1;
    const grad_dtype_info *info = g < 0 ? NULL : grad_dtype_info_of(g);
    return info && info->rounds_bf16 ? info : NULL;
}

/* A row whose check measured the accumulation: it ran the check, with a
 * reduction that must equal the full batch; a config's first row and arm
 * (a table row and a "passes up to K" per config: a rerun's row at the
 * same K is the config again). */
static int checked(const csv_row *r)
{
    return r->status && !strcmp(r->status, "ok") && !isnan(r->grad_rel_err) &&
           reduction_exact_named(r->reduction) && !r->repeat && !RESULT_SECOND_ARM(r);
}

static const char *err_text(double e)
{
    static rp_text t;
    t = e == 0 ? (rp_text){"0"} : rp_num(e, 2);
    return t.s;
}

static void intro(doc *d)
{
    doc_heading(d, 2, "How far can the gradient be accumulated in bf16?");
    doc_para(d, "grad_rel_err of each split against the fp32 full-batch gradient, with the "
                "accumulated gradient held in bf16 (rounded to nearest even after each "
                "micro-batch, emulated on fp32 storage, so the memory need is fp32's) beside "
                "the same config held in fp32. Each rounding adds up to 2^-9 of the sum, so "
                "the error grows with K. The tolerance is the compute dtype's own plus 2^-8 "
                "(3.9e-3), twice the worst error of storing the exact gradient in bf16 once: "
                "within it, the accumulator costs what a bf16 gradient does anyway; past it, "
                "the K roundings are the error. A row over it is a measurement, not a "
                "failure.");
}

/* One series: its table rows and its sentence. */
static void series(const report_input *in, const report_group *g, const row_index *fp32,
                   table *tb, doc *d)
{
    const csv_row *first = &in->rows[g->idx[0]];
    if (!dtype_info_named(first->dtype))
        return;
    double tol = rp_grad_tolerance(first);
    long long passes_to = 0, fails_at = 0;
    int rows = 0;
    for (size_t i = 0; i < g->n; i++) {
        const csv_row *r = &in->rows[g->idx[i]];
        if (!checked(r))
            continue;
        size_t p = row_index_find(fp32, r);
        const csv_row *ref = p == ROW_NONE ? NULL : &in->rows[p];
        int pass = r->grad_rel_err <= tol;
        table_add(tb, r->model);
        table_addf(tb, "%lld", (long long)r->effective_batch);
        table_add(tb, r->dtype);
        table_addf(tb, "%lld", (long long)r->accum_steps);
        table_add(tb, rp_split(r).s);
        table_add(tb, ref && checked(ref) ? err_text(ref->grad_rel_err) : "-");
        table_add(tb, err_text(r->grad_rel_err));
        table_add(tb, pass ? "yes" : "no");
        rows++;
        if (pass && !fails_at)
            passes_to = r->accum_steps;
        else if (!pass && !fails_at)
            fails_at = r->accum_steps;
    }
    if (!rows)
        return;
    char where[160];
    snprintf(where, sizeof where, "%s, E = %lld, %s compute, %s", first->model,
             (long long)first->effective_batch, first->dtype, first->mode);
    if (!passes_to)
        doc_bullet(d, "%s: the %s accumulator is over its %s tolerance from the smallest K "
                   "measured (K=%lld).", where, first->grad_dtype, rp_num(tol, 2).s, fails_at);
    else if (!fails_at)
        doc_bullet(d, "%s: the %s accumulator passes its %s tolerance at every K measured, up "
                   "to K=%lld.", where, first->grad_dtype, rp_num(tol, 2).s, passes_to);
    else
        doc_bullet(d, "%s: the %s accumulator passes its %s tolerance up to K=%lld; from "
                   "K=%lld its error is over it.", where, first->grad_dtype,
                   rp_num(tol, 2).s, passes_to, fails_at);
}

void report_grad_dtype(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    size_t rounded = 0;
    for (size_t i = 0; i < ng; i++)
        rounded += rounding_accumulator(&in->rows[g[i].idx[0]]) != NULL;
    if (!rounded)
        return;
    /* Each row's fp32 twin: the same config but for its accumulator. */
    row_key key = row_key_config_but("grad_dtype");
    row_index fp32;
    if (row_index_init(&fp32, &key, in->rows, in->t->rows)) {
        d->failed = 1;
        return;
    }
    for (size_t i = 0; i < in->t->rows; i++)
        if (!rounding_accumulator(&in->rows[i]))
            row_index_add(&fp32, i);
    intro(d);
    const char *const head[] = {"model", "E", "dtype", "K", "micro x K", "fp32 accumulator",
                                "bf16-rounded accumulator", "within tolerance", NULL};
    table *tb = doc_table(d, "lrlrlrrl", head);
    for (size_t i = 0; tb && i < ng; i++)
        if (rounding_accumulator(&in->rows[g[i].idx[0]]))
            series(in, &g[i], &fp32, tb, d);
    row_index_free(&fp32);
}
