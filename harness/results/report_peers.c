/* The report's side-by-side with peer frameworks: rows a peer program (the
 * PyTorch peer, bench/peers/) wrote into accubench's CSV, under a backend
 * that the CSV's `# peers:` line names, set against accubench's own rows of
 * the same config but for the backend and the execution mode, split by
 * split. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ratio_text.h"
#include "report_parts.h"
#include "row_compare.h"
#include "row_index.h"

/* A peer table has a split column, accubench's step and two columns per
 * peer series; the table type holds 31. */
#define MAX_PEER_SERIES 14

static int is_peer(const report_input *in, const csv_row *r)
{
    return csv_meta_has_word(in->t, PEERS_META_KEY, r->backend) == 1;
}

/* The same config but for the backend and the mode (and the split when
 * with_split is 0). */
static int same_but_backend_mode(const csv_row *a, const csv_row *b, int with_split)
{
    row_key k = with_split ? row_key_config() : row_key_series();
    for (int i = 0; i < result_column_count && i < (int)sizeof k.use; i++)
        if (!strcmp(result_columns[i].name, "backend") || !strcmp(result_columns[i].name, "mode"))
            k.use[i] = 0;
    return row_key_equal(&k, a, b);
}

/* The row of group p at r's split (its first row and arm), when it ran. */
static const csv_row *at_split(const report_input *in, const report_group *p,
                                  const csv_row *r)
{
    for (size_t j = 0; j < p->n; j++) {
        const csv_row *q = &in->rows[p->idx[j]];
        if (result_ran_once(q) && same_but_backend_mode(q, r, 1))
            return q;
    }
    return NULL;
}

/* What the file says about each peer: PEER_version, PEER_library, ...; a
 * peer the file says nothing about gets a line that says so, not a table
 * of headers alone. */
static void peer_environment(const report_input *in, doc *d)
{
    static const char *const keys[] = {"version", "library", "device", "dtype", "modes",
                                       "optimizer", "timing", "peak_gemm_tflops",
                                       "unmeasured", "ddp", "sync", "ddp_timing",
                                       "ddp_checks", "command"};
    static const char *const head[] = {"peer", "value", NULL};
    size_t nkeys = sizeof keys / sizeof *keys;
    char words[512];
    snprintf(words, sizeof words, "%s", rp_meta(in->t, PEERS_META_KEY, ""));
    for (char *save = NULL, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char key[128];
        size_t known = 0;
        for (size_t k = 0; k < nkeys; k++) {
            snprintf(key, sizeof key, "%s_%s", w, keys[k]);
            known += csv_meta_get(in->t, key) != NULL;
        }
        if (!known) {
            doc_para(d, "The CSV records nothing about %s (no %s_version line, nor any other "
                        "of its own): its version, library and device are not known here.",
                     w, w);
            continue;
        }
        table *tb = doc_table(d, "ll", head);
        if (!tb)
            return;
        for (size_t k = 0; k < nkeys; k++) {
            snprintf(key, sizeof key, "%s_%s", w, keys[k]);
            const char *v = csv_meta_get(in->t, key);
            if (!v)
                continue;
            table_addf(tb, "%s %s", w, keys[k]);
            table_add(tb, v);
        }
    }
}

/* One table: accubench's series g against every peer series of the same
 * config; returns how many peer series it found. */
static size_t peer_table(const report_input *in, const report_group *all, size_t ng,
                         const report_group *g, doc *d)
{
    const report_group *peers[MAX_PEER_SERIES];
    size_t np = 0;
    const csv_row *first = &in->rows[g->idx[0]];
    for (size_t k = 0; k < ng && np < MAX_PEER_SERIES; k++)
        if (all[k].n && is_peer(in, &in->rows[all[k].idx[0]]) &&
            same_but_backend_mode(&in->rows[all[k].idx[0]], first, 0))
            peers[np++] = &all[k];
    if (!np)
        return 0;
    /* Data parallel: the tables differ by devices and sync alone. */
    char ranks[RESULT_TEXT_LEN + 64] = "";
    if (first->devices > 1)
        snprintf(ranks, sizeof ranks, ", %lld devices, sync %s", (long long)first->devices,
                 first->sync[0] ? first->sync : "-");
    doc_heading(d, 3, "Effective batch %lld: model %s, %s, %s reduction%s: accubench %s %s",
                (long long)first->effective_batch, first->model, first->dtype,
                first->reduction, ranks, first->backend, first->mode);
    char heads[2 * MAX_PEER_SERIES + 2][96], align[2 * MAX_PEER_SERIES + 3];
    const char *head[2 * MAX_PEER_SERIES + 3];
    size_t nh = 0;
    snprintf(heads[nh++], sizeof heads[0], "micro x K");
    snprintf(heads[nh++], sizeof heads[0], "accubench %s ms", first->mode);
    for (size_t p = 0; p < np; p++) {
        const csv_row *q = &in->rows[peers[p]->idx[0]];
        snprintf(heads[nh++], sizeof heads[0], "%s %s ms", q->backend, q->mode);
        snprintf(heads[nh++], sizeof heads[0], "%s %s / accubench", q->backend, q->mode);
    }
    for (size_t i = 0; i < nh; i++) {
        head[i] = heads[i];
        align[i] = i ? 'r' : 'l';
    }
    head[nh] = NULL;
    align[nh] = '\0';
    table *tb = doc_table(d, align, head);
    if (!tb)
        return np;
    for (size_t j = 0; j < g->n; j++) {
        const csv_row *r = &in->rows[g->idx[j]];
        int ran = result_ran(r);
        table_add(tb, rp_split(r).s);
        table_add(tb, ran ? rp_num(r->step_ms_median, 4).s : "-");
        for (size_t p = 0; p < np; p++) {
            const csv_row *q = at_split(in, peers[p], r);
            table_add(tb, q ? rp_num(q->step_ms_median, 4).s : "-");
            /* with the interval the two medians allow, as every ratio is
             * printed (paired where both were timed in one comparison) */
            char ratio[128] = "-";
            if (q && ran && result_ran(q)) {
                paired_ratio pr = row_ratio(r, q);
                ratio_text(ratio, sizeof ratio, pr.ratio, pr.lo, pr.hi);
            }
            table_add(tb, ratio);
        }
    }
    return np;
}

void report_peers(const report_input *in, const report_group *g, size_t ng, doc *d)
{
    if (!csv_meta_get(in->t, PEERS_META_KEY))
        return;
    doc_heading(d, 2, "Against %s", rp_meta(in->t, PEERS_META_KEY, "peers"));
    doc_para(d, "The same model, split, data semantics, optimizer and timing rule run by the "
                "peer framework into this CSV. Per split: accubench's median step time, the "
                "peer's in each of its modes, and the peer's time over accubench's (above 1x: "
                "accubench is faster by that factor).");
    size_t tables = 0;
    for (size_t k = 0; k < ng; k++)
        if (g[k].n && !is_peer(in, &in->rows[g[k].idx[0]]))
            tables += peer_table(in, g, ng, &g[k], d) > 0;
    if (!tables)
        doc_para(d, "No peer row matches a config accubench ran in this CSV (same model, "
                    "dtype, reduction, effective batch and devices): nothing to set side by "
                    "side.");
    peer_environment(in, d);
    report_chart(in, d, "peers", "accubench and the peer side by side: step time per micro-batch");
}
