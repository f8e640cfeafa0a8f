/* How a split is written for people: the one spelling the console table,
 * the CSV's note and the report share.
 *
 * A split that divides is micro x K ("16x4": 16 examples, 4 passes). A
 * ragged one leads with K and lists the passes as a sum that equals the
 * examples a device takes: "K=4: 3+3+3+1" (10 = 3 x 3 + 1; "3x4+1" would
 * read as 13); past four passes, or where the list would pass
 * SPLIT_TEXT_WIDTH characters, the equal ones are counted: "K=11: 24x10+16",
 * "K=3: 512x2+256". No commas: the text goes into a CSV cell as it is. */
#ifndef ACCUBENCH_SPLIT_TEXT_H
#define ACCUBENCH_SPLIT_TEXT_H

#include <stddef.h>

/* The passes listed one by one up to this many, in this many characters. */
#define SPLIT_TEXT_LISTED 4
#define SPLIT_TEXT_WIDTH 14

/* Writes the split of `accum` passes of `micro` examples, the last of
 * `last` (== micro when it divides), into out. */
void split_text(char *out, size_t len, long long micro, long long accum, long long last);

/* split_text, then " (arm N)" for the second arm of a split named twice
 * (arm > 1: an A/A check, --micro 16,16), so that its two rows read apart. */
void split_arm_text(char *out, size_t len, long long micro, long long accum, long long last,
                    long long arm);

/* Whether the last pass is smaller: the split that needs spelling out. */
int split_is_ragged(long long micro, long long last);

/* The naive prediction of a step, K passes at the one-pass time pass_ms
 * (measured at `micro`); NAN for a ragged split, whose last pass is of
 * another size that was not timed: K x pass_ms would count a pass of 1
 * example as one of 32 (a 32+1 step of S read 14% under the estimate,
 * when it is over any estimate with its real last pass). The report's
 * "vs naive" and the run's "step shorter than its passes" both read it. */
double split_naive_ms(long long micro, long long accum, long long last, double pass_ms);

#endif
