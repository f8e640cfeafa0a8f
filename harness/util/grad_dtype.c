/* The gradient accumulator's rows (see grad_dtype.h). */
#include "grad_dtype.h"

/* A bf16 accumulator's tolerance: 2^-8 (3.9e-3), twice the unit roundoff
 * of bf16 (u = 2^-9: an 8-bit significand, half an ulp), so twice the
 * worst relative error of storing the exact full-batch gradient in bf16
 * once. Within it, holding the sum in bf16 costs about what a bf16
 * gradient costs anyway; past it, the error is the K roundings of the
 * accumulation itself, which grows with K (about sqrt(K/3) times one
 * rounding's, for independent roundings of a sum that grows evenly
 * through the window), and the report names the largest K that still
 * passes. */
#define BF16_ACCUM_TOLERANCE (1.0 / 256.0)

static const grad_dtype_info GRAD_DTYPES[] = {
    [GRAD_DTYPE_FP32] = {{"fp32", "the accumulated gradient held in fp32"}, 0, 0, 0},
    [GRAD_DTYPE_BF16] = {{"bf16", "the accumulated gradient rounded to bf16, nearest even, "
                          "after each micro-batch, emulated on fp32 storage"},
                         1, BF16_ACCUM_TOLERANCE, 1},
};
_Static_assert(sizeof GRAD_DTYPES / sizeof GRAD_DTYPES[0] == GRAD_DTYPE_ROWS, "a row each");

const axis grad_dtype_axis = AXIS_OF("grad_dtype", GRAD_DTYPES);

const grad_dtype_info *grad_dtype_info_of(grad_dtype g)
{
    return g >= 0 && g < GRAD_DTYPE_ROWS ? &GRAD_DTYPES[g] : &GRAD_DTYPES[GRAD_DTYPE_FP32];
}

double grad_dtype_tolerance(const dtype_info *dt, grad_dtype g)
{
    return dt->grad_tolerance + grad_dtype_info_of(g)->accum_tolerance;
}
