#include "dtype_table.h"

#include <stdio.h>


static const dtype_info DTYPES[] = {
    /* name and description, dt, then the tolerances: grad, op, model */
    {{"fp32", "fp32 storage and GEMMs"}, DTYPE_FP32, 1e-5, 1e-5, 1e-5},
    {{"tf32", "fp32 storage, TF32 tensor-core GEMMs"}, DTYPE_TF32, 1e-3, 1e-3, 5e-3},
    {{"bf16", "bf16 weight copy and activations, fp32 accumulation"}, DTYPE_BF16, 1e-2, 1e-2,
     5e-2},
};

const axis dtype_axis = AXIS_OF("dtype", DTYPES);

/* The enum's values are the rows' indices (backend.h keys storage by them). */
_Static_assert(sizeof DTYPES / sizeof DTYPES[0] == DTYPE_COUNT, "a row per dtype");

const dtype_info *dtype_info_of(dtype d)
{
    return d >= 0 && d < DTYPE_COUNT ? &DTYPES[d] : &DTYPES[DTYPE_FP32];
}

const dtype_info *dtype_info_named(const char *name)
{
    int i = axis_find(&dtype_axis, name);
    return i < 0 ? NULL : &DTYPES[i];
}

const char *dtype_name(dtype d)
{
    return d >= 0 && d < DTYPE_COUNT ? DTYPES[d].head.name : d == DTYPE_AUTO ? "auto" : "?";
}
