/* The machine across a comparison's rounds: where every config of one
 * comparison ran faster or slower together in some rounds (the host's
 * clock, a neighbour on the VM), a finding says by how much and that the
 * paired ratios remove such a move, which each row's pooled noise (and
 * so its `noisy` flag) keeps. Read from round_ms alone: each row's kept
 * rounds, the same rounds for every row of a comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paired.h"
#include "report_parts.h"
#include "row_index.h"
#include "stats.h"

/* Room for a comparison's kept rounds (options.h's ROUNDS_MAX, fewer). */
#define SHIFT_ROUNDS_MAX 64
/* A move of the rounds' common factor over this (max over min, less 1) is
 * said: the peak probes' drift threshold (row_trust.h). */
#define SHIFT_MIN 0.10

static int in_rounds(const csv_row *r)
{
    return result_ran(r) && r->comparison && *r->comparison && r->round_ms && *r->round_ms;
}

/* Each round's common factor of one comparison into f (the median over
 * its rows of the round's median step over the row's own median), its rows
 * listed from `first` along next[]; returns the rounds, 0 where the rows
 * disagree on their count or fewer than two rows hold them. *configs: the
 * configs among the rows. */
static int round_factors(const report_input *in, size_t first, const size_t *next, double *f,
                         size_t *configs)
{
    size_t n_rows = 0;
    int rounds = 0;
    double *by_row = NULL;
    *configs = 0;
    for (size_t i = first; i != ROW_NONE; i = next[i]) {
        /* a second arm is its config again: a row of the factor, not a config */
        *configs += !RESULT_SECOND_ARM(&in->rows[i]);
        double v[SHIFT_ROUNDS_MAX];
        int n = (int)round_ms_parse(in->rows[i].round_ms, v, SHIFT_ROUNDS_MAX);
        double mid = stats_median(v, (size_t)n);
        double *grown = n < 2 || (rounds && n != rounds) || !(mid > 0)
                            ? NULL
                            : realloc(by_row, (n_rows + 1) * SHIFT_ROUNDS_MAX * sizeof *grown);
        if (!grown) {
            free(by_row);
            return 0;
        }
        by_row = grown;
        for (int k = 0; k < n; k++)
            by_row[n_rows * SHIFT_ROUNDS_MAX + (size_t)k] = v[k] / mid;
        rounds = n;
        n_rows++;
    }
    double *col = n_rows >= 2 ? malloc(n_rows * sizeof *col) : NULL;
    for (int k = 0; col && k < rounds; k++) {
        for (size_t j = 0; j < n_rows; j++)
            col[j] = by_row[j * SHIFT_ROUNDS_MAX + (size_t)k];
        f[k] = stats_median(col, n_rows);
    }
    int measured = col != NULL;
    free(by_row);
    free(col);
    return measured ? rounds : 0;
}

/* One comparison's finding, where its rounds moved together over SHIFT_MIN. */
static void say_shift(const report_input *in, size_t first, const size_t *next, doc *d)
{
    const csv_row *r = &in->rows[first];
    double f[SHIFT_ROUNDS_MAX];
    size_t configs = 0;
    int rounds = round_factors(in, first, next, f, &configs);
    if (!rounds)
        return;
    double lo = f[0], hi = f[0];
    for (int k = 1; k < rounds; k++)
        lo = fmin(lo, f[k]), hi = fmax(hi, f[k]);
    if (!(lo > 0) || hi / lo - 1 <= SHIFT_MIN)
        return;
    char by_round[SHIFT_ROUNDS_MAX * 6] = "";
    size_t used = 0;
    for (int k = 0; k < rounds && used < sizeof by_round; k++)
        used += (size_t)snprintf(by_round + used, sizeof by_round - used, "%s%.2f",
                                 k ? " " : "", f[k]);
    doc_bullet(d, "Model %s at effective batch %lld (%zu configs, %d rounds timed "
                  "together): the machine's speed moved under all of them at once, each "
                  "round's steps taking %.2f to %.2f times their config's median (by "
                  "round: %s). The paired ratios compare the configs within each round, "
                  "so such a move cancels in them; a row's noise, taken over all its "
                  "steps, keeps it, and may flag the row noisy.",
               r->model, (long long)r->effective_batch, configs, rounds, lo, hi, by_round);
}

void report_round_shifts(const report_input *in, doc *d)
{
    /* each comparison's rows as a list from its first, in one pass over a
     * hash of the comparison column: linear in the rows */
    size_t n = in->t->rows;
    size_t *next = malloc((n ? n : 1) * sizeof *next), *last = malloc((n ? n : 1) * sizeof *last);
    row_index ix;
    row_key by_id = row_key_column("comparison");
    if (!next || !last || row_index_init(&ix, &by_id, in->rows, n)) {
        free(next);
        free(last);
        return; /* out of memory: a finding left out, nothing wrong said */
    }
    for (size_t i = 0; i < n; i++) {
        next[i] = ROW_NONE;
        if (!in_rounds(&in->rows[i]))
            continue;
        size_t first = row_index_add(&ix, i);
        if (first != i)
            next[last[first]] = i;
        last[first] = i;
    }
    for (size_t i = 0; i < n; i++)
        if (in_rounds(&in->rows[i]) && row_index_find(&ix, &in->rows[i]) == i)
            say_shift(in, i, next, d);
    row_index_free(&ix);
    free(next);
    free(last);
}
