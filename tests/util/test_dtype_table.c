/* One row per dtype: the name the CLI and the CSV use, and the tolerances
 * the run, the report and gpu-check hold results to. */
#include <string.h>

#include "check.h"
#include "dtype_table.h"

int main(void)
{
    for (int i = 0; i < DTYPE_COUNT; i++) {
        const dtype_info *di = dtype_info_of((dtype)i);
        CHECK(di->dt == (dtype)i);
        CHECK(dtype_info_named(di->head.name) == di);
        CHECK(strcmp(dtype_name((dtype)i), di->head.name) == 0);
        /* A lower precision is never held to a tighter bound. */
        if (i > 0)
            CHECK(di->grad_tolerance >= dtype_info_of((dtype)(i - 1))->grad_tolerance);
    }
    CHECK(dtype_info_named("fp16") == NULL);
    CHECK(strcmp(dtype_name(DTYPE_AUTO), "auto") == 0);
    CHECK(strcmp(dtype_name((dtype)7), "?") == 0);
    CHECK(dtype_info_of((dtype)7) == dtype_info_of(DTYPE_FP32));

    /* The numbers the run, gpu-check and the report have always used. */
    CHECK(dtype_info_named("fp32")->grad_tolerance == 1e-5);
    CHECK(dtype_info_named("tf32")->grad_tolerance == 1e-3);
    CHECK(dtype_info_named("bf16")->grad_tolerance == 1e-2);
    CHECK(dtype_info_of(DTYPE_FP32)->model_tolerance == 1e-5);
    for (int i = 0; i < DTYPE_COUNT; i++) {
        const dtype_info *di = dtype_info_of((dtype)i);
        CHECK(di->op_tolerance == di->grad_tolerance);
        if (di->dt != DTYPE_FP32)
            CHECK_NEAR(di->model_tolerance, 5 * di->op_tolerance, 1e-15);
    }
    return check_finish("test_dtype_table");
}
