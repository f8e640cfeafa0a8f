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
} abc_verdict;

/* "A", "B", "C". */
const char *abc_name(int i);

/* The verdicts of the series of the main mode (rp_main_mode) the rule
 * picks three splits from, in the report's order: *out (free it) and *n,
 * NULL and 0 where there is none. -1 when out of memory. */
int abc_verdicts(const report_input *in, const report_group *g, size_t ng, const char *mode,
                 abc_verdict **out, size_t *n);

/* "The A/B/C verdict": one part per series of the main mode that the rule
 * picks three splits from; nothing when none. */
void report_verdict(const report_input *in, const report_group *g, size_t ng, const char *mode,
                    doc *d);

#endif
