/* The rows the report's findings leave out, named with what the run saw
 * (row_flags.h): noisy and disturbed rows are shown in the tables and never
 * feed a finding. */
#ifndef ACCUBENCH_REPORT_TRUST_H
#define ACCUBENCH_REPORT_TRUST_H

#include "report_parts.h"

/* A bullet naming the flagged rows (when there are any), or one saying no
 * row is clean. Returns the number of clean rows. */
size_t report_trust_findings(const report_input *in, doc *d);

/* "disturbed (other processes 86% of the CPUs)": the flags of a row with
 * the figures behind them, from its own columns, into out. */
void trust_reason(const csv_row *r, char *out, size_t len);

#endif
