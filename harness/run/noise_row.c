#include "noise_row.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "noise_pass.h"


int noise_row_fill(model *m, const config *cfg, comm *c, result_row *r)
{
    const split *sp = &cfg->sp;
    if (cfg->noise_windows == 0)
        return BK_OK;
    if (sp->accum * sp->devices < 2) {
        row_note(r, "no noise scale: one micro-batch per window, nothing to compare the "
                       "window with");
        return BK_OK;
    }
    /* A share of the config's time, as the timed pass keeps to --budget-s:
     * the windows asked for, or fewer where the share runs out first. */
    noise_pass_options no = {.windows = cfg->noise_windows, .seed = cfg->seed, .comm = c,
                             .time_s = cfg->budget.budget_s * NOISE_BUDGET_SHARE};
    noise_result n;
    int rc = noise_pass_run(m, sp, &no, &n);
    if (rc || n.windows < 2)
        return rc;
    if (n.windows_run < cfg->noise_windows) /* the error column is over these windows */
        row_note(r, "noise scale from %d of %d windows: the pass keeps to %g of --budget-s "
                    "(%.3g s)", n.windows_run, cfg->noise_windows, NOISE_BUDGET_SHARE,
                 no.time_s);
    /* B_simple counts valid items (tokens for the GPT); E counts examples,
     * padding included: the scale in examples, so that E / it is a ratio. */
    double per_example = n.window_valid / sp->global;
    r->grad_noise_scale = n.b_simple / per_example;
    r->grad_noise_scale_err = n.b_simple_err / per_example;
    r->grad_sq_micro = n.small_sq;
    r->grad_sq_window = n.window_sq;
    if (!(n.grad_sq > 0))
        row_note(r, "noise scale: the |G|^2 estimate is not positive (the gradient is "
                       "mostly noise here); more --noise-windows");
    return BK_OK;
}
