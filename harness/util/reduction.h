/* How the loss of an accumulation window is normalised, and the scale each
 * micro-batch's gradient gets for it: one table (reduction.c), a row per
 * reduction. The data says how many loss items are valid where; a row says
 * what to divide by, and whether that is a correct reduction (`exact`: the
 * accumulated gradient equals the full-batch gradient) or a known bug
 * kept as a demonstration. The gradient check's verdict, the usage text,
 * the report, the projection and the dump manifest read `exact`; nothing
 * compares a reduction's name. It lives in util because the results side,
 * which reads reductions by name from a CSV, asks it too.
 *
 * Adding one: its row in REDUCTIONS. */
#ifndef ACCUBENCH_REDUCTION_H
#define ACCUBENCH_REDUCTION_H

#include "axis.h"

typedef int reduction; /* a row of reduction_axis */

/* The rows with a name in code: REDUCTION_SUM is the default. */
enum { REDUCTION_SUM = 0, REDUCTION_MEAN_OF_MEANS, REDUCTION_NO_SCALE };

typedef struct reduction_info {
    axis_row head;
    /* The window's gradient equals the full-batch gradient (up to rounding):
     * the gradient check holds it to the dtype's tolerance. Otherwise a
     * known bug, whose error the row shows. */
    int exact;
    /* The scale one micro-batch's loss gradient gets: 1 over the product
     * of the counts named here (REDUCTION_BY_*), 0 where one of them is 0.
     * Data, not code, so that the rule can be written out (reduction_rule)
     * and the PyTorch peer runs a row it reads (docs/peers.md). */
    unsigned divides;
} reduction_info;

/* The counts a scale divides by: the window's valid items, the micro-batch's
 * valid items, the window's micro-batch count K. */
enum {
    REDUCTION_BY_WINDOW = 1u << 0,
    REDUCTION_BY_MICRO = 1u << 1,
    REDUCTION_BY_STEPS = 1u << 2,
};

extern const axis reduction_axis;
#define REDUCTION_COUNT (reduction_axis.count)
#define reduction_name(r) axis_name(&reduction_axis, (r))

/* The row of r; r must be a valid reduction. */
const reduction_info *reduction_info_of(reduction r);
/* Whether the reduction named `name` (as a CSV spells it) is exact: 0 for
 * a name no row has. */
int reduction_exact_named(const char *name);
/* "sum is right", "sum and x are right": the exact rows, for --help. */
const char *reduction_exact_list(char *out, size_t len);

/* A row's scale as text: "1/window", "1/(micro*k)", "1/micro": the words
 * the dump manifest and `accubench --list-reductions` write and the peer
 * reads. */
const char *reduction_rule(reduction r, char *out, size_t len);

/* The scale one micro-batch's gradient gets: every valid item's loss
 * gradient is multiplied by it. */
float loss_scale(reduction r, int valid_in_micro, int valid_in_window, int accum_steps);

/* The scales of one window of `accum` micro-batches holding valid[k] valid
 * loss items each: scales[k] for micro-batch k, and scales[accum] for the
 * whole window as one batch (1 / its valid items: the reference the
 * gradient check compares against). scales holds accum + 1 floats. */
void reduction_scales(reduction r, const int *valid, int accum, float *scales);

#endif
