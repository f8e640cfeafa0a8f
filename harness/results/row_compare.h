/* Two rows of a CSV compared by the one rule (paired.h): the report's
 * verdicts and findings, the planner's pick and ties, and compare all ask
 * here. Rows timed in the same interleaved comparison (the same
 * `comparison` id) pair round by round through their round_ms; rows timed
 * apart compare through their medians' intervals. A row's flags explain
 * its figures and never enter the rule. */
#ifndef ACCUBENCH_ROW_COMPARE_H
#define ACCUBENCH_ROW_COMPARE_H

#include <stddef.h>

#include "csv_read.h"
#include "paired.h"

/* A row's timed figures as the rule reads them (paired.h). */
timed_figures row_figures(const csv_row *r);

/* b's step time over a's, with its interval: paired per round where they
 * were timed together, else from their intervals (the widest ratio they
 * allow). NAN figures where either has no step time. */
paired_ratio row_ratio(const csv_row *a, const csv_row *b);

/* b against a by the rule: PAIRED_SLOWER means b is slower than a. */
paired_verdict row_verdict(const csv_row *a, const csv_row *b);

/* "1.84x [1.65..1.92], slower (paired over 5 rounds)" or "... from the
 * intervals" / "not yet separated ...; about 40 rounds would likely
 * separate them": the ratio and what the rule makes of it, into out. */
void row_ratio_text(const csv_row *a, const csv_row *b, char *out, size_t len);

#endif
