/* Datasheet peaks of NVIDIA GPUs, computed rather than looked up by name:
 * SM count x clock x dense FLOP per SM per clock for the architecture, so
 * that a GPU this table never heard of still gets a sane number when its
 * architecture is known, and 0 (unknown) otherwise.
 *
 * Plain C with no CUDA header: the unit tests check it against published
 * figures on a machine without a GPU. */
#ifndef ACCUBENCH_CUDA_PEAK_H
#define ACCUBENCH_CUDA_PEAK_H

#include <stddef.h>
#include <string.h>

#include "backend.h"

typedef struct cuda_arch_rate {
    int major, minor;
    /* Dense FLOP per SM per clock: plain fp32 FMA units, TF32 and BF16
     * tensor cores with fp32 accumulation. */
    double fp32, tf32, bf16;
    /* The fraction of the reported (maximum) SM clock at which the vendor
     * quotes the tensor-core peak. Hopper datasheets quote it at 1830 of
     * 1980 MHz (H100/H200 SXM) and 1620 of 1755 MHz (H100 PCIe): 0.924. */
    double tensor_clock_fraction;
} cuda_arch_rate;

static const cuda_arch_rate CUDA_ARCH_RATES[] = {
    {8, 0, 128, 1024, 2048, 1.0},          /* A100: 19.5 / 156 / 312 TF */
    {8, 6, 256, 512, 1024, 1.0},           /* A10, A40, RTX A6000 */
    {8, 9, 256, 512, 1024, 1.0},           /* L4, L40S */
    {9, 0, 256, 2048, 4096, 1830.0 / 1980.0}, /* H100, H200 */
};

/* Peak TFLOP/s for dtype, 0 when the architecture is not in the table.
 * clock_khz is the reported maximum SM clock (cudaDevAttrClockRate).
 * GeForce parts run fp32-accumulated tensor math at half the rate of their
 * data-centre siblings (RTX 3090: 71 TF bf16, RTX 4090: 165 TF). */
static inline double cuda_datasheet_tflops(const char *name, int major, int minor,
                                           int sm_count, int clock_khz, dtype dt)
{
    const cuda_arch_rate *r = NULL;
    for (size_t i = 0; i < sizeof CUDA_ARCH_RATES / sizeof CUDA_ARCH_RATES[0]; i++)
        if (CUDA_ARCH_RATES[i].major == major && CUDA_ARCH_RATES[i].minor == minor)
            r = &CUDA_ARCH_RATES[i];
    if (!r || sm_count <= 0 || clock_khz <= 0)
        return 0.0;
    double hz = (double)clock_khz * 1e3;
    if (dt == DTYPE_FP32)
        return (double)sm_count * hz * r->fp32 / 1e12;
    double per_clock = dt == DTYPE_TF32 ? r->tf32 : r->bf16;
    if (name && strstr(name, "GeForce"))
        per_clock /= 2;
    return (double)sm_count * hz * r->tensor_clock_fraction * per_clock / 1e12;
}

/* The square GEMM size worth timing for the measured peak: large enough to
 * saturate a big GPU, small enough (3 fp32 matrices) for a small one. */
static inline int cuda_peak_gemm_n(size_t mem_total)
{
    return mem_total >= ((size_t)16 << 30) ? 8192 : 4096;
}

#endif
