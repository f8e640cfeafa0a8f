/* The A/B/C verdict the report opens with: where a run holds three splits
 * of one config by the rule below, each by name with its step time and
 * interval, its ratio to A, and the why as the run measured it. */
#ifndef ACCUBENCH_REPORT_VERDICT_H
#define ACCUBENCH_REPORT_VERDICT_H

#include <stddef.h>

#include "report_parts.h"

/* The rule: in one series (rows equal in every KEY column, one process),
 * of effective batch E divisible by 8, A is the largest micro-batch (E x 1
 * when it is there), B is micro-batch E/4 and C is E/8, A larger than B.
 * idx[0..n) are the series' rows, micro-batch descending (report_group).
 * Returns 1 and the three rows' indices (A, B, C) in out, or 0. */
int abc_pick(const csv_row *rows, const size_t *idx, size_t n, size_t out[3]);

/* "The A/B/C verdict": one part per series of the main mode that the rule
 * picks three splits from; nothing when none. */
void report_verdict(const report_input *in, const report_group *g, size_t ng, const char *mode,
                    doc *d);

#endif
