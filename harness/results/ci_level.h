/* The level of a row's interval of the median (step_ms_ci_lo..hi). It is
 * 95% (MEDIAN_CI_LEVEL) where the median was taken over 6 draws or more;
 * over 5 or fewer no pair of order statistics reaches it and the interval
 * is [min, max], which covers less (93.75% at 5, 75% at 3). The draws are
 * the row's rounds where it was timed in interleaved rounds (the round is
 * the unit there), else its steps. Every place that prints the interval
 * says the level where it is short of 95%. */
#ifndef ACCUBENCH_CI_LEVEL_H
#define ACCUBENCH_CI_LEVEL_H

#include <stddef.h>

/* The interval's coverage from the row's rounds and samples columns; NAN
 * where both are 0 (a file that tells neither). */
double row_ci_coverage(long long rounds, long long samples);

/* The level in words, "95%" or where it is short of that "93.8%": for a
 * line that names it before the interval. Returns out. */
const char *row_ci_level_text(long long rounds, long long samples, char *out, size_t len);

/* " (93.8%)" where the level is short of 95%, else "": for a cell under a
 * header that already says "95%". Returns out. */
const char *row_ci_short_text(long long rounds, long long samples, char *out, size_t len);

#endif
