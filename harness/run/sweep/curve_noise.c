/* The noise scale along a loss curve (curve_noise.h). */
#include "curve_noise.h"

#include <math.h>

#include "noise_row.h"

int curve_noise_due(int t, int n)
{
    for (int q = 0; q < CURVE_NOISE_POINTS; q++)
        if (t == q * n / CURVE_NOISE_POINTS)
            return 1;
    return 0;
}

int curve_noise_at(step_runner *run, const split *sp, int windows, uint64_t seed, comm *c,
                   double *b, double *err)
{
    *b = *err = NAN;
    noise_result n;
    /* no time limit: the curves already cost N steps, and a short pass
     * would give a wider error here than at the start */
    noise_pass_options no = {.windows = windows, .seed = seed, .comm = c, .time_s = 0};
    /* ZeRO-2: a training step left the gradient sliced, and the pass
     * reads each small batch's gradient whole (the next step slices it) */
    int rc = model_grads_whole(run->m);
    if (!rc)
        rc = noise_pass_run(run->m, sp, &no, &n);
    if (!rc)
        rc = model_zero_grads(run->m, run->loss_sum);
    if (!rc)
        noise_in_examples(&n, sp->global, b, err); /* none: stays NAN */
    return rc;
}
