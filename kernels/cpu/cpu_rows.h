/* A row's reductions in lanes (cpu_lanes.h): the maxima, exponentials and
 * dot products of the softmaxes (the causal softmax, the fused attention,
 * the cross-entropy). Always inlined, so that they run in the caller's
 * AVX-512 and AVX2 clones (CPU_HOT), not as the default clone's scalar
 * code. Seen only by kernels/cpu/. */
#ifndef ACCUBENCH_CPU_ROWS_H
#define ACCUBENCH_CPU_ROWS_H

#include "cpu_lanes.h"
#include "elementwise.h"

/* The largest of l[c] * scale over c < classes (scale 1 in the
 * cross-entropy), in lanes: ew_softmax_xent's loops reduce into one float,
 * which gcc keeps scalar (it may not reorder a float sum), so each of the
 * row's exponentials ran one at a time. */
static inline __attribute__((always_inline)) float row_max(const float *l, float scale,
                                                          int classes)
{
    int c = 0;
    float maxv = l[0] * scale;
    if (classes >= LANES) {
        lanes m = lanes_splat(maxv);
        for (; c + LANES <= classes; c += LANES) {
            lanes v = lanes_load(l + c) * scale;
            m = lanes_max2(v, m);
        }
        maxv = lanes_max(m);
    }
    for (; c < classes; c++)
        maxv = l[c] * scale > maxv ? l[c] * scale : maxv;
    return maxv;
}

/* e = exp(l * scale - maxv) into `e`; returns their sum. The
 * exponentials of a block are written first (a loop with no sum, which
 * vectorises) and then added as lanes. */
static inline __attribute__((always_inline)) float row_exp_sum(const float *l, float *e,
                                                              float scale, float maxv,
                                                              int classes)
{
    lanes acc = {0};
    int c = 0;
    for (; c + LANES <= classes; c += LANES) {
        for (int k = 0; k < LANES; k++)
            e[c + k] = ew_exp(l[c + k] * scale - maxv);
        acc += lanes_load(e + c);
    }
    float sum = lanes_sum(acc);
    for (; c < classes; c++) {
        e[c] = ew_exp(l[c] * scale - maxv);
        sum += e[c];
    }
    return sum;
}

/* ew_causal_softmax_backward_column with its dot product in lanes. dp may
 * alias ds: every dp[j] is read for the dot before any ds[j] is written. */
static inline __attribute__((always_inline)) void softmax_backward_column(
    const float *p, const float *dp, float *ds, float scale, int i, int t)
{
    lanes acc = {0};
    int j = 0;
    for (; j + LANES <= i + 1; j += LANES)
        acc += lanes_load(p + j) * lanes_load(dp + j);
    float dot = lanes_sum(acc);
    for (; j <= i; j++)
        dot += p[j] * dp[j];
    for (j = 0; j <= i; j++)
        ds[j] = scale * p[j] * (dp[j] - dot);
    for (; j < t; j++)
        ds[j] = 0.0f;
}

#endif
