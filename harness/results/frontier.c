/* The memory-time frontier of one effective batch (see frontier.h). */
#include "frontier.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduction.h"
#include "row_compare.h"
#include "split_text.h"

/* Memory per device: the measured peak where there is one. */
static void item_memory(const csv_row *r, frontier_item *it)
{
    it->mem_measured = r->mem_peak_bytes > 0;
    it->mem = it->mem_measured ? r->mem_peak_bytes
                               : (r->mem_need_bytes > 0 ? r->mem_need_bytes : -1);
}

static frontier_verdict verdict_of(const csv_row *r, const frontier_item *it, int64_t cap)
{
    if (!result_ran(r)) /* an ok row without a step time is told apart: its status is fine */
        return strcmp(r->status, STATUS_OK) ? FR_NOT_OK : FR_NO_STEP_TIME;
    if (!reduction_exact_named(r->reduction))
        return FR_INEXACT;
    if (it->mem < 0)
        return cap < 0 ? FR_FITS : FR_NO_MEMORY;
    return cap >= 0 && it->mem > cap ? FR_OVER_CAP : FR_FITS;
}

/* Step time ascending, unmeasured last; ties (and the unmeasured) in file
 * order, so the listing is the same on every run. */
static int by_step_time(const void *pa, const void *pb)
{
    const frontier_item *a = pa, *b = pb;
    int ua = isnan(a->step_ms), ub = isnan(b->step_ms);
    if (ua != ub)
        return ua - ub;
    if (!ua && a->step_ms != b->step_ms)
        return a->step_ms < b->step_ms ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

/* Clean, exact and with a memory figure: what the front is drawn from,
 * whatever the cap. */
static int on_chart(const frontier_item *it)
{
    return it->mem >= 0 && (it->verdict == FR_FITS || it->verdict == FR_OVER_CAP);
}

/* The Pareto front in memory and time: items sorted by time, so an item
 * is on it when every faster one needs more memory (ties in time: the
 * smaller memory only). */
static void mark_front(frontier_set *s)
{
    int64_t least = -1; /* the least memory among the faster items */
    for (size_t i = 0; i < s->n; i++) {
        frontier_item *it = &s->items[i];
        if (!on_chart(it))
            continue;
        it->on_front = least < 0 || it->mem < least;
        for (size_t j = i + 1; it->on_front && j < s->n; j++)
            if (on_chart(&s->items[j]) && s->items[j].step_ms == it->step_ms &&
                s->items[j].mem < it->mem)
                it->on_front = 0;
        if (least < 0 || it->mem < least)
            least = it->mem;
    }
}

/* Whether a CSV cell holds `asked`: the writer turns a comma into ';'
 * (csv_writer.c), so a custom model "gpt:d=128,layers=4" is stored as
 * "gpt:d=128;layers=4". */
static int cell_is(const char *cell, const char *asked)
{
    for (; *cell && *asked; cell++, asked++)
        if (*cell != *asked && !(*asked == ',' && *cell == ';'))
            return 0;
    return *cell == *asked;
}

/* Which rows the query takes, counting the ones it leaves aside. Returns
 * 1 for a row of the query. */
static int query_takes_row(const csv_row *r, const frontier_query *q, frontier_set *s)
{
    if (r->effective_batch != q->effective) {
        s->other_effective++;
        return 0;
    }
    if (r->devices != q->devices) {
        s->other_devices++;
        return 0;
    }
    if ((q->model && !cell_is(r->model, q->model)) ||
        (q->backend && strcmp(r->backend, q->backend))) {
        s->other_model++;
        return 0;
    }
    if (r->repeat) { /* its config is ranked once, from its first row */
        s->repeated++;
        return 0;
    }
    if (RESULT_SECOND_ARM(r)) { /* and from its first arm */
        s->second_arm++;
        return 0;
    }
    return 1;
}

/* Without a model named, every row of the query must be of one model: a
 * ranking across models would compare different work. */
static int one_model(const csv_row *rows, const frontier_set *s, const frontier_query *q,
                     char *why, size_t why_len)
{
    for (size_t i = 1; i < s->n; i++) {
        const char *a = rows[s->items[0].row].model, *b = rows[s->items[i].row].model;
        if (strcmp(a, b)) {
            snprintf(why, why_len, "the rows at effective batch %lld on %lld device%s hold "
                     "models %s and %s: name one with --model", (long long)q->effective,
                     (long long)q->devices, q->devices == 1 ? "" : "s", a, b);
            return -1;
        }
    }
    return 0;
}

static void mixed(const csv_row *rows, frontier_set *s)
{
    for (size_t i = 1; i < s->n; i++) {
        const csv_row *a = &rows[s->items[0].row], *b = &rows[s->items[i].row];
        s->mixed_mode |= strcmp(a->mode, b->mode) != 0;
        s->mixed_sync |= strcmp(a->sync, b->sync) != 0;
        s->mixed_reduction |= strcmp(a->reduction, b->reduction) != 0;
        for (int l = 0; l < LEVER_COUNT; l++)
            s->mixed_lever[l] |= strcmp(s->items[0].lever[l], s->items[i].lever[l]) != 0;
    }
}

/* The pick: the first fitting item by the medians, unless the rule calls
 * a later fitting one faster (its rounds disagreed with the pooled steps,
 * and a verdict follows the rounds): that one moves up to the pick's
 * place, ahead of the items it beat. One pass forward: the order settles. */
static void choose_best(frontier_set *s, const csv_row *rows)
{
    for (size_t i = 0; i < s->n && s->best < 0; i++)
        if (s->items[i].verdict == FR_FITS)
            s->best = (int)i;
    for (size_t i = (size_t)s->best + 1; s->best >= 0 && i < s->n; i++) {
        frontier_item *best = &s->items[s->best], moved = s->items[i];
        if (moved.verdict != FR_FITS ||
            row_verdict(&rows[best->row], &rows[moved.row]) != PAIRED_FASTER)
            continue;
        memmove(best + 1, best, (i - (size_t)s->best) * sizeof *best);
        *best = moved;
    }
}

int frontier_build(const csv_table *t, const csv_row *rows, const frontier_query *q,
                   frontier_set *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    out->floor = -1;
    out->items = calloc(t->rows ? t->rows : 1, sizeof *out->items);
    if (!out->items) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->rows; i++) {
        const csv_row *r = &rows[i];
        if (!query_takes_row(r, q, out))
            continue;
        frontier_item *it = &out->items[out->n++];
        it->row = i;
        /* a file from before a lever's column ran without it */
        for (int l = 0; l < LEVER_COUNT; l++)
            it->lever[l] = lever_or_off(&levers[l], lever_in_csv(&levers[l], r));
        it->step_ms = result_ran(r) ? r->step_ms_median : NAN;
        item_memory(r, it);
        it->verdict = verdict_of(r, it, q->cap);
        it->over = q->cap >= 0 && it->mem > q->cap ? it->mem - q->cap : 0;
        if (r->mem_need_bytes > 0 && (out->floor < 0 || r->mem_need_bytes < out->floor))
            out->floor = r->mem_need_bytes;
    }
    if (!q->model && one_model(rows, out, q, why, why_len)) {
        frontier_free(out);
        return -1;
    }
    qsort(out->items, out->n, sizeof *out->items, by_step_time);
    mark_front(out); /* the chart's front: by the medians it draws */
    choose_best(out, rows);
    mixed(rows, out);
    return 0;
}

void frontier_free(frontier_set *s)
{
    free(s->items);
    s->items = NULL;
    s->n = 0;
}

/* " column=value" for each lever whose keyed is `keyed`: a keyed one
 * always, another where the set holds more than one value of it. */
static int put_levers(const frontier_set *s, const frontier_item *it, int keyed, char *out,
                      size_t len, int n)
{
    for (int l = 0; l < LEVER_COUNT && n >= 0 && (size_t)n < len; l++)
        if (levers[l].keyed == keyed && (keyed || s->mixed_lever[l]))
            n += snprintf(out + n, len - (size_t)n, " %s=%s", levers[l].column, it->lever[l]);
    return n;
}

void frontier_label(const frontier_set *s, const csv_row *rows, const frontier_item *it,
                    char *out, size_t len)
{
    const csv_row *r = &rows[it->row];
    char sp[64];
    split_text(sp, sizeof sp, (long long)r->micro_batch, (long long)r->accum_steps,
               (long long)(r->last_micro_batch > 0 ? r->last_micro_batch : r->micro_batch));
    int n = snprintf(out, len, "%s %s", sp, r->dtype);
    n = put_levers(s, it, 1, out, len, n);
    if (s->mixed_mode && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, " mode=%s", r->mode);
    if (s->mixed_sync && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, " sync=%s", *r->sync ? r->sync : "none");
    if (s->mixed_reduction && n >= 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, " reduction=%s", r->reduction);
    /* A lever that changes no memory (a bf16 accumulator emulated on fp32
     * storage needs fp32's) is told apart by the label alone. */
    put_levers(s, it, 0, out, len, n);
}

int frontier_differ(const csv_row *rows, const frontier_item *a, const frontier_item *b)
{
    paired_verdict v = row_verdict(&rows[b->row], &rows[a->row]);
    return v == PAIRED_UNKNOWN ? -1 : !paired_not_separated(v);
}

int frontier_tied(const frontier_set *s, const csv_row *rows, int *tied, int *least)
{
    const frontier_item *best = &s->items[s->best];
    int n = 0;
    *least = s->best;
    for (size_t i = (size_t)s->best + 1; i < s->n; i++) {
        const frontier_item *it = &s->items[i];
        if (it->verdict != FR_FITS || frontier_differ(rows, it, best) == 1)
            continue;
        tied[n++] = (int)i;
        const frontier_item *l = &s->items[*least];
        if (it->mem >= 0 && (l->mem < 0 || it->mem < l->mem))
            *least = (int)i;
    }
    return n;
}

paired_words frontier_tie_words(const frontier_set *s, const csv_row *rows, int i)
{
    paired_verdict v = row_verdict(&rows[s->items[s->best].row], &rows[s->items[i].row]);
    return paired_verdict_words(v, PAIRED_THRESHOLD);
}

const char *frontier_verdict_text(const csv_row *rows, const frontier_item *it, char *out,
                                  size_t len)
{
    const csv_row *r = &rows[it->row];
    int n = 0;
    switch (it->verdict) {
    case FR_FITS: n = snprintf(out, len, "fits"); break;
    case FR_NOT_OK:
        n = snprintf(out, len, "status %s: not recommended", *r->status ? r->status : "unknown");
        break;
    case FR_NO_STEP_TIME:
        n = snprintf(out, len, "no step time (step_ms_median is empty): nothing to rank it by, "
                               "not recommended");
        break;
    case FR_INEXACT:
        n = snprintf(out, len, "reduction %s: not one whose gradient is the full batch's", r->reduction);
        break;
    case FR_NO_MEMORY: n = snprintf(out, len, "no memory figure: cannot be held to the cap"); break;
    case FR_OVER_CAP:
        snprintf(out, len, "over the cap by %lld bytes (%s %lld bytes)", (long long)it->over,
                 it->mem_measured ? "measured peak" : "exact need", (long long)it->mem);
        return out;
    }
    /* left out for another reason, and over the cap besides */
    if (it->over > 0 && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "; over the cap by %lld bytes too",
                 (long long)it->over);
    return out;
}
