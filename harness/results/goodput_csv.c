/* The charts' tables of plan --time-to-target (goodput_table.h): --table,
 * a line per series and E, and --curve-table, a line per step of each
 * E's kept curve. Each row starts with its series' number and model and
 * ends with its series' other key columns, so that a chart of several
 * series can say which is which (two modes of one model read alike by
 * name alone); their text cells are written as the run's CSV writes them,
 * so that a custom model's commas do not shift the columns after it. */
#include <math.h>
#include <stdlib.h>

#include "csv_writer.h"
#include "goodput_table.h"

/* A text cell, as the run's CSV writes one, then sep. */
static void put_text(FILE *f, const char *s, const char *sep)
{
    csv_put_text(f, s);
    fputs(sep, f);
}

/* A row's first cells: the series' number (from 1), its model and E. */
static void put_series_start(FILE *f, const goodput_series *s, size_t i, long long e)
{
    fprintf(f, "%zu,", i + 1);
    put_text(f, s->key->model, ",");
    fprintf(f, "%lld,", e);
}

/* A row's last cells, GOODPUT_KEY_HEADER's columns, and its line's end. */
static void put_key(FILE *f, const read_curve *k)
{
    put_text(f, k->backend, ",");
    put_text(f, k->dtype, ",");
    put_text(f, k->mode, ",");
    fprintf(f, "%lld,", k->devices);
    put_text(f, k->sync, ",");
    put_text(f, k->recompute, ",");
    put_text(f, k->shard, ",");
    put_text(f, k->grad_dtype, "\n");
}

void goodput_write_curves(FILE *f, const goodput_series *s, size_t n)
{
    fprintf(f, "series,model,effective_batch,lr,step,examples,loss,loss_smoothed,target_loss,"
               "steps_to_target," GOODPUT_KEY_HEADER "\n");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s[i].n; j++) {
            const goodput_point *p = &s[i].p[j];
            const read_curve *c = p->curve;
            double *smooth = c ? malloc((size_t)c->steps * sizeof *smooth) : NULL;
            if (!smooth)
                continue; /* no curve kept, or no memory for its smoothing */
            /* the smoothing steps to target reads (goodput_build), so that
             * the drawn line crosses the target where the table says */
            smooth_curve(c->loss, c->steps, goodput_smooth_half(p->e), smooth);
            for (int t = 0; t < c->steps; t++) {
                put_series_start(f, &s[i], i, p->e);
                goodput_put_num(f, p->lr, ",");
                /* step t's loss is taken before its update: t steps of E
                 * examples came before it */
                fprintf(f, "%d,%lld,", t, (long long)t * p->e);
                goodput_put_num(f, c->loss[t], ",");
                goodput_put_num(f, smooth[t], ",");
                goodput_put_num(f, s[i].target, ",");
                goodput_put_num(f, p->steps, ",");
                put_key(f, s[i].key);
            }
            free(smooth);
        }
}

void goodput_put_num(FILE *f, double v, const char *sep)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    fputs(sep, f);
}

void goodput_write_table(FILE *f, const goodput_series *s, size_t n)
{
    fprintf(f, "series,model,effective_batch,lr,steps_to_target,examples_to_target,split,"
               "step_ms,step_ms_ci_lo,step_ms_ci_hi,time_s,time_s_lo,time_s_hi,"
               "predicted_steps,predicted_time_s,best,target_loss,s_min,e_min,b_crit,"
               "b_simple,fit,s_min_se,e_min_se,b_crit_se,b_simple_err,predicted_steps_se,"
               "time_s_coverage," GOODPUT_KEY_HEADER "\n");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < s[i].n; j++) {
            const goodput_point *p = &s[i].p[j];
            const goodput_fit *fit = &s[i].fit;
            const csv_row *r = p->fast;
            put_series_start(f, &s[i], i, p->e);
            goodput_put_num(f, p->lr, ",");
            goodput_put_num(f, p->steps, ",");
            goodput_put_num(f, p->steps * (double)p->e, ",");
            if (r)
                fprintf(f, "%lldx%lld", (long long)r->micro_batch, (long long)r->accum_steps);
            fputc(',', f);
            goodput_put_num(f, r ? r->step_ms_median : NAN, ",");
            goodput_put_num(f, r ? r->step_ms_ci_lo : NAN, ",");
            goodput_put_num(f, r ? r->step_ms_ci_hi : NAN, ",");
            goodput_put_num(f, p->time_s, ",");
            goodput_put_num(f, p->time_lo, ",");
            goodput_put_num(f, p->time_hi, ",");
            goodput_put_num(f, p->pred_steps, ",");
            goodput_put_num(f, p->pred_time_s, ",");
            fprintf(f, "%d,", (int)j == s[i].best);
            goodput_put_num(f, s[i].target, ",");
            goodput_put_num(f, fit->s_min, ",");
            goodput_put_num(f, fit->e_min, ",");
            goodput_put_num(f, fit->b_crit, ",");
            goodput_put_num(f, s[i].b_simple, ",");
            fprintf(f, "%s,", fit->status == GOODPUT_FIT_OK ? "holds" : "refused");
            goodput_put_num(f, fit->s_min_se, ",");
            goodput_put_num(f, fit->e_min_se, ",");
            goodput_put_num(f, fit->b_crit_se, ",");
            goodput_put_num(f, s[i].b_simple_err, ",");
            goodput_put_num(f, p->pred_steps_se, ",");
            goodput_put_num(f, p->time_cover, ",");
            put_key(f, s[i].key);
        }
}
