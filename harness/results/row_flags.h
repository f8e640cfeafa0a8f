/* The flags column: whether a row's figures can carry a finding. "noisy":
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

/* Whether `flags` (space-separated words) holds `flag`. */
int flags_have(const char *flags, const char *flag);

/* The row ran and carries no flag: the only rows a finding is drawn from. */
int result_clean(const csv_row *r);

/* Whether two rows' step times differ beyond their noise: 1 when their
 * median intervals (step_ms_ci_lo..hi) do not overlap, 0 when they do
 * ("indistinguishable at this noise"). A row without an interval (a file
 * from before the columns) is judged on its p10..p90 band, wider and so
 * the safer side; -1 when neither is there. */
int result_times_differ(const csv_row *a, const csv_row *b);

#endif
