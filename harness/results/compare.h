/* accubench compare BASE.csv NEW.csv: the step time of every config present
 * in both runs, with a noise-aware verdict (faster, slower, the same within
 * the threshold, not yet separated). A side may name several runs,
 * BASE1.csv,BASE2.csv: the ratio is then taken over the runs
 * (compare_runs.h). */
#ifndef ACCUBENCH_COMPARE_H
#define ACCUBENCH_COMPARE_H

#include "csv_read.h"
#include "paired.h"

/* argv[0] is "compare". Prints the table on stdout. Returns 0 when nothing
 * got slower, 1 when a config got slower (or stopped running), 2 on bad
 * input (one line on stderr starting "accubench: "). */
int compare_main(int argc, char **argv);

typedef enum verdict {
    VERDICT_NOT_SEPARATED = 0, /* the interval reaches past the threshold's edge: no
                                  verdict at this noise */
    VERDICT_FASTER,
    VERDICT_SLOWER,
    VERDICT_WITHIN,  /* the whole interval lies within the threshold: a change, if any,
                        smaller than it (not the noise's doing) */
    VERDICT_FAILED,  /* ran in BASE, not in NEW: counts as a regression */
    VERDICT_FIXED,   /* did not run in BASE, runs in NEW */
    VERDICT_NOT_RUN, /* ran in neither */
    VERDICT_CAPPED,  /* ran in BASE, oom in NEW under a lower --mem-cap than BASE's: the
                        cap's doing, not a regression (compare_main only) */
    VERDICT_TOO_FEW, /* timed apart, and a side's median from 1 or 2 steps or rounds:
                        its interval covers the median at most half the time, no
                        evidence of a change either way */
} verdict;

/* The verdict for one config measured in both runs; min_diff is the
 * relative difference (0.01 = 1%) below which no change is claimed:
 * within it where the interval says so, else not separated at this noise. */
verdict compare_rows(const csv_row *base, const csv_row *now, double min_diff);
/* The verdict in words: a ratio's verdict as the rule words it at
 * min_diff (paired.h), "failed", "now runs", ... otherwise. */
paired_words verdict_words(verdict v, double min_diff);

#endif
