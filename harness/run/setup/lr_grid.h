/* --lr-grid: the learning rates each effective batch's loss curves are
 * trained at (--train-steps), so that every E is judged at a rate that
 * suits it rather than at one rate tuned for another batch (McCandlish et
 * al. compare batches each at its best rate). Either a list of rates, the
 * same at every E, or `sqrt`: three rates around the square-root scaling
 * from the first effective batch, lr x sqrt(E / E0) x {0.5, 1, 2}. Without
 * it every curve trains at --lr alone. */
#ifndef ACCUBENCH_LR_GRID_H
#define ACCUBENCH_LR_GRID_H

#include <stddef.h>

#define LR_GRID_MAX 16
/* The largest learning rate, --lr's and each of the grid's: the optimizer
 * takes a float, and 1e39 (inf as a float) or 1e-50 (0) is no rate. */
#define LR_MAX 10

typedef struct lr_grid {
    double lr[LR_GRID_MAX]; /* the listed rates */
    int n;                  /* 0: no grid (--lr alone), unless sqrt_scaled */
    int sqrt_scaled;        /* `sqrt`: three rates around lr x sqrt(E / E0) */
} lr_grid;

/* Parses "sqrt" or a comma list of positive rates. 0, or -1 with one line
 * in why (an empty list or item, a rate not a number, not above 0 as a
 * float or above LR_MAX, more than LR_GRID_MAX). */
int lr_grid_parse(const char *text, lr_grid *g, char *why, size_t why_len);

/* Whether a and b are one rate as the curves file names it (a float, in
 * LR_CURVE_DIGITS digits): a grid trains such rates once, or the file
 * would hold a config's curve twice under one name. */
int lr_grid_same_rate(double a, double b);

/* The rates at effective batch e: into out (at least LR_GRID_MAX), their
 * count. base_lr is --lr, e0 the first effective batch of the run. Without
 * a grid, base_lr alone. */
int lr_grid_at(const lr_grid *g, double base_lr, int e0, int e, double *out);

/* Whether curves train at more than --lr alone (the curves file then
 * names the rate on each series' summary line). */
int lr_grid_active(const lr_grid *g);

#endif
