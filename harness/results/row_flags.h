/* The flags column: what may have moved a row's figures, shown beside
 * them (a verdict follows the comparison rule, row_compare.h). "noisy":
 * too few samples or too much noise for its figures to separate from a
 * neighbour's; "disturbed": the machine was not the machine during it (the
 * peak probes drifted, an MFU over 100% of a probe, other processes on the
 * CPUs, the GPU's clocks held down). Blank: clean. The note gives the
 * figures. */
#ifndef ACCUBENCH_ROW_FLAGS_H
#define ACCUBENCH_ROW_FLAGS_H

#include "csv_read.h"

#define FLAG_NOISY "noisy"
#define FLAG_DISTURBED "disturbed"

/* Every flag, in the order a summary counts them. */
#define ROW_FLAG_COUNT 2
extern const char *const row_flag_names[ROW_FLAG_COUNT];

/* Whether `flags` (space-separated words) holds `flag`. */
int flags_have(const char *flags, const char *flag);

/* The row ran and carries no flag. */
int result_clean(const csv_row *r);

#endif
