/* The simple gradient noise scale of McCandlish et al. 2018 ("An Empirical
 * Model of Large-Batch Training", appendix A), from what accumulation
 * computes anyway: the gradient of each small batch (a micro-batch, or one
 * rank's part of it) normalised by its own valid items, and the window's
 * gradient normalised by the window's.
 *
 * For a mean of n i.i.d. per-item gradients, E|g_n|^2 = |G|^2 + tr(S)/n.
 * One window gives two such norms: the small batches' mean squared norm
 * s = mean_j |g_j|^2 (E s = |G|^2 + tr(S) h, h = mean_j 1/n_j) and the
 * window's w = |G_win|^2 (E w = |G|^2 + tr(S)/N, N its valid items). Solved
 * for the two unknowns with B_small = 1/h (the harmonic mean of the valid
 * counts: B_small = micro when no item is padding) and B_big = N:
 *   tr(S) ~ (s - w) / (1/B_small - 1/B_big)
 *   |G|^2 ~ (B_big w - B_small s) / (B_big - B_small)
 * each unbiased per window, averaged over the windows, then
 * B_simple = mean tr(S) / mean |G|^2. Its standard error is the jackknife
 * over windows (leave one window out, recompute the ratio): the ratio of
 * two noisy means, whose bias and spread the jackknife catches. */
#ifndef ACCUBENCH_NOISE_SCALE_H
#define ACCUBENCH_NOISE_SCALE_H

typedef struct noise_window {
    double small_sq_sum;  /* sum over small batches of |g_j|^2 */
    double inv_valid_sum; /* sum of 1/n_j */
    int smalls;           /* small batches with a valid item */
    double valid;         /* N: valid items of the window */
    double window_sq;     /* |G_win|^2 */
} noise_window;

typedef struct noise_scale {
    double *trace, *g2;   /* per usable window: the two unbiased estimates */
    double small_sq, window_sq; /* running sums of s and w */
    double valid;               /* running sum of N */
    int windows, capacity;
} noise_scale;

typedef struct noise_result {
    double b_simple, b_simple_err; /* NAN where it cannot be estimated */
    double trace_sigma, grad_sq;   /* the window means of the two estimates */
    double small_sq, window_sq;    /* the mean squared norms, small and window */
    double window_valid;           /* the mean valid items of a window */
    int windows;                   /* windows that entered the estimate */
    int windows_run;               /* the windows the pass ran (noise_pass.h) */
    int windows_complete;          /* of those, the first ones run to their end (a
                                    * signal cuts the last short): the windows the
                                    * estimate drew from, those usable entering it */
} noise_result;

int noise_scale_init(noise_scale *n, int capacity);
void noise_scale_free(noise_scale *n);

/* A small batch into the window: the squared norm of its own gradient
 * (normalised by its `valid` items). A small batch without a valid item
 * adds nothing. The gradients themselves never reach this file: their
 * norms and the window's sum are taken on the device (noise_pass.c). */
void noise_window_add(noise_window *w, double sq, int valid);

/* Whether a window enters the estimate: two small batches with valid
 * items at least (one alone has nothing to be compared with). */
int noise_window_usable(const noise_window *w);

/* One window's totals (summed over the ranks already). 0, or -1 when the
 * window is not usable (no estimate). */
int noise_scale_add(noise_scale *n, const noise_window *w);

/* The estimate over the windows so far. 0, or -1 with fewer than two. */
int noise_scale_result(const noise_scale *n, noise_result *out);

#endif
