/* The learning rates of the loss curves (lr_grid.h). */
#include "lr_grid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curves_file.h"
#include "parse.h"

int lr_grid_parse(const char *text, lr_grid *g, char *why, size_t why_len)
{
    memset(g, 0, sizeof *g);
    if (!strcmp(text, "sqrt")) {
        g->sqrt_scaled = 1;
        return 0;
    }
    char copy[1024], *items[LR_GRID_MAX + 1];
    if (strlen(text) >= sizeof copy) {
        snprintf(why, why_len, "--lr-grid: a list of at most %zu characters", sizeof copy - 1);
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", text);
    if (!*copy) {
        snprintf(why, why_len, "--lr-grid needs learning rates (a comma list such as "
                 "0.05,0.1,0.2) or sqrt");
        return -1;
    }
    int count = split_list("--lr-grid", copy, items, LR_GRID_MAX, why, why_len);
    for (int i = 0; i < count; i++) {
        if (parse_real("--lr-grid", items[i], -1e300, 1e300, &g->lr[i], why, why_len))
            return -1;
        /* the curves train at (float)rate: one that is 0 or inf there is
         * refused, as --lr refuses one above LR_MAX */
        if (!((float)g->lr[i] > 0) || g->lr[i] > LR_MAX) {
            snprintf(why, why_len, "--lr-grid: every learning rate must be above 0 and at "
                     "most %d, got '%s'", LR_MAX, items[i]);
            return -1;
        }
    }
    g->n = count < 0 ? 0 : count;
    return count < 0 ? -1 : 0;
}

int lr_grid_same_rate(double a, double b)
{
    char x[40], y[40];
    snprintf(x, sizeof x, "%.*g", LR_CURVE_DIGITS, (double)(float)a);
    snprintf(y, sizeof y, "%.*g", LR_CURVE_DIGITS, (double)(float)b);
    return !strcmp(x, y);
}

int lr_grid_at(const lr_grid *g, double base_lr, int e0, int e, double *out)
{
    if (g->sqrt_scaled && e0 > 0) {
        double mid = base_lr * sqrt((double)e / e0);
        out[0] = mid * 0.5;
        out[1] = mid;
        out[2] = mid * 2;
        return 3;
    }
    if (g->n) {
        memcpy(out, g->lr, (size_t)g->n * sizeof *out);
        return g->n;
    }
    out[0] = base_lr;
    return 1;
}

int lr_grid_active(const lr_grid *g)
{
    return g->sqrt_scaled || g->n > 0;
}
