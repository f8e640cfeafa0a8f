/* The arithmetic of a run, one row per dtype: its name as the command line,
 * the profiles and the CSV spell it, and the relative errors a correct
 * result may show in it. The device side keys the table by the enum
 * (backend.h includes this header for it); the results side, which never
 * sees backend.h, keys it by the name it reads from a CSV. */
#ifndef ACCUBENCH_DTYPE_TABLE_H
#define ACCUBENCH_DTYPE_TABLE_H

#include "axis.h"

/* What the GEMMs compute in. */
typedef enum dtype {
    DTYPE_AUTO = -1, /* not a row: the backend's own choice (run --dtype auto) */
    DTYPE_FP32 = 0,
    DTYPE_TF32 = 1, /* fp32 storage, TF32 tensor-core GEMMs */
    DTYPE_BF16 = 2, /* bf16 weight copy and activations, fp32 accumulation */
} dtype;

#define DTYPE_COUNT 3

typedef struct dtype_info {
    axis_row head; /* name, as the CLI, the profiles and the CSV spell it */
    dtype dt;
    /* The accumulated (`sum`) window's gradient against the full-batch
     * gradient: the rounding of a K-term sum in this precision. The run
     * calls a row over it an error; the report says it is beyond. */
    double grad_tolerance;
    /* gpu-check: one op on the device against the CPU reference. */
    double op_tolerance;
    /* gpu-check: a whole model's gradient and loss. A gradient passes
     * through about ten GEMMs, each rounding in tf32 or bf16: five times
     * the op tolerance there. A real bug (a transpose, a lost scale) is off
     * by far more. */
    double model_tolerance;
} dtype_info;

/* The row of d; the fp32 row when d is out of range. */
const dtype_info *dtype_info_of(dtype d);

/* The row named `name` ("bf16"), or NULL when there is none. */
const dtype_info *dtype_info_named(const char *name);

/* The name of d, "auto" for DTYPE_AUTO, "?" when out of range. */
const char *dtype_name(dtype d);

/* The rows (parse, list: axis.h); DTYPE_AUTO is not one. */
extern const axis dtype_axis;

#endif
