/* Internal to the report (report_*.c): what its builders share. */
#ifndef ACCUBENCH_REPORT_PARTS_H
#define ACCUBENCH_REPORT_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "levers.h"
#include "paired.h"
#include "report.h"

/* One A/B/C table: the splits of one config, rows equal in every KEY column
 * of result_row.h (one effective batch, model, mode, reduction, dtype,
 * backend and device count). */
typedef struct report_group {
    size_t *idx; /* rows of the report_group, micro-batch descending (K ascending) */
    size_t n;
    const csv_row *k1; /* the no-accumulation row (its first row and arm), when it ran */
} report_group;

/* The groups of the rows, effective batch ascending, then in file order;
 * NULL when out of memory. */
report_group *report_groups(const csv_row *rows, size_t n, size_t *count);
void report_groups_free(report_group *g, size_t n);

/* Numbers as the report prints them, in a small buffer passed by value. */
typedef struct { char s[192]; } rp_text; /* room for rp_series's longest */
rp_text rp_num(double v, int sig);   /* sig significant digits, "-" if unmeasured */
rp_text rp_count(double v);          /* whole numbers whole: "216" */
rp_text rp_split(const csv_row *r); /* split_text: "16x4", "K=3: 24+24+16" */
/* ", recompute block, gradient accumulated in bf16, window sync, shard
 * zero1": the levers that set a series apart where they are not the
 * default ("" for none). */
rp_text rp_levers(const csv_row *r);
/* The same from each lever's value and the sync (NULL or "" each: not
 * given), for a series read from elsewhere than a row (a curve's key). */
rp_text rp_levers_of(lever_values lv, const char *sync);
/* "async, sum reduction, fp32, cpu, 2 devices, window sync": every key
 * column of a series but its model and effective batch, so that no two
 * series of a file read alike where a sentence names one. */
rp_text rp_series(const csv_row *r);
rp_text rp_bytes(int64_t b);         /* "1.5 GiB", "-" if unmeasured */
/* rp_bytes, with the bytes themselves where other (a cap) reads the same
 * rounded: the byte that decides whether it fits is seen. */
rp_text rp_bytes_beside(int64_t b, int64_t other);
rp_text rp_pct(double v);            /* "+8.2%" */
/* A share in % (MFU, busy), three digits, marked " (!)" above 100%: no
 * step reaches it, so wherever the report prints one it is marked. */
rp_text rp_share(double pct);

/* The trace pass times its steps apart from the timed pass, one at a time
 * (recording perturbs timing; docs/trace.md): a traced step this many
 * times the timed median is not the step the row reports (ranks waiting
 * on each other, a descheduled core), and its busy share says nothing of
 * the timed steps. */
#define RP_TRACE_STEP_APART 2.0
int rp_traced_apart(const csv_row *r);

/* The naive prediction of a step: K passes at the one-pass time. */
double rp_naive_ms(const csv_row *r);
/* The tolerance the run held a row's gradient check to: its dtype's
 * (fp32's for a name this build does not know), plus its accumulator's
 * where that rounds (grad_dtype.h; a file from before the column: none). */
double rp_grad_tolerance(const csv_row *r);
/* Metadata `key`, or dflt when absent or empty. */
const char *rp_meta(const csv_table *t, const char *key, const char *dflt);
/* The execution mode most rows ran in (the sweep's own; the others are the
 * modes comparison); a tie goes to the mode the run listed first (its
 * `# modes:` line), else to the first in the file. */
const char *rp_main_mode(const csv_table *t, const csv_row *rows, size_t n);

/* Data parallel: what each sync mode saved at each K (report_dp.c). */
void report_dp_findings(const report_input *in, doc *d);

/* "The A/A check": each config timed twice, arm 2 over arm 1, and
 * whether the rule held (report_aa.c); nothing when none was. */
void report_aa(const report_input *in, const report_group *g, size_t ng, doc *d);
/* Its pairs: (arm 1, arm 2) as indices of in->rows, each config's arm 2
 * that ran with its arm 1, in group order, into pairs (room for
 * in->t->rows of them); their count. RUN.json's aa_checks read them too. */
size_t aa_pairs(const report_input *in, const report_group *g, size_t ng, size_t (*pairs)[2]);
/* The A/A pairs of one group (a series: rows equal in every KEY column)
 * by the rule: 1 where each held, 0 where one was called apart (its arm
 * 1's and arm 2's rows into failed), -1 where the series has none with an
 * interval; -2 when out of memory. What the A/B/C verdict of that series
 * says beside it, in the report and in RUN.json. */
int aa_group_held(const report_input *in, const report_group *group, size_t failed[2]);

/* "One dtype against another": each config in another dtype against its
 * twin in the file's first, paired per round where timed together
 * (report_dtype.c); nothing when no config has a twin. */
void report_dtype(const report_input *in, doc *d);

/* A row against its twin in the reference dtype: the one comparison that
 * both "One dtype against another" and RUN.json give. */
typedef struct dtype_pair {
    size_t twin;      /* the twin's row; ROW_NONE where none (or the row is the reference's) */
    paired_ratio p;   /* this row's step time over its twin's, paired where timed together */
    paired_verdict v; /* p by the rule */
} dtype_pair;

/* The reference dtype (the first of the rows that ran; NULL when none
 * did) and a dtype_pair per row into *pairs, the caller's to free (NULL
 * when there is no reference). Returns 0, or -1 when out of memory. */
int dtype_pairs_of(const report_input *in, const char **ref, dtype_pair **pairs);

/* A finding where every config of a comparison moved together across its
 * rounds (the machine's speed changed), by how much (report_rounds.c);
 * nothing where no comparison moved over 10%. Beside the flags' finding,
 * which it explains. */
void report_round_shifts(const report_input *in, doc *d);

/* The sentences of "What the numbers show" (report_findings.c). */
void report_findings(const report_input *in, const report_group *g, size_t ng,
                     const char *mode, doc *d);

/* A chart, or the reason scripts/plots.sh left for not drawing it
 * (report_charts.c). */
void report_chart(const report_input *in, doc *d, const char *name, const char *caption);

/* The metadata line a peer program writes: the backends of its rows. */
#define PEERS_META_KEY "peers"
/* "Against PEER": accubench beside the peer's rows, per split, with their
 * ratio (report_peers.c); nothing when the CSV names no peer. */
void report_peers(const report_input *in, const report_group *g, size_t ng, doc *d);

/* E against the measured noise scale per series, and the paper's caveat
 * once (report_noise.c); nothing when no row has a noise scale. */
void report_noise(const report_input *in, const report_group *g, size_t ng, doc *d);

/* "How far can the gradient be accumulated in bf16?": each series whose
 * gradient was held in a rounding accumulator, its error at each K beside
 * the fp32 accumulator's, and the largest K within its tolerance
 * (report_grad_dtype.c); nothing when no row has one. */
void report_grad_dtype(const report_input *in, const report_group *g, size_t ng, doc *d);

/* The loss curves' gaps per series, from NAME.curves.csv beside the CSV
 * (report_curves.c); nothing when there is none. */
void report_curves(const report_input *in, doc *d);

/* "Is E right?": steps, examples and time to a target loss per effective
 * batch, the S(B) fit, from NAME.curves.csv (report_goodput.c); nothing
 * when there is none. */
void report_goodput(const report_input *in, doc *d);

/* "The fastest split under a memory cap": per effective batch, model,
 * dtype and lever, the fastest config that fits beside the fastest overall,
 * in whichever execution mode ran it (report_memory.c). */
void report_memory(const report_input *in, const report_group *g, size_t ng, doc *d);

/* "Within a memory cap": the frontier of each model, effective batch and
 * device count, the recommendation under the cap, and the frontier chart
 * (report_frontier.c). */
void report_frontier(const report_input *in, doc *d);

#endif
