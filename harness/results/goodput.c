/* Steps to target and the S(B) fit (goodput.h). */
#include "goodput.h"

#include <math.h>
#include <stdio.h>

double steps_to_target(const double *loss, int n, double target)
{
    for (int t = 0; t < n; t++) {
        if (!isfinite(loss[t]))
            return NAN; /* diverged before reaching it */
        /* not "loss > target": a target that is not a number (the default
         * where every curve diverged, none having a final loss to set it)
         * is reached by none, where that test met it at step 0 */
        if (!(loss[t] <= target))
            continue;
        if (t == 0)
            return 0;
        /* reached within the first step: one step, the least any training
         * takes (the line below would say a fraction of it, a time to
         * target shorter than the step) */
        if (t == 1)
            return 1;
        /* the straight line between the logged steps t-1 (above) and t */
        return (t - 1) + (loss[t - 1] - target) / (loss[t - 1] - loss[t]);
    }
    return NAN;
}

int goodput_smooth_half(long long e)
{
    return e > 0 ? (int)(GOODPUT_SMOOTH_EXAMPLES / (2 * e)) : 0;
}

void smooth_curve(const double *loss, int n, int half, double *out)
{
    for (int t = 0; t < n; t++) {
        int h = half;
        if (h > t)
            h = t;
        if (h > n - 1 - t)
            h = n - 1 - t;
        double sum = 0;
        for (int u = t - h; u <= t + h; u++)
            sum += loss[u];
        out[t] = sum / (2 * h + 1);
    }
}

double final_loss(const double *loss, int n, int half)
{
    if (n < 1 || !isfinite(loss[n - 1]))
        return NAN; /* a curve that stopped early diverged */
    int from = n - 1 - 2 * half < 0 ? 0 : n - 1 - 2 * half;
    double sum = 0;
    for (int t = from; t < n; t++)
        sum += loss[t];
    return sum / (n - from);
}

int smooth_whole_steps(int n, int half)
{
    /* a curve shorter than a whole window has none: every step of it is
     * read, its final loss the mean of them all */
    return n - 1 - 2 * half >= 0 ? n - half : n > 0 ? n : 0;
}

/* The fit's standard errors (goodput.h) from its residual sum of squares:
 * var(E_min) = s2 / Sxx, var(S_min) = s2 (1/n + mx^2 / Sxx), their
 * covariance -mx s2 / Sxx, and B_crit = E_min / S_min's relative variance
 * the sum of theirs less twice the relative covariance. */
static void fit_errors(goodput_fit *f, size_t n, double mx, double sxx, double rss)
{
    if (n < GOODPUT_MIN_POINTS)
        return;
    double s2 = rss / (double)(n - 2), ve = s2 / sxx, vs = s2 * (1 / (double)n + mx * mx / sxx),
           cov = -mx * s2 / sxx;
    f->e_min_se = sqrt(ve);
    f->s_min_se = sqrt(vs);
    if (!(f->b_crit > 0))
        return;
    double rel = ve / (f->e_min * f->e_min) + vs / (f->s_min * f->s_min) -
                 2 * cov / (f->e_min * f->s_min);
    f->b_crit_se = f->b_crit * sqrt(rel > 0 ? rel : 0);
}

void goodput_fit_of(const double *b, const double *s, size_t n, double *resid, goodput_fit *f)
{
    *f = (goodput_fit){.status = GOODPUT_FIT_TOO_FEW, .n = n, .s_min = NAN, .e_min = NAN,
                       .b_crit = NAN, .max_resid = NAN, .s_min_se = NAN, .e_min_se = NAN,
                       .b_crit_se = NAN, .dof = n >= 2 ? n - 2 : 0};
    if (n < 2)
        return;
    /* ordinary least squares of S on x = 1/B */
    double mx = 0, ms = 0;
    for (size_t i = 0; i < n; i++) {
        mx += 1 / b[i];
        ms += s[i];
    }
    mx /= (double)n;
    ms /= (double)n;
    double sxx = 0, sxs = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = 1 / b[i] - mx;
        sxx += dx * dx;
        sxs += dx * (s[i] - ms);
    }
    if (!(sxx > 0)) {
        f->status = n < GOODPUT_MIN_POINTS ? GOODPUT_FIT_TOO_FEW : GOODPUT_FIT_SAME_B;
        return;
    }
    f->e_min = sxs / sxx;
    f->s_min = ms - f->e_min * mx;
    f->max_resid = 0;
    double rss = 0;
    for (size_t i = 0; i < n; i++) {
        double d = s[i] - (f->s_min + f->e_min / b[i]), r = d / s[i];
        rss += d * d;
        if (resid)
            resid[i] = r;
        if (fabs(r) > f->max_resid)
            f->max_resid = fabs(r);
    }
    if (f->s_min > 0 && f->e_min > 0)
        f->b_crit = f->e_min / f->s_min;
    fit_errors(f, n, mx, sxx, rss);
    if (n < GOODPUT_MIN_POINTS)
        f->status = GOODPUT_FIT_TOO_FEW;
    else if (!(f->e_min > 0))
        f->status = GOODPUT_FIT_SLOPE;
    else if (!(f->s_min > 0))
        f->status = GOODPUT_FIT_INTERCEPT;
    else if (f->max_resid > GOODPUT_RESID_BOUND)
        f->status = GOODPUT_FIT_RESIDUALS;
    else
        f->status = GOODPUT_FIT_OK;
}

void goodput_dof_text(const goodput_fit *f, char *out, size_t len)
{
    snprintf(out, len, "standard errors from the residuals, %zu degree%s of freedom%s", f->dof,
             f->dof == 1 ? "" : "s",
             f->dof == 1 ? ": three points, so the errors themselves are rough" : "");
}

const char *goodput_fit_why(goodput_fit_status s)
{
    switch (s) {
    case GOODPUT_FIT_OK:
        return "";
    case GOODPUT_FIT_TOO_FEW:
        return "the fit needs at least three effective batches that reach the target";
    case GOODPUT_FIT_SAME_B:
        return "every point is at one effective batch: no slope to fit";
    case GOODPUT_FIT_SLOPE:
        return "the steps do not fall as E grows (E_min, the slope in 1/B, is not positive)";
    case GOODPUT_FIT_INTERCEPT:
        return "the fitted floor of steps S_min is not positive";
    case GOODPUT_FIT_RESIDUALS:
        return "a measured point lies off the fitted line by more than the bound";
    }
    return "";
}

double goodput_predicted_steps(double s_min, double b_simple, double b)
{
    return s_min > 0 && b_simple > 0 && b > 0 ? s_min * (1 + b_simple / b) : NAN;
}

double goodput_predicted_se(double s_min, double s_min_se, double b_simple, double b_simple_err,
                            double b)
{
    if (isnan(goodput_predicted_steps(s_min, b_simple, b)) || !(s_min_se >= 0) ||
        !(b_simple_err >= 0))
        return NAN;
    return (1 + b_simple / b) * s_min_se + s_min / b * b_simple_err;
}
