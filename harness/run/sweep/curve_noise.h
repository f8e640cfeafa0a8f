/* The noise scale along a loss curve (--train-steps with --noise-windows):
 * B_simple grows as training goes on (McCandlish et al. 2018, section
 * 3.2), so the figure from the starting weights is a lower end of the
 * critical batch. At a few steps of each forward curve the noise pass
 * (noise_pass.h) runs again on the weights as they are there, and the
 * curves file gets the figure on those steps' rows. */
#ifndef ACCUBENCH_CURVE_NOISE_H
#define ACCUBENCH_CURVE_NOISE_H

#include "noise_pass.h"
#include "step_runner.h"

/* The steps measured: 0 and each quarter of the curve (0, N/4, N/2, 3N/4),
 * few enough that a curve costs at most four noise passes more. */
#define CURVE_NOISE_POINTS 4

/* Whether step t of an n-step curve is one of them. */
int curve_noise_due(int t, int n);

/* The noise scale at the runner's weights, in examples as grad_noise_scale
 * counts them, from `windows` windows of fresh learnable data drawn from
 * `seed`; *b and *err NAN where the split has one small batch a window.
 * The gradients the pass leaves are zeroed again, as the next step
 * expects them. BK_* status. */
int curve_noise_at(step_runner *run, const split *sp, int windows, uint64_t seed, comm *c,
                   double *b, double *err);

#endif
