/* plan --recommend's listing (see recommend.h). */
#include "recommend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ci_level.h"
#include "csv_load.h"
#include "csv_writer.h"
#include "report_parts.h"
#include "row_compare.h"

#define LABEL_LEN 256

static void label(const frontier_set *s, const csv_row *rows, const frontier_item *it,
                  char *out)
{
    frontier_label(s, rows, it, out, LABEL_LEN);
}

/* The widest label, so the columns line up whatever the levers. */
static int label_width(const frontier_set *s, const csv_row *rows)
{
    char name[LABEL_LEN];
    int w = (int)strlen("configuration");
    for (size_t i = 0; i < s->n; i++) {
        label(s, rows, &s->items[i], name);
        if ((int)strlen(name) > w)
            w = (int)strlen(name);
    }
    return w;
}

/* "12.3 MiB peak" / "12.3 MiB need". */
static rp_text memory_text(const frontier_item *it)
{
    rp_text t;
    if (it->mem < 0)
        snprintf(t.s, sizeof t.s, "-");
    else
        snprintf(t.s, sizeof t.s, "%s %s", rp_bytes(it->mem).s,
                 it->mem_measured ? "peak" : "need");
    return t;
}

static rp_text interval_text(const csv_row *r)
{
    rp_text t;
    char level[16];
    if (r->step_ms_ci_hi > 0 && r->step_ms_ci_lo <= r->step_ms_ci_hi)
        snprintf(t.s, sizeof t.s, "%s..%s%s", rp_num(r->step_ms_ci_lo, 4).s,
                 rp_num(r->step_ms_ci_hi, 4).s,
                 row_ci_short_text((long long)r->rounds, (long long)r->samples, level,
                                   sizeof level));
    else
        snprintf(t.s, sizeof t.s, "-");
    return t;
}

static void header(FILE *out, const recommend_request *req, const csv_table *t,
                   const frontier_set *s, const csv_row *rows)
{
    const frontier_query *q = &req->q;
    const csv_row *r = &rows[s->items[0].row];
    fprintf(out, "plan --recommend: model %s (%s), effective batch %lld on %lld device%s, ",
            r->model, r->backend, (long long)q->effective, (long long)q->devices,
            q->devices == 1 ? "" : "s");
    if (q->cap >= 0)
        fprintf(out, "cap %s (%lld bytes) per device", rp_bytes(q->cap).s, (long long)q->cap);
    else
        fprintf(out, "no cap");
    fprintf(out, ", from %s\n", req->csv_path);
    fprintf(out, "memory per device: mem_peak_bytes (measured, \"peak\") where the row has it, "
                 "else mem_need_bytes (the exact need, \"need\")\n");
    const size_t aside[] = {s->other_effective, s->other_devices, s->other_model,
                            s->second_arm, s->repeated};
    static const char *const why[] = {
        "another effective batch", "another device count", "another model or backend",
        "a config's second arm (an A/A check: the same config timed again)",
        "a config named earlier in the file (run again with --append: its first row is "
        "ranked, as compare reads it)"};
    const char *sep = "left aside:";
    for (int i = 0; i < 5; i++)
        if (aside[i]) {
            fprintf(out, "%s %zu row%s of %s", sep, aside[i], aside[i] == 1 ? "" : "s", why[i]);
            sep = ",";
        }
    if (sep[0] == ',')
        fprintf(out, "\n");
    const char *unfinished = csv_meta_get(t, CSV_UNFINISHED);
    if (unfinished && *unfinished) /* a config it never reached may be the fastest */
        fprintf(out, "the run did not finish (%s): only the configs it reached are ranked\n",
                unfinished);
}

/* How item i stands against the recommended one, by the comparison rule:
 * the paired ratio where they were timed in the same rounds. */
static void against_best(const frontier_set *s, const csv_row *rows, size_t i, char *out,
                         size_t len)
{
    if ((int)i == s->best) {
        snprintf(out, len, "recommended");
        return;
    }
    char ratio[300];
    row_ratio_text(&rows[s->items[s->best].row], &rows[s->items[i].row], ratio, sizeof ratio);
    snprintf(out, len, "vs 1: %s", ratio);
}

/* The flags of a row, beside its figures: they explain, they veto nothing. */
static const char *flags_of(const csv_row *r)
{
    return *r->flags ? r->flags : "";
}

/* The candidates that fit, ranked; returns how many. */
static int ranking(FILE *out, const frontier_set *s, const csv_row *rows, int w)
{
    char name[LABEL_LEN];
    int rank = 0;
    char against[400];
    fprintf(out, "%4s  %-*s %10s  %-19s %-16s %-10s %s\n", "rank", w, "configuration",
            "step ms", "95% interval ms", "memory/device", "flags", "");
    for (size_t i = 0; i < s->n; i++) {
        const frontier_item *it = &s->items[i];
        if (it->verdict != FR_FITS)
            continue;
        const csv_row *r = &rows[it->row];
        label(s, rows, it, name);
        against_best(s, rows, i, against, sizeof against);
        fprintf(out, "%4d  %-*s %10s  %-19s %-16s %-10s %s\n", ++rank, w, name,
                rp_num(r->step_ms_median, 4).s, interval_text(r).s, memory_text(it).s,
                flags_of(r), against);
    }
    return rank;
}

/* The pick stated by the rule: it clears the next candidate, or it ties
 * with the candidates the rule does not separate from it (named, each with
 * what the rule makes of it, the one needing the least memory said: the
 * tie-break a person would want). The ties are printed as they are named,
 * not gathered in a buffer first: a measuring run ties ten and more, each
 * name some 60 characters with its words, and a buffer cut the list short
 * mid-name under a count that promised them all. */
static void pick(FILE *out, const frontier_set *s, const csv_row *rows)
{
    const frontier_item *best = &s->items[s->best];
    char name[LABEL_LEN];
    int next = -1, least_i;
    for (size_t i = (size_t)s->best + 1; i < s->n && next < 0; i++)
        if (s->items[i].verdict == FR_FITS)
            next = (int)i;
    int *tied_i = malloc((s->n ? s->n : 1) * sizeof *tied_i);
    int tied = tied_i ? frontier_tied(s, rows, tied_i, &least_i) : 0;
    label(s, rows, best, name);
    if (next < 0) {
        fprintf(out, "pick: %s, the only candidate within the cap\n", name);
        free(tied_i);
        return;
    }
    if (!tied) {
        char ratio[300], next_name[LABEL_LEN];
        label(s, rows, &s->items[next], next_name);
        const csv_row *b = &rows[best->row], *n = &rows[s->items[next].row];
        row_ratio_text(b, n, ratio, sizeof ratio);
        /* ranked first against its median: the rounds say why */
        paired_ratio p = row_ratio(b, n);
        char apart[200];
        paired_pooled_remark(&p, n->step_ms_median / b->step_ms_median, apart, sizeof apart);
        fprintf(out, "pick: %s; it clears the next, %s: %s%s\n", name, next_name, ratio, apart);
        free(tied_i);
        return;
    }
    fprintf(out, "pick: %s, not separated by the rule from %d: ", name, tied);
    for (int j = 0; j < tied; j++) {
        label(s, rows, &s->items[tied_i[j]], name);
        fprintf(out, "%s%s (%s)", j ? ", " : "", name, frontier_tie_words(s, rows, tied_i[j]).s);
    }
    free(tied_i);
    if (least_i != s->best) {
        const frontier_item *least = &s->items[least_i];
        label(s, rows, least, name);
        fprintf(out, "; of them %s needs the least memory (%s)", name, memory_text(least).s);
    }
    fprintf(out, "\n");
}

/* Each configuration ranked before the pick that was left out, and why;
 * beside the pick, what the rule makes of it (a faster median alone is
 * not faster). */
static void left_out_faster(FILE *out, const frontier_set *s, const csv_row *rows, int w)
{
    size_t end = s->best < 0 ? s->n : (size_t)s->best;
    char name[LABEL_LEN], why[200], against[400];
    int heading = 0;
    for (size_t i = 0; i < end; i++) {
        const frontier_item *it = &s->items[i];
        const csv_row *r = &rows[it->row];
        if (!heading++)
            fprintf(out, s->best < 0 ? "left out:\n"
                                     : "left out, ranked before the pick by their medians:\n");
        label(s, rows, it, name);
        against[0] = '\0';
        if (s->best >= 0 && !isnan(it->step_ms))
            against_best(s, rows, i, against, sizeof against);
        fprintf(out, "      %-*s %10s  %-19s %-16s %s%s%s\n", w, name,
                isnan(it->step_ms) ? "-" : rp_num(it->step_ms, 4).s, interval_text(r).s,
                memory_text(it).s, frontier_verdict_text(rows, it, why, sizeof why),
                *against ? "; " : "", against);
    }
}

/* The ones after the pick left out, counted by why: slower by their
 * medians (over the cap, an inexact reduction, no memory figure), or with
 * no step time to rank them by (did not run: never recommended, and the
 * listing says so). */
static void say_left_out_slower(FILE *out, const frontier_set *s, const csv_row *rows)
{
    if (s->best < 0)
        return;
    static const char *const what[] = {"", "did not run (status not ok)", "no step time",
                                       "inexact reduction", "no memory figure",
                                       "over the cap"};
    int count[FR_OVER_CAP + 1] = {0};
    for (size_t i = (size_t)s->best + 1; i < s->n; i++)
        if (s->items[i].verdict != FR_FITS)
            count[s->items[i].verdict]++;
    (void)rows;
    static const struct {
        const char *head;
        int from, to;
    } line[] = {{"left out, and slower (not recommended):", FR_INEXACT, FR_OVER_CAP},
                {"left out, no step time to rank (not recommended):", FR_NOT_OK,
                 FR_NO_STEP_TIME}};
    for (size_t l = 0; l < sizeof line / sizeof *line; l++) {
        int any = 0;
        for (int v = line[l].from; v <= line[l].to; v++)
            if (count[v]) {
                fprintf(out, "%s %d %s", any ? "," : line[l].head, count[v], what[v]);
                any = 1;
            }
        if (any)
            fputc('\n', out);
    }
}

/* A cap below the smallest need of any configuration: nothing can fit.
 * Returns, after saying so, 1 where the configurations were just measured
 * (no configuration reaches E within the cap: the answer, measured), 2
 * where the file was given (bad input); else 0. */
static int cap_below_floor(const recommend_request *req, const frontier_set *s,
                           const csv_row *rows)
{
    if (req->q.cap < 0 || s->floor < 0 || req->q.cap >= s->floor)
        return 0;
    const frontier_item *least = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (rows[s->items[i].row].mem_need_bytes == s->floor)
            least = &s->items[i];
    char name[LABEL_LEN] = "";
    if (least)
        label(s, rows, least, name);
    fprintf(stderr, "accubench: --mem-cap %lld bytes (%s) is below the least any configuration "
                    "needs (its weights, gradients and optimizer state, and one micro-batch): "
                    "%lld bytes (%s, %s)\n", (long long)req->q.cap, rp_bytes(req->q.cap).s,
            (long long)s->floor, rp_bytes(s->floor).s, name);
    return req->measured ? 1 : 2;
}

int recommend_print(FILE *out, const csv_table *t, const csv_row *rows,
                    const recommend_request *req)
{
    frontier_set s;
    char why[600];
    if (frontier_build(t, rows, &req->q, &s, why, sizeof why)) {
        fprintf(stderr, "accubench: %s: %s\n", req->csv_path, why);
        return 2;
    }
    int rc = 2;
    if (!s.n)
        fprintf(stderr, "accubench: %s has no row at effective batch %lld on %lld device%s%s%s\n",
                req->csv_path, (long long)req->q.effective, (long long)req->q.devices,
                req->q.devices == 1 ? "" : "s", req->q.model ? " of model " : "",
                req->q.model ? req->q.model : "");
    else if ((rc = cap_below_floor(req, &s, rows)) == 0) {
        int w = label_width(&s, rows);
        header(out, req, t, &s, rows);
        if (ranking(out, &s, rows, w))
            pick(out, &s, rows);
        else
            fprintf(out, "      (none reaches effective batch %lld within the cap)\n",
                    (long long)req->q.effective);
        left_out_faster(out, &s, rows, w);
        say_left_out_slower(out, &s, rows);
        rc = s.best < 0;
    }
    frontier_free(&s);
    return rc;
}

int recommend_from_csv(FILE *out, const recommend_request *req)
{
    csv_table t;
    csv_row *rows;
    char why[600];
    if (csv_load(req->csv_path, csv_required_columns, &t, &rows, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    recommend_request r = *req;
    const char *own = csv_meta_get(&t, "backend");
    if (!r.q.backend && own && *own)
        r.q.backend = own; /* a peer program's rows in the same file are not ours to pick */
    int rc = recommend_print(out, &t, rows, &r);
    free(rows);
    csv_free(&t);
    return rc;
}
