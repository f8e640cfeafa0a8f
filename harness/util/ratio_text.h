/* A ratio as every answer of the program prints it (the run's summary, the
 * report, compare, plan --recommend): "1.005x [0.998..1.012]". One place,
 * so one figure reads the same wherever it is printed. */
#ifndef ACCUBENCH_RATIO_TEXT_H
#define ACCUBENCH_RATIO_TEXT_H

#include <stddef.h>

/* ratio with its interval lo..hi ("1.84x [1.65..1.92]"), or alone where lo
 * or hi is NAN ("1.84x"); "-" for a NAN ratio. Fixed decimals, the same
 * for all three: three within 10% of 1, two elsewhere below 10, fewer
 * above, and up to two more where
 * fewer would print a figure that is not 1 as "1.00" (a ratio of 1.004,
 * a bound of 0.998 under an interval that does straddle 1) or the two
 * bounds of an interval as one number, while the interval spans under
 * ten units of the last decimal (more would print noise). Each figure as
 * the results CSV writes it (6 digits): the text of a figure is the text
 * of its cell, whoever formats it (plots/ratio.awk, for the charts). */
void ratio_text(char *out, size_t len, double ratio, double lo, double hi);

/* The decimals ratio_text gives ratio, lo and hi: for a figure printed
 * beside a range that is not an interval ("1.11x, from 1.03x to 1.12x"). */
int ratio_decimals(double ratio, double lo, double hi);

#endif
