#include "dtype_table.h"

#include <stdio.h>

#include "name_list.h"

static const dtype_info DTYPES[DTYPE_COUNT] = {
    /* dt          name    grad   op     model */
    {DTYPE_FP32, "fp32", 1e-5, 1e-5, 1e-5},
    {DTYPE_TF32, "tf32", 1e-3, 1e-3, 5e-3},
    {DTYPE_BF16, "bf16", 1e-2, 1e-2, 5e-2},
};

static const char *name_at(int i) { return DTYPES[i].name; }

const dtype_info *dtype_info_of(dtype d)
{
    return d >= 0 && d < DTYPE_COUNT ? &DTYPES[d] : &DTYPES[DTYPE_FP32];
}

const dtype_info *dtype_info_named(const char *name)
{
    int i = name_find(DTYPE_COUNT, name_at, name);
    return i < 0 ? NULL : &DTYPES[i];
}

const char *dtype_name(dtype d)
{
    return d >= 0 && d < DTYPE_COUNT ? DTYPES[d].name : d == DTYPE_AUTO ? "auto" : "?";
}

int dtype_parse(const char *s, dtype *out)
{
    const dtype_info *di = dtype_info_named(s);
    if (!di)
        return -1;
    *out = di->dt;
    return 0;
}

const char *dtype_names(void)
{
    static char list[64];
    return name_list(list, sizeof list, DTYPE_COUNT, name_at, ", ");
}
