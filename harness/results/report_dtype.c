/* "One dtype against another": where a file holds a config in more than
 * one dtype (--dtype fp32,bf16, or runs of each appended), each config in
 * another dtype against its twin in the reference dtype (the same config
 * but for its dtype), by the one rule (row_compare.h): paired round by
 * round where the two were timed in the same interleaved rounds, from
 * their intervals where they were timed apart. Rows of one dtype are
 * never compared with another anywhere else in the report: dtype is a KEY
 * column, so every series, verdict and ratio stays within its dtype.
 * dtype_pairs_of finds the twins and compares them for this section and
 * for RUN.json alike, so the two never give a pair different figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paired.h"
#include "ratio_text.h"
#include "reduction.h"
#include "report_parts.h"
#include "row_compare.h"
#include "row_index.h"

/* A row this section compares: it ran, as the config's first arm (an
 * A/A check's second is the same config again). */
static int comparable(const csv_row *r)
{
    return result_ran_once(r) && r->step_ms_median > 0;
}

/* The reference dtype: the first of the file's rows that ran, which a
 * run of several dtypes writes in the order --dtype named them. */
static const char *reference_dtype(const report_input *in)
{
    for (size_t i = 0; i < in->t->rows; i++)
        if (comparable(&in->rows[i]))
            return in->rows[i].dtype;
    return NULL;
}

/* The verdicts of one dtype against the reference, counted. */
typedef struct tally {
    const char *dtype;
    int faster, slower, equal, open, no_interval, paired;
} tally;

static tally *tally_of(tally *t, size_t *n, const char *dtype)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(t[i].dtype, dtype))
            return &t[i];
    t[*n] = (tally){.dtype = dtype};
    return &t[(*n)++];
}

static void count(tally *t, paired_verdict v, const paired_ratio *p)
{
    t->faster += v == PAIRED_FASTER;
    t->slower += v == PAIRED_SLOWER;
    t->equal += v == PAIRED_EQUAL;
    t->open += v == PAIRED_UNDECIDED;
    t->no_interval += v == PAIRED_UNKNOWN; /* too few draws: not "not yet separated" */
    t->paired += p->rounds > 0;
}

static void intro(doc *d, const char *ref)
{
    doc_heading(d, 2, "One dtype against another");
    doc_para(d, "Each config in another dtype against the same config in %s: its step time "
                "over %s's with the 95%% interval, paired round by round where the two were "
                "timed in the same interleaved rounds (a run of --dtype with several), from "
                "the two medians' intervals where they were timed apart. Faster or slower "
                "only where the interval clears the %g%% threshold. MFU is each against its "
                "own dtype's measured peak.", ref, ref, 100 * PAIRED_THRESHOLD);
}

/* One row of the table and its verdict counted. */
static void pair_row(table *tb, const csv_row *ref, const csv_row *r, const dtype_pair *pair,
                     tally *t)
{
    paired_ratio p = pair->p;
    paired_verdict v = pair->v;
    char ratio[128];
    ratio_text(ratio, sizeof ratio, p.ratio, p.lo, p.hi);
    table_add(tb, r->model);
    table_addf(tb, "%lld", (long long)r->effective_batch);
    table_add(tb, rp_split(r).s);
    /* its levers beside the mode: under mpirun one split runs on several
     * device counts, syncs and shards, and a run of --reduction several
     * reductions, each a line that must say which */
    char devices[48] = "", red[RESULT_TEXT_LEN + 16] = "";
    if (r->devices > 1)
        snprintf(devices, sizeof devices, ", %lld devices", (long long)r->devices);
    if (r->reduction[0] && strcmp(r->reduction, reduction_name(REDUCTION_SUM)))
        snprintf(red, sizeof red, ", %s reduction", r->reduction);
    table_addf(tb, "%s%s%s%s", r->mode, red, devices, rp_levers(r).s);
    table_add(tb, r->dtype);
    table_add(tb, rp_num(ref->step_ms_median, 4).s);
    table_add(tb, rp_num(r->step_ms_median, 4).s);
    table_add(tb, ratio);
    table_add(tb, paired_verdict_words(v, PAIRED_THRESHOLD).s);
    table_add(tb, p.rounds > 0 ? "paired" : "apart");
    table_addf(tb, "%s / %s", rp_num(ref->mfu_pct, 3).s, rp_num(r->mfu_pct, 3).s);
    count(t, v, &p);
}

int dtype_pairs_of(const report_input *in, const char **ref, dtype_pair **pairs)
{
    *pairs = NULL;
    *ref = reference_dtype(in);
    if (!*ref)
        return 0;
    row_key key = row_key_config_but("dtype");
    row_index twins;
    dtype_pair *out = malloc((in->t->rows ? in->t->rows : 1) * sizeof *out);
    if (!out || row_index_init(&twins, &key, in->rows, in->t->rows)) {
        free(out);
        return -1;
    }
    for (size_t i = 0; i < in->t->rows; i++)
        if (comparable(&in->rows[i]) && !strcmp(in->rows[i].dtype, *ref))
            row_index_add(&twins, i);
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        out[i] = (dtype_pair){.twin = ROW_NONE, .v = PAIRED_UNKNOWN};
        if (!comparable(r) || !strcmp(r->dtype, *ref))
            continue;
        out[i].twin = row_index_find(&twins, r);
        if (out[i].twin == ROW_NONE)
            continue;
        out[i].p = row_ratio(&in->rows[out[i].twin], r);
        out[i].v = paired_judge(&out[i].p, PAIRED_THRESHOLD);
    }
    row_index_free(&twins);
    *pairs = out;
    return 0;
}

void report_dtype(const report_input *in, doc *d)
{
    const char *ref;
    dtype_pair *pairs;
    if (dtype_pairs_of(in, &ref, &pairs)) {
        d->failed = 1;
        return;
    }
    if (!ref)
        return;
    tally *t = calloc(in->t->rows ? in->t->rows : 1, sizeof *t);
    if (!t) {
        free(pairs);
        d->failed = 1;
        return;
    }
    size_t n_tally = 0;
    table *tb = NULL;
    for (size_t i = 0; i < in->t->rows; i++) {
        const csv_row *r = &in->rows[i];
        if (pairs[i].twin == ROW_NONE)
            continue;
        if (!tb) {
            intro(d, ref);
            static const char *const head[] = {"model", "E", "micro x K", "mode", "dtype",
                                               "ref ms", "ms", "vs ref (95%)", "verdict",
                                               "timed", "MFU % ref / this", NULL};
            tb = doc_table(d, "lrlllrrrlll", head);
            if (!tb)
                break;
        }
        pair_row(tb, &in->rows[pairs[i].twin], r, &pairs[i], tally_of(t, &n_tally, r->dtype));
    }
    for (size_t k = 0; k < n_tally; k++) {
        int n = t[k].faster + t[k].slower + t[k].equal + t[k].open + t[k].no_interval;
        char none[64] = "";
        if (t[k].no_interval)
            snprintf(none, sizeof none, ", no interval in %d", t[k].no_interval);
        doc_bullet(d, "%s against %s over %d %s (%d paired in the same rounds): faster in "
                      "%d, slower in %d, the same within %g%% in %d, not yet separated in "
                      "%d%s.", t[k].dtype, ref, n, n == 1 ? "config" : "configs", t[k].paired,
                   t[k].faster, t[k].slower, 100 * PAIRED_THRESHOLD, t[k].equal, t[k].open,
                   none);
    }
    free(pairs);
    free(t);
}
