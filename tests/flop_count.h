/* The FLOPs a window's matrix products do, counted as they are issued, for
 * the tests that hold a model's flops_per_step to them: every GEMM's 2 m n
 * k (times its batch), and the fused attention's products as the unfused
 * path issues them, full T x T squares (2 forward and 4 backward products
 * of 2 T^2 hd per head and sequence), since a step is credited with the
 * model's FLOPs whatever the backend's arrangement. flop_count_begin swaps
 * the backend's ops for counting ones; flop_count_end puts them back and
 * returns the count. One count at a time. */
#ifndef ACCUBENCH_FLOP_COUNT_H
#define ACCUBENCH_FLOP_COUNT_H

#include "backend.h"

typedef struct flop_count {
    backend_ops counting;
} flop_count;

static const backend_ops *flop_count_real;
static double flop_count_flops;

static int flop_count_gemm(backend *b, const gemm_desc *g)
{
    flop_count_flops += 2.0 * g->m * g->n * g->k * (g->batch > 1 ? g->batch : 1);
    return flop_count_real->gemm(b, g);
}

static double flop_count_attention(int products, int hd, int heads, int t, int batch)
{
    return products * 2.0 * t * t * hd * heads * batch;
}

static int flop_count_attention_forward(backend *b, storage s, const void *qkv, void *y,
                                        float *lse, float scale, int hd, int heads, int t,
                                        int batch)
{
    flop_count_flops += flop_count_attention(2, hd, heads, t, batch);
    return flop_count_real->attention_forward(b, s, qkv, y, lse, scale, hd, heads, t, batch);
}

static int flop_count_attention_backward(backend *b, storage s, const void *qkv,
                                         const void *y, const float *lse, const void *dy,
                                         void *dqkv, float scale, int hd, int heads, int t,
                                         int batch)
{
    flop_count_flops += flop_count_attention(4, hd, heads, t, batch);
    return flop_count_real->attention_backward(b, s, qkv, y, lse, dy, dqkv, scale, hd, heads,
                                               t, batch);
}

static inline void flop_count_begin(flop_count *fc, backend *b)
{
    flop_count_real = b->ops;
    flop_count_flops = 0;
    fc->counting = *b->ops;
    fc->counting.gemm = flop_count_gemm;
    if (b->ops->attention_forward) {
        fc->counting.attention_forward = flop_count_attention_forward;
        fc->counting.attention_backward = flop_count_attention_backward;
    }
    b->ops = &fc->counting;
}

static inline double flop_count_end(backend *b)
{
    b->ops = flop_count_real;
    return flop_count_flops;
}

#endif
