/* Steps to a target loss and the fit of McCandlish et al. 2018 ("An
 * Empirical Model of Large-Batch Training", arXiv:1812.06162, eq. 2.11):
 * training at batch B takes S steps and E = S x B examples to reach a
 * given loss, with
 *
 *     S / S_min - 1 = (E / E_min - 1)^-1,  i.e.  S(B) = S_min + E_min / B
 *
 * S is linear in 1/B: least squares over the measured (B, S) pairs gives
 * S_min as the intercept and E_min as the slope, and the critical batch
 * B_crit = E_min / S_min, which the paper finds near the simple noise
 * scale B_simple (docs/noise-scale.md). Pure arithmetic on measured
 * numbers: the curves and rows are read elsewhere (goodput_table.h). */
#ifndef ACCUBENCH_GOODPUT_H
#define ACCUBENCH_GOODPUT_H

#include <stddef.h>

/* The fit needs this many effective batches: two points fix a line
 * through them whatever the relation, so only a third can test it. */
#define GOODPUT_MIN_POINTS 3
/* The relation holds where every measured S lies within this share of
 * the fitted line (steps are interpolated between logged steps, so a
 * curve's own step-to-step noise moves S by a few percent; a quarter is
 * well beyond that and well short of "any shape fits"). */
#define GOODPUT_RESID_BOUND 0.25

/* The first (fractional) step at which the loss is at or below target:
 * linear interpolation between the two logged steps that straddle it
 * (step 0 when the first loss already is; 1 when step 1's is: no
 * training takes a fraction of a step). NAN when the curve never
 * reaches it in its n steps, or leaves the numbers first (a diverged
 * step is NAN: nothing after it counts), and for a target that is NAN. */
double steps_to_target(const double *loss, int n, double target);

/* A curve's losses are each one window's mean loss: noisy as 1/sqrt(the
 * window's examples), so a small E's curve crosses a target early on a
 * lucky window. Each curve is read through a centered moving mean over
 * about this many examples (2 half + 1 steps of E examples), which
 * shrinks that noise alike for every E and leaves a straight stretch of
 * curve where it was (no lag, unlike a trailing mean). */
#define GOODPUT_SMOOTH_EXAMPLES 256

/* The half-width in steps for effective batch e: GOODPUT_SMOOTH_EXAMPLES /
 * (2 e), rounded down (0: no smoothing, from E = 256 on). */
int goodput_smooth_half(long long e);

/* out[t] = the mean of loss[t-h..t+h] with h = min(half, t, n-1-t): the
 * window narrowed alike on both sides at the ends, so that step 0 is the
 * start itself and the last step the end itself. A window holding a NAN
 * (a diverged step) is NAN. */
void smooth_curve(const double *loss, int n, int half, double *out);

/* A curve's final loss: the mean of its last 2 half + 1 losses (the
 * smoothed curve's value at its last whole window), NAN when the curve
 * diverged (its last step is empty). */
double final_loss(const double *loss, int n, int half);

/* The steps of a smoothed curve that steps to target reads: up to its
 * last whole window (the final loss's, at step n - 1 - half), all n where
 * the curve is shorter than a whole window. The narrowed windows after it
 * are a few losses or one: a single lucky window there crossed a target
 * the final loss lies above. */
int smooth_whole_steps(int n, int half);

typedef enum goodput_fit_status {
    GOODPUT_FIT_OK = 0,     /* the relation fits these points */
    GOODPUT_FIT_TOO_FEW,    /* fewer than GOODPUT_MIN_POINTS */
    GOODPUT_FIT_SAME_B,     /* every point at one batch: no slope */
    GOODPUT_FIT_SLOPE,      /* E_min <= 0: S does not fall as B grows */
    GOODPUT_FIT_INTERCEPT,  /* S_min <= 0: no floor of steps */
    GOODPUT_FIT_RESIDUALS,  /* a point off the line by more than the bound */
} goodput_fit_status;

typedef struct goodput_fit {
    goodput_fit_status status;
    size_t n;
    double s_min, e_min; /* the least-squares intercept and slope (NAN when too few) */
    double b_crit;       /* E_min / S_min (NAN unless both are positive) */
    double max_resid;    /* the largest |S - fit| / S over the points */
    /* Standard errors of S_min, E_min and B_crit from the residuals
     * (ordinary least squares, sigma^2 = RSS / (n - 2); B_crit's by the
     * delta method on the ratio, with the two's covariance): one curve per
     * E gives no other handle on how far a step count could move. NAN
     * below three points; with n - 2 = 1 degree of freedom the errors are
     * themselves rough, and the text says how many there are. */
    double s_min_se, e_min_se, b_crit_se;
    size_t dof;          /* n - 2 where n >= 2 */
} goodput_fit;

/* Fits S = S_min + E_min / B to n pairs (b[i] > 0, s[i] > 0); resid, when
 * not NULL, gets each point's (S - fit) / S. The status says whether the
 * relation fits (the numbers are filled whenever n >= 2 and two B differ,
 * so a refusal can still show them). */
void goodput_fit_of(const double *b, const double *s, size_t n, double *resid, goodput_fit *f);

/* What the fit's errors are, in words for plan and the report alike:
 * "standard errors from the residuals, 2 degrees of freedom", and where
 * there is one, that such errors are themselves rough. */
void goodput_dof_text(const goodput_fit *f, char *out, size_t len);

/* Why the fit was refused, in words ("" when it fits). */
const char *goodput_fit_why(goodput_fit_status s);

/* The steps the paper predicts at batch B from the fitted S_min and the
 * measured noise scale standing in for B_crit: S_min (1 + B_simple / B). */
double goodput_predicted_steps(double s_min, double b_simple, double b);

/* That prediction's error from S_min's (the fit's) and B_simple's:
 * (1 + B_simple / B) s_min_se + (S_min / B) b_simple_err, the sum of the
 * two parts rather than their root sum of squares, which holds however
 * the fit and the noise pass correlate (both start from the same
 * weights). NAN where either error is unknown. */
double goodput_predicted_se(double s_min, double s_min_se, double b_simple, double b_simple_err,
                            double b);

#endif
