/* The estimator of noise_scale.h: per-window unbiased estimates of tr(S)
 * and |G|^2, their means, the ratio and its jackknife error. */
#include "noise_scale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int noise_scale_init(noise_scale *n, int capacity)
{
    memset(n, 0, sizeof *n);
    n->trace = malloc((size_t)capacity * sizeof *n->trace);
    n->g2 = malloc((size_t)capacity * sizeof *n->g2);
    if (!n->trace || !n->g2) {
        noise_scale_free(n);
        return -1;
    }
    n->capacity = capacity;
    return 0;
}

void noise_scale_free(noise_scale *n)
{
    free(n->trace);
    free(n->g2);
    memset(n, 0, sizeof *n);
}

void noise_window_add(noise_window *w, double sq, int valid)
{
    if (valid <= 0)
        return;
    w->small_sq_sum += sq;
    w->inv_valid_sum += 1.0 / valid;
    w->smalls++;
    w->valid += valid;
}

int noise_window_usable(const noise_window *w)
{
    return w->smalls >= 2;
}

int noise_scale_add(noise_scale *n, const noise_window *w)
{
    if (!noise_window_usable(w) || n->windows >= n->capacity)
        return -1;
    double s = w->small_sq_sum / w->smalls;
    double inv_small = w->inv_valid_sum / w->smalls, inv_big = 1.0 / w->valid;
    double trace = (s - w->window_sq) / (inv_small - inv_big);
    n->trace[n->windows] = trace;
    n->g2[n->windows] = w->window_sq - trace * inv_big;
    n->small_sq += s;
    n->window_sq += w->window_sq;
    n->valid += w->valid;
    n->windows++;
    return 0;
}

/* Leave-one-out ratios: the jackknife standard error of sum(t) / sum(g). */
static double jackknife_err(const noise_scale *n, double t_sum, double g_sum)
{
    int w = n->windows;
    double mean = 0, ss = 0;
    for (int i = 0; i < w; i++)
        mean += (t_sum - n->trace[i]) / (g_sum - n->g2[i]);
    mean /= w;
    for (int i = 0; i < w; i++) {
        double d = (t_sum - n->trace[i]) / (g_sum - n->g2[i]) - mean;
        ss += d * d;
    }
    return sqrt((double)(w - 1) / w * ss);
}

int noise_scale_result(const noise_scale *n, noise_result *out)
{
    out->b_simple = out->b_simple_err = out->trace_sigma = out->grad_sq = NAN;
    out->small_sq = out->window_sq = out->window_valid = NAN;
    out->windows = out->windows_run = out->windows_complete = n->windows;
    if (n->windows < 2)
        return -1;
    double t_sum = 0, g_sum = 0;
    for (int i = 0; i < n->windows; i++) {
        t_sum += n->trace[i];
        g_sum += n->g2[i];
    }
    out->trace_sigma = t_sum / n->windows;
    out->grad_sq = g_sum / n->windows;
    out->small_sq = n->small_sq / n->windows;
    out->window_sq = n->window_sq / n->windows;
    out->window_valid = n->valid / n->windows;
    out->b_simple = t_sum / g_sum;
    out->b_simple_err = jackknife_err(n, t_sum, g_sum);
    return 0;
}
