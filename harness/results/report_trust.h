/* The flagged rows, named with what the run saw (row_flags.h): the flags
 * explain a row's figures beside them; the findings and verdicts follow
 * the comparison rule (row_compare.h), never a flag. */
#ifndef ACCUBENCH_REPORT_TRUST_H
#define ACCUBENCH_REPORT_TRUST_H

#include "report_parts.h"

/* A bullet naming the flagged rows and why (when there are any). Returns
 * the number of clean rows. */
size_t report_trust_findings(const report_input *in, doc *d);

/* "disturbed (other processes 86% of the CPUs)": the flags of a row with
 * the figures behind them, from its own columns, into out. */
void trust_reason(const csv_row *r, char *out, size_t len);

#endif
