/* The A/B/C verdict the report opens with: where a run holds three splits
 * of one config by the rule below, each by name with its step time and
 * interval, its ratio to A, and the why as the run measured it. */
#ifndef ACCUBENCH_REPORT_VERDICT_H
#define ACCUBENCH_REPORT_VERDICT_H

#include <stddef.h>

#include "paired.h"
#include "report_parts.h"

/* The rule: in one series (rows equal in every KEY column, one process),
 * of effective batch E divisible by 8, A is the largest micro-batch (E x 1
 * when it is there), B is micro-batch E/4 and C is E/8, A larger than B.
 * idx[0..n) are the series' rows, micro-batch descending (report_group).
 * Returns 1 and the three rows' indices (A, B, C) in out, or 0. */
int abc_pick(const csv_row *rows, const size_t *idx, size_t n, size_t out[3]);

/* One A/B/C verdict as the rule reads it: the Markdown's sentences and
 * RUN.json's record are both written from it. */
typedef struct abc_verdict {
    size_t row[3];                 /* A, B, C: indices of the report's rows */
    int ran;                       /* all three ran; else there is no verdict */
    paired_ratio over_a[3];        /* [1] B's step time over A's, [2] C's ([0] unused) */
    paired_verdict against_a[3];   /* [1] B against A, [2] C against A */
    paired_ratio c_over_b;
    paired_verdict c_against_b;
    int fastest;                   /* 0, 1, 2: A, B or C, faster than both others by the
                                      rule; -1 where the rule crowns none */
    int aa_held;                   /* the series' A/A pairs (aa_series_held): 1 all held,
                                      0 one failed (aa_pair), -1 none */
    size_t aa_pair[2];             /* the failed pair's arm 1 and arm 2 rows */
} abc_verdict;

/* "A", "B", "C". */
const char *abc_name(int i);

/* The verdicts of the series of the main mode (rp_main_mode) the rule
 * picks three splits from, in the report's order: *out (free it) and *n,
 * NULL and 0 where there is none. -1 when out of memory. */
int abc_verdicts(const report_input *in, const report_group *g, size_t ng, const char *mode,
                 abc_verdict **out, size_t *n);

/* The verdict's heading: "Model S at effective batch 64: A = 64x1, B =
 * 16x4, C = 8x8 (async, sum reduction, fp32, cpu)", into out. */
void abc_heading(const report_input *in, const abc_verdict *v, char *out, size_t len);

/* The verdict's own sentences, one call of emit each, as the report's
 * bullets state them: B against A, C against A, then which is fastest;
 * where one of the three did not run, "No verdict: C did not run (oom)."
 * The report and the console of `accubench report` both print these, so
 * that the lines a user watches are the report's, word for word. */
typedef void (*abc_emit)(void *ctx, const char *sentence);
void abc_sentences(const report_input *in, const abc_verdict *v, abc_emit emit, void *ctx);

/* "The A/B/C verdict": one part per series of the main mode that the rule
 * picks three splits from; nothing when none. */
void report_verdict(const report_input *in, const report_group *g, size_t ng, const char *mode,
                    doc *d);

#endif
