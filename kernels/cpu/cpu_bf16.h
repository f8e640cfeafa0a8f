/* bf16 storage on the CPU: runs of elements converted to fp32 and back,
 * round to nearest even, through elementwise.h's conversions (the ones the
 * CUDA kernels use), so that a bf16 op rounds where the GPU's does: its
 * inputs are read exactly, its math is fp32, each output is rounded once.
 * Always inlined, so that they vectorise inside each caller's AVX-512 and
 * AVX2 clones (CPU_HOT). Seen only by kernels/cpu/. */
#ifndef ACCUBENCH_CPU_BF16_H
#define ACCUBENCH_CPU_BF16_H

#include <stddef.h>

#include "backend.h"
#include "cpu_internal.h"
#include "elementwise.h"

typedef unsigned short bf16_bits;

#define BF16_INLINE static inline __attribute__((always_inline))

BF16_INLINE void bf16_to_f32(const bf16_bits *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ew_bf16_bits_to_f32(src[i]);
}

BF16_INLINE void f32_to_bf16(const float *src, bf16_bits *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ew_f32_to_bf16_bits(src[i]);
}

/* Element i of a buffer in storage s, as fp32; and x stored there. For the
 * loops whose fp32 and bf16 cases are one body with s a constant (each is
 * inlined into a caller per storage). */
BF16_INLINE float load_as_f32(const void *p, storage s, size_t i)
{
    return s == STORAGE_BF16 ? ew_bf16_bits_to_f32(((const bf16_bits *)p)[i])
                             : ((const float *)p)[i];
}

BF16_INLINE void store_from_f32(void *p, storage s, size_t i, float x)
{
    if (s == STORAGE_BF16)
        ((bf16_bits *)p)[i] = ew_f32_to_bf16_bits(x);
    else
        ((float *)p)[i] = x;
}

/* An op's fp32 and bf16 loops over one body: `name`_f32 and `name`_bf16,
 * each a cpu_range_fn calling body(ctx, s, first, last) with s a constant,
 * and `name`(s) choosing between them. The body is always inlined, so the
 * fp32 loop is the code it was before bf16 and the bf16 loop vectorises
 * its conversions. */
#define CPU_STORAGE_LOOPS(name, body)                                                      \
    CPU_HOT static void name##_f32(void *ctx, size_t first, size_t last)                   \
    {                                                                                      \
        body(ctx, STORAGE_F32, first, last);                                               \
    }                                                                                      \
    CPU_HOT static void name##_bf16(void *ctx, size_t first, size_t last)                  \
    {                                                                                      \
        body(ctx, STORAGE_BF16, first, last);                                              \
    }                                                                                      \
    static cpu_range_fn name(storage s)                                                    \
    {                                                                                      \
        return s == STORAGE_BF16 ? name##_bf16 : name##_f32;                               \
    }

#endif
