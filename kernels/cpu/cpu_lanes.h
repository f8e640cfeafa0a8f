/* Sixteen float lanes held as one value of GCC's vector extension: one zmm
 * register in an AVX-512 clone, two ymm in an AVX2 one, four xmm in the
 * default. The reductions over a row (LayerNorm's sums, the softmaxes'
 * maxima, sums and dot products) run in these and are added lane by lane
 * in a fixed order at the end, so the result does not depend on the
 * threads or the clone. Written as `float lane[16]` arrays instead, gcc
 * kept the arrays on the stack and ran much of each loop as scalar adds
 * and shuffles (a 1024 x 128 LayerNorm backward: 340 us, the same on one
 * thread as on two). */
#ifndef ACCUBENCH_CPU_LANES_H
#define ACCUBENCH_CPU_LANES_H

#include <string.h>

#define LANES 16
typedef float lanes __attribute__((vector_size(LANES * sizeof(float))));
typedef int lanes_mask __attribute__((vector_size(LANES * sizeof(int))));

#define LANES_INLINE static inline __attribute__((always_inline))

/* These helpers take and return lanes by value, which gcc warns (at each
 * use, in every file that includes this) changes the calling convention
 * between clones; they are always inlined, so no call ever passes one. */
#pragma GCC diagnostic ignored "-Wpsabi"

/* LANES floats from p, which need not be aligned. */
LANES_INLINE lanes lanes_load(const float *p)
{
    lanes v;
    memcpy(&v, p, sizeof v);
    return v;
}

LANES_INLINE void lanes_store(float *p, lanes v)
{
    memcpy(p, &v, sizeof v);
}

/* Every lane x. */
LANES_INLINE lanes lanes_splat(float x)
{
    return (lanes){0} + x;
}

/* Lane by lane, a where the mask is set, else b: C has no vector ?:. */
LANES_INLINE lanes lanes_select(lanes_mask m, lanes a, lanes b)
{
    return (lanes)((m & (lanes_mask)a) | (~m & (lanes_mask)b));
}

/* Lane by lane, the larger of a and b (b where they compare equal or a is
 * NaN). */
LANES_INLINE lanes lanes_max2(lanes a, lanes b)
{
    return lanes_select(a > b, a, b);
}

/* The lanes whose index from `first` is at most `last`: lane k of a block
 * starting at element `first` holds element first + k. */
LANES_INLINE lanes_mask lanes_upto(int first, int last)
{
    const lanes_mask iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return iota + first <= last;
}

/* The lanes added in order, lane 0 first. */
LANES_INLINE float lanes_sum(lanes v)
{
    float sum = 0.0f;
    for (int k = 0; k < LANES; k++)
        sum += v[k];
    return sum;
}

/* The largest lane (NaN-free input). */
LANES_INLINE float lanes_max(lanes v)
{
    float m = v[0];
    for (int k = 1; k < LANES; k++)
        m = v[k] > m ? v[k] : m;
    return m;
}

#endif
