/* The dtype the accumulated gradient is held in across the micro-batches
 * of a window, an axis of the sweep: one table (grad_dtype.c). `fp32`
 * keeps the sum in fp32 (every run before the axis); `bf16` rounds the
 * accumulator to bf16, round to nearest even, after each micro-batch's
 * backward has added into it, so that the sum carried from one
 * micro-batch to the next is exactly what a bf16 buffer would hold.
 *
 * The rounding is emulated on the fp32 gradient buffer (the backend's
 * round_bf16 op): the arithmetic is a bf16 accumulator's, the memory is
 * not. The memory need stays fp32's, and the rows say so. It lives in
 * util because the results side reads the CSV's grad_dtype column by
 * these names, and the report holds each row to the same tolerance the
 * run does (grad_dtype_tolerance). */
#ifndef ACCUBENCH_GRAD_DTYPE_H
#define ACCUBENCH_GRAD_DTYPE_H

#include "axis.h"
#include "dtype_table.h"

typedef int grad_dtype; /* a row of grad_dtype_axis */

enum { GRAD_DTYPE_FP32 = 0, GRAD_DTYPE_BF16, GRAD_DTYPE_ROWS };

typedef struct grad_dtype_info {
    axis_row head;
    /* The accumulator is rounded to bf16 after each micro-batch. */
    int rounds_bf16;
    /* What its roundings may add to the gradient check's relative error,
     * on top of the compute dtype's own tolerance (0: none, the check is
     * the dtype's alone). */
    double accum_tolerance;
    /* A row over its tolerance is a measurement, noted, not an error: the
     * error is what the row is for. 0: over it is an error, as always. */
    int over_is_measured;
} grad_dtype_info;

/* The row of g; the fp32 row when g is out of range. */
const grad_dtype_info *grad_dtype_info_of(grad_dtype g);

/* The gradient check's tolerance for a row computed in `dt` with its
 * gradient accumulated in `g`: the dtype's own plus the accumulator's. */
double grad_dtype_tolerance(const dtype_info *dt, grad_dtype g);

extern const axis grad_dtype_axis;
#define grad_dtype_name(g) axis_name(&grad_dtype_axis, (g))

#endif
