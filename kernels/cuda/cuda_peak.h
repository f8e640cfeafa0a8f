/* Datasheet peaks of NVIDIA GPUs, looked up by the device's name: the
 * vendor's dense figures (no structured sparsity) for the dtypes accubench
 * computes in, the denominator of mfu_datasheet_pct and the bound the
 * measured peak is checked against (check-gpu's peak stage). A device the
 * table does not name gets 0 (unknown: the column is left empty), never a
 * figure worked out from its clock and SM count, which would be a guess
 * presented as the vendor's.
 *
 * Plain C with no CUDA header: the unit tests check it on a machine
 * without a GPU. */
#ifndef ACCUBENCH_CUDA_PEAK_H
#define ACCUBENCH_CUDA_PEAK_H

#include <stddef.h>
#include <string.h>

#include "backend.h"

typedef struct cuda_datasheet_row {
    /* A part of the name cudaGetDeviceProperties reports ("NVIDIA H100
     * 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB"); the first
     * row whose part the name holds wins, so a variant comes before the
     * family name it contains. */
    const char *name_part;
    /* Dense TFLOP/s, fp32 accumulation: plain fp32 (CUDA cores), tf32 and
     * bf16 tensor cores; the datasheets' sparse figures halved. */
    double fp32, tf32, bf16;
} cuda_datasheet_row;

static const cuda_datasheet_row CUDA_DATASHEET[] = {
    {"H100 NVL", 60.0, 417.5, 835.5},   /* 2 x 400 W dual-board part */
    {"H100 PCIe", 51.0, 378.0, 756.5},
    {"H100", 67.0, 494.5, 989.5},       /* SXM5: "H100 80GB HBM3", "H100 SXM5" */
    {"H200 NVL", 60.0, 417.5, 835.5},
    {"H200", 67.0, 494.5, 989.5},       /* SXM: "NVIDIA H200" */
    {"A100", 19.5, 156.0, 312.0},       /* SXM4 and PCIe: the same figures */
    {"B200", 75.0, 1125.0, 2250.0},     /* per GPU of an HGX B200 */
    {"L40S", 91.6, 183.0, 362.05},
};

/* Dense peak TFLOP/s for dtype on the device named `name`; 0 when the
 * table does not name it. */
static inline double cuda_datasheet_tflops(const char *name, dtype dt)
{
    if (!name)
        return 0.0;
    for (size_t i = 0; i < sizeof CUDA_DATASHEET / sizeof CUDA_DATASHEET[0]; i++) {
        const cuda_datasheet_row *r = &CUDA_DATASHEET[i];
        if (strstr(name, r->name_part))
            return dt == DTYPE_FP32 ? r->fp32 : dt == DTYPE_TF32 ? r->tf32 : r->bf16;
    }
    return 0.0;
}

/* The square GEMM size worth timing for the measured peak: large enough to
 * saturate a big GPU, small enough (3 fp32 matrices) for a small one. */
static inline int cuda_peak_gemm_n(size_t mem_total)
{
    return mem_total >= ((size_t)16 << 30) ? 8192 : 4096;
}

#endif
