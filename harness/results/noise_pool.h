/* One noise scale from several rows' estimates of it, without claiming
 * more precision than they hold together.
 *
 * The rows of a series estimate one figure, B_simple at the starting
 * weights, but not independently: every config starts from the same
 * weights, and window w of every config's noise pass is drawn from the
 * same seed and index, so the splits of one effective batch read the very
 * same examples (cut into other small batches), and a smaller E's window
 * is the first E examples of a larger E's (dataset_learnable.c draws a
 * window's examples in order from its own stream). A config differing only
 * in its reduction even copies the figure. Their errors are correlated, up
 * to fully; the inverse-variance mean's error 1 / sqrt(sum 1/err^2)
 * assumes none, and two copies of one estimate came out sqrt(2) tighter
 * than either.
 *
 * The rule: the estimate is the inverse-variance weighted mean
 * (w_i = 1/err_i^2 normalised), and its error is sum w_i err_i, the error
 * of that mean were the rows perfectly correlated. For any correlations
 * Var(sum w_i b_i) = sum_ij w_i w_j rho_ij err_i err_j <= (sum w_i err_i)^2,
 * so it is never too small; it lies between the rows' least and largest
 * error, and copies of one estimate give that estimate's own error. A
 * tighter honest figure needs the windows themselves (the norms of every
 * window of every row, resampled by window): the CSV keeps only their
 * means. */
#ifndef ACCUBENCH_NOISE_POOL_H
#define ACCUBENCH_NOISE_POOL_H

#include <stddef.h>

typedef struct noise_pool {
    double w, wb, werr; /* sums of w_i, w_i b_i and w_i err_i (w_i = 1/err_i^2) */
    size_t n;           /* estimates taken */
    long windows;       /* the fewest windows behind one (0: a row did not say) */
} noise_pool;

/* Whether noise_pool_add takes the estimate b +- err: 1 where both are
 * positive and finite. */
int noise_pool_takes(double b, double err);

/* Takes one row's estimate b +- err from `windows` windows (its
 * noise_windows; <= 0 where the file has none); one noise_pool_takes
 * refuses is left out. */
void noise_pool_add(noise_pool *p, double b, double err, long windows);

/* The pooled estimate and its error (both NAN when none was taken). */
void noise_pool_result(const noise_pool *p, double *b, double *err);

#endif
