/* The CPU backend's ops for the Llama-style decoder: RMSNorm, SwiGLU, the
 * rotary position embedding and the repeat of grouped-query attention's
 * key and value heads, in fp32 or bf16 storage. The per-element math is
 * elementwise.h's, shared with the GPU, always in fp32: a bf16 element is
 * converted as it is read and rounded once as it is written (cpu_bf16.h),
 * and RMSNorm's columns are converted whole into a thread's scratch for the
 * fp32 column's code; here are the loops around it and how they are cut
 * between threads. As in cpu_transformer.c, a sum over columns (RMSNorm's
 * gain gradient) is split by feature, never by column, so that no two
 * threads add into one element and each sum runs in column order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_bf16.h"
#include "cpu_internal.h"
#include "elementwise.h"

/* -------------------------------------------------------------- RMSNorm */

typedef struct rmsnorm_args {
    const void *x, *dy; /* in the op's storage */
    void *y;
    const float *gamma, *rstd_in;
    float *dx, *dgamma, *rstd;
    int dim, rows;
    int out_of_memory; /* set by a bf16 chunk that could not get its scratch */
} rmsnorm_args;

CPU_HOT static void rmsnorm_columns(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        a->rstd[j] = ew_rmsnorm_column((const float *)a->x + off, a->gamma, (float *)a->y + off,
                                       a->dim);
    }
}

CPU_HOT static void rmsnorm_columns_bf16(void *ctx, size_t first, size_t last)
{
    rmsnorm_args *a = ctx;
    size_t dim = (size_t)a->dim;
    float *x = cpu_chunk_scratch(&a->out_of_memory, 2 * dim), *y = x + dim;
    for (size_t j = first; x && j < last; j++) {
        bf16_to_f32((const bf16_bits *)a->x + j * dim, x, dim);
        a->rstd[j] = ew_rmsnorm_column(x, a->gamma, y, a->dim);
        f32_to_bf16(y, (bf16_bits *)a->y + j * dim, dim);
    }
    free(x);
}

int cpu_rmsnorm_forward(backend *b, storage s, const void *x, const float *gamma, void *y,
                        float *rstd, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    rmsnorm_args a = {.x = x, .gamma = gamma, .y = y, .rstd = rstd, .dim = dim, .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim),
                     s == STORAGE_BF16 ? rmsnorm_columns_bf16 : rmsnorm_columns, &a);
    return cpu_chunk_status(b, a.out_of_memory, "rmsnorm_forward");
}

CPU_HOT static void rmsnorm_dx_columns(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        ew_rmsnorm_backward_column((const float *)a->dy + off, (const float *)a->x + off,
                                   a->gamma, a->rstd_in[j], a->dx + off, a->dim);
    }
}

CPU_HOT static void rmsnorm_dx_columns_bf16(void *ctx, size_t first, size_t last)
{
    rmsnorm_args *a = ctx;
    size_t dim = (size_t)a->dim;
    float *dy = cpu_chunk_scratch(&a->out_of_memory, 2 * dim), *x = dy + dim;
    for (size_t j = first; dy && j < last; j++) {
        bf16_to_f32((const bf16_bits *)a->dy + j * dim, dy, dim);
        bf16_to_f32((const bf16_bits *)a->x + j * dim, x, dim);
        ew_rmsnorm_backward_column(dy, x, a->gamma, a->rstd_in[j], a->dx + j * dim, a->dim);
    }
    free(dy);
}

/* Features [first, last) of dgamma, each summed over every column in
 * column order, then added once. */
BF16_INLINE void rmsnorm_gain_body(void *ctx, storage s, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    size_t dim = (size_t)a->dim;
    for (size_t i = first; i < last; i++) {
        float g = 0.0f;
        for (int j = 0; j < a->rows; j++) {
            size_t off = (size_t)j * dim + i;
            g += load_as_f32(a->dy, s, off) * load_as_f32(a->x, s, off) * a->rstd_in[j];
        }
        a->dgamma[i] += g;
    }
}
CPU_STORAGE_LOOPS(rmsnorm_gain_features, rmsnorm_gain_body)

int cpu_rmsnorm_backward(backend *b, storage s, const void *dy, const void *x,
                         const float *gamma, const float *rstd, float *dx, float *dgamma,
                         int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    rmsnorm_args a = {.x = x, .dy = dy, .gamma = gamma, .rstd_in = rstd, .dx = dx,
                      .dgamma = dgamma, .dim = dim, .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim),
                     s == STORAGE_BF16 ? rmsnorm_dx_columns_bf16 : rmsnorm_dx_columns, &a);
    cpu_parallel_features((size_t)dim, (size_t)rows, rmsnorm_gain_features(s), &a);
    return cpu_chunk_status(b, a.out_of_memory, "rmsnorm_backward");
}

/* --------------------------------------------------------------- SwiGLU */

typedef struct swiglu_args {
    const void *gate, *up, *dh;
    void *h, *dgate, *dup;
} swiglu_args;

BF16_INLINE void swiglu_body(void *ctx, storage s, size_t first, size_t last)
{
    const swiglu_args *a = ctx;
    for (size_t i = first; i < last; i++)
        store_from_f32(a->h, s, i, ew_swiglu(load_as_f32(a->gate, s, i),
                                             load_as_f32(a->up, s, i)));
}
CPU_STORAGE_LOOPS(swiglu_range, swiglu_body)

int cpu_swiglu_forward(backend *b, storage s, const void *gate, const void *up, void *h,
                       size_t n)
{
    (void)b;
    swiglu_args a = {.gate = gate, .up = up, .h = h};
    cpu_parallel_for(n, PARALLEL_MIN_EXP_ELEMS, swiglu_range(s), &a);
    return BK_OK;
}

/* dh is read before dgate (which may alias it) is written. */
BF16_INLINE void swiglu_backward_body(void *ctx, storage s, size_t first, size_t last)
{
    const swiglu_args *a = ctx;
    for (size_t i = first; i < last; i++) {
        float g = load_as_f32(a->gate, s, i), u = load_as_f32(a->up, s, i);
        float d = load_as_f32(a->dh, s, i);
        store_from_f32(a->dup, s, i, ew_swiglu_dup(g, d));
        store_from_f32(a->dgate, s, i, ew_swiglu_dgate(g, u, d));
    }
}
CPU_STORAGE_LOOPS(swiglu_backward_range, swiglu_backward_body)

int cpu_swiglu_backward(backend *b, storage s, const void *gate, const void *up,
                        const void *dh, void *dgate, void *dup, size_t n)
{
    (void)b;
    swiglu_args a = {.gate = gate, .up = up, .dh = dh, .dgate = dgate, .dup = dup};
    cpu_parallel_for(n, PARALLEL_MIN_EXP_ELEMS, swiglu_backward_range(s), &a);
    return BK_OK;
}

/* --------------------------------------------------------------- rotary */

typedef struct rotary_args {
    void *x; /* in the op's storage */
    int ld, heads, hd, t;
    float theta, sign; /* sign of the sine: 1 forward, -1 backward */
} rotary_args;

/* Columns [first, last): each column's position turns every head alike,
 * so its angles are worked out once a column. */
BF16_INLINE void rotary_body(void *ctx, storage s, size_t first, size_t last)
{
    const rotary_args *a = ctx;
    int half = a->hd / 2;
    for (size_t c = first; c < last; c++) {
        int pos = (int)(c % (size_t)a->t);
        size_t col = c * (size_t)a->ld;
        for (int e = 0; e < half; e++) {
            float angle = ew_rotary_angle(pos, e, a->hd, a->theta);
            float cosv = cosf(angle), sinv = a->sign * sinf(angle);
            for (int h = 0; h < a->heads; h++) {
                size_t i = col + (size_t)h * (size_t)a->hd + (size_t)e;
                float x0 = load_as_f32(a->x, s, i), x1 = load_as_f32(a->x, s, i + half);
                ew_rotate(&x0, &x1, cosv, sinv);
                store_from_f32(a->x, s, i, x0);
                store_from_f32(a->x, s, i + half, x1);
            }
        }
    }
}
CPU_STORAGE_LOOPS(rotary_columns, rotary_body)

static int rotary(backend *b, storage s, void *x, int ld, int heads, int hd, int t, int cols,
                  float theta, float sign)
{
    (void)b;
    if (heads <= 0 || hd <= 1 || t <= 0 || cols <= 0)
        return BK_OK;
    rotary_args a = {.x = x, .ld = ld, .heads = heads, .hd = hd, .t = t, .theta = theta,
                     .sign = sign};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(heads * hd), rotary_columns(s), &a);
    return BK_OK;
}

int cpu_rotary_forward(backend *b, storage s, void *x, int ld, int heads, int hd, int t,
                       int cols, float theta)
{
    return rotary(b, s, x, ld, heads, hd, t, cols, theta, 1.0f);
}

int cpu_rotary_backward(backend *b, storage s, void *dx, int ld, int heads, int hd, int t,
                        int cols, float theta)
{
    return rotary(b, s, dx, ld, heads, hd, t, cols, theta, -1.0f);
}

/* ------------------------------------------------------------ repeat_kv */

typedef struct repeat_args {
    const void *src; /* in the op's storage */
    void *dst;
    int ld_dst, hd, kv_heads, group, parts;
} repeat_args;

/* A bf16 element read and stored again is the same bits. */
BF16_INLINE void repeat_body(void *ctx, storage s, size_t first, size_t last)
{
    const repeat_args *a = ctx;
    size_t hd = (size_t)a->hd, kvd = (size_t)a->kv_heads * hd, qd = kvd * (size_t)a->group;
    for (size_t c = first; c < last; c++) {
        size_t kv = c * (size_t)a->parts * kvd, out = c * (size_t)a->ld_dst;
        for (int p = 0; p < a->parts; p++)
            for (size_t h = 0; h < qd / hd; h++) {
                size_t from = kv + (size_t)p * kvd + h / (size_t)a->group * hd;
                size_t to = out + (size_t)p * qd + h * hd;
                for (size_t e = 0; e < hd; e++)
                    store_from_f32(a->dst, s, to + e, load_as_f32(a->src, s, from + e));
            }
    }
}
CPU_STORAGE_LOOPS(repeat_columns, repeat_body)

/* Each kv head's gradient is the sum of its group's, in head order. */
BF16_INLINE void repeat_backward_body(void *ctx, storage s, size_t first, size_t last)
{
    const repeat_args *a = ctx;
    size_t hd = (size_t)a->hd, kvd = (size_t)a->kv_heads * hd, qd = kvd * (size_t)a->group;
    for (size_t c = first; c < last; c++) {
        size_t dd = c * (size_t)a->ld_dst, dkv = c * (size_t)a->parts * kvd;
        for (int p = 0; p < a->parts; p++)
            for (int g = 0; g < a->kv_heads; g++) {
                size_t to = dkv + (size_t)p * kvd + (size_t)g * hd;
                for (size_t e = 0; e < hd; e++) {
                    float sum = 0.0f; /* in fp32, rounded once */
                    for (int r = 0; r < a->group; r++)
                        sum += load_as_f32(a->src, s,
                                           dd + (size_t)p * qd +
                                               ((size_t)g * (size_t)a->group + (size_t)r) *
                                                   hd + e);
                    store_from_f32(a->dst, s, to + e, sum);
                }
            }
    }
}
CPU_STORAGE_LOOPS(repeat_backward_columns, repeat_backward_body)

int cpu_repeat_kv_forward(backend *b, storage s, const void *kv, void *dst, int ld_dst, int hd,
                          int kv_heads, int group, int parts, int cols)
{
    (void)b;
    if (cols <= 0)
        return BK_OK;
    repeat_args a = {.src = kv, .dst = dst, .ld_dst = ld_dst, .hd = hd, .kv_heads = kv_heads,
                     .group = group, .parts = parts};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(parts * kv_heads * group * hd),
                     repeat_columns(s), &a);
    return BK_OK;
}

int cpu_repeat_kv_backward(backend *b, storage s, const void *ddst, int ld_dst, void *dkv,
                           int hd, int kv_heads, int group, int parts, int cols)
{
    (void)b;
    if (cols <= 0)
        return BK_OK;
    repeat_args a = {.src = ddst, .dst = dkv, .ld_dst = ld_dst, .hd = hd,
                     .kv_heads = kv_heads, .group = group, .parts = parts};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(parts * kv_heads * group * hd),
                     repeat_backward_columns(s), &a);
    return BK_OK;
}
