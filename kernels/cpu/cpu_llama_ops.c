/* The CPU backend's ops for the Llama-style decoder: RMSNorm, SwiGLU, the
 * rotary position embedding and the repeat of grouped-query attention's
 * key and value heads, in fp32 or bf16 storage. The per-element math is
 * elementwise.h's, shared with the GPU, always in fp32: a bf16 element is
 * converted as it is read and rounded once as it is written (cpu_bf16.h),
 * and the columns of RMSNorm, the rotary turn and repeat_kv's backward are
 * converted whole into a thread's scratch for the fp32 column's code; here
 * are the loops around it and how they are cut between threads. A sum runs
 * in vector lanes added in a fixed order (cpu_lanes.h), never in an order
 * that depends on the cut; as in cpu_transformer.c, a sum over columns
 * (RMSNorm's gain gradient) is split by feature, never by column, so that
 * no two threads add into one element and each sum runs in column order:
 * the same bits on any number of threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_bf16.h"
#include "cpu_internal.h"
#include "cpu_lanes.h"
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

#define RMS_INLINE static inline __attribute__((always_inline))

/* ew_rmsnorm_column with its sum of squares in lanes (cpu_lanes.h): a
 * single float sum stays scalar under strict IEEE order. */
RMS_INLINE float rmsnorm_column(const float *x, const float *gamma, float *y, int dim)
{
    lanes acc = {0};
    int i = 0;
    for (; i + LANES <= dim; i += LANES) {
        lanes v = lanes_load(x + i);
        acc += v * v;
    }
    float sq = lanes_sum(acc);
    for (; i < dim; i++)
        sq += x[i] * x[i];
    float rstd = ew_rmsnorm_rstd(sq, dim);
    for (i = 0; i < dim; i++)
        y[i] = x[i] * rstd * gamma[i];
    return rstd;
}

CPU_HOT static void rmsnorm_columns(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        a->rstd[j] = rmsnorm_column((const float *)a->x + off, a->gamma, (float *)a->y + off,
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
        a->rstd[j] = rmsnorm_column(x, a->gamma, y, a->dim);
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

/* ew_rmsnorm_backward_column with its sum of g xhat (g = dy gamma, xhat =
 * x rstd) in lanes. */
RMS_INLINE void rmsnorm_backward_column(const float *dy, const float *x, const float *gamma,
                                        float rstd, float *dx, int dim)
{
    lanes acc = {0};
    int i = 0;
    for (; i + LANES <= dim; i += LANES)
        acc += lanes_load(dy + i) * lanes_load(gamma + i) * (lanes_load(x + i) * rstd);
    float gx_sum = lanes_sum(acc);
    for (; i < dim; i++)
        gx_sum += dy[i] * gamma[i] * (x[i] * rstd);
    float gx_mean = gx_sum / (float)dim;
    for (i = 0; i < dim; i++)
        dx[i] += ew_rmsnorm_dx(dy[i] * gamma[i], x[i] * rstd, rstd, gx_mean);
}

CPU_HOT static void rmsnorm_dx_columns(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        rmsnorm_backward_column((const float *)a->dy + off, (const float *)a->x + off, a->gamma,
                                a->rstd_in[j], a->dx + off, a->dim);
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
        rmsnorm_backward_column(dy, x, a->gamma, a->rstd_in[j], a->dx + j * dim, a->dim);
    }
    free(dy);
}

/* Features [first, last) of dgamma, each summed over every column in
 * column order, then added once: as LayerNorm's parameter sums
 * (cpu_layernorm.c), up to GAIN_BLOCKS blocks of LANES features at a time
 * in registers. One feature at a time, the sum stayed scalar and read a
 * float of every column a row's length apart. */
#define GAIN_BLOCKS 4

CPU_HOT static void rmsnorm_gain_features(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    size_t dim = (size_t)a->dim, i = first;
    while (i + LANES <= last) {
        size_t blocks = (last - i) / LANES;
        blocks = blocks < GAIN_BLOCKS ? blocks : GAIN_BLOCKS;
        lanes g[GAIN_BLOCKS] = {{0}};
        for (int j = 0; j < a->rows; j++) {
            const float *dy = (const float *)a->dy + (size_t)j * dim + i;
            const float *x = (const float *)a->x + (size_t)j * dim + i;
            float rstd = a->rstd_in[j];
            for (size_t k = 0; k < blocks; k++)
                g[k] += lanes_load(dy + k * LANES) * (lanes_load(x + k * LANES) * rstd);
        }
        for (size_t k = 0; k < blocks; k++, i += LANES)
            lanes_store(a->dgamma + i, lanes_load(a->dgamma + i) + g[k]);
    }
    for (; i < last; i++) { /* the same sums, one feature at a time */
        float g = 0.0f;
        for (int j = 0; j < a->rows; j++) {
            size_t off = (size_t)j * dim + i;
            g += ((const float *)a->dy)[off] * (((const float *)a->x)[off] * a->rstd_in[j]);
        }
        a->dgamma[i] += g;
    }
}

/* bf16: features [first, last) of every column converted in turn, their
 * sums kept in fp32 beside them and added once: the same sums, over the
 * columns in the same order, as the fp32 loop's. */
CPU_HOT static void rmsnorm_gain_features_bf16(void *ctx, size_t first, size_t last)
{
    rmsnorm_args *a = ctx;
    size_t dim = (size_t)a->dim, n = last - first;
    float *dy = cpu_chunk_scratch(&a->out_of_memory, 3 * n), *x = dy + n, *g = x + n;
    if (!dy)
        return;
    memset(g, 0, n * sizeof *g);
    for (int j = 0; j < a->rows; j++) {
        bf16_to_f32((const bf16_bits *)a->dy + (size_t)j * dim + first, dy, n);
        bf16_to_f32((const bf16_bits *)a->x + (size_t)j * dim + first, x, n);
        float rstd = a->rstd_in[j];
        for (size_t i = 0; i < n; i++)
            g[i] += dy[i] * (x[i] * rstd);
    }
    for (size_t i = 0; i < n; i++)
        a->dgamma[first + i] += g[i];
    free(dy);
}

int cpu_rmsnorm_backward(backend *b, storage s, const void *dy, const void *x,
                         const float *gamma, const float *rstd, float *dx, float *dgamma,
                         int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    rmsnorm_args a = {.x = x, .dy = dy, .gamma = gamma, .rstd_in = rstd, .dx = dx,
                      .dgamma = dgamma, .dim = dim, .rows = rows};
    int bf16 = s == STORAGE_BF16;
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim),
                     bf16 ? rmsnorm_dx_columns_bf16 : rmsnorm_dx_columns, &a);
    cpu_parallel_features((size_t)dim, (size_t)rows,
                          bf16 ? rmsnorm_gain_features_bf16 : rmsnorm_gain_features, &a);
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
    int ld, heads, hd, t, cols;
    float theta, sign; /* sign of the sine: 1 forward, -1 backward */
    int out_of_memory; /* set by a chunk that could not get its scratch */
} rotary_args;

#define ROTARY_INLINE static inline __attribute__((always_inline))

/* The inverse frequency of each pair e < hd/2 (ew_rotary_angle's, to the
 * bit). */
ROTARY_INLINE void rotary_inv_freqs(const rotary_args *a, float *inv_freq)
{
    for (int e = 0; e < a->hd / 2; e++)
        inv_freq[e] = ew_rotary_inv_freq(e, a->hd, a->theta);
}

/* Position pos's turn of each pair: ew_rotary_angle's angle, its cosine
 * and its sine (signed for the pass). */
ROTARY_INLINE void rotary_turns(const rotary_args *a, const float *inv_freq, size_t pos,
                                float *cosv, float *sinv)
{
    for (int e = 0; e < a->hd / 2; e++) {
        float angle = (float)(int)pos * inv_freq[e];
        cosv[e] = cosf(angle);
        sinv[e] = a->sign * sinf(angle);
    }
}

/* One fp32 column's heads turned, each head's pairs in vector lanes. */
ROTARY_INLINE void rotate_heads(float *col, const rotary_args *a, const float *cosv,
                                const float *sinv)
{
    size_t half = (size_t)a->hd / 2;
    for (int h = 0; h < a->heads; h++) {
        float *x = col + (size_t)h * (size_t)a->hd;
        for (size_t e = 0; e < half; e++) {
            float x0 = x[e], x1 = x[e + half];
            ew_rotate(&x0, &x1, cosv[e], sinv[e]);
            x[e] = x0;
            x[e + half] = x1;
        }
    }
}

/* Positions [first, last): a position's angles are the same in every
 * sequence and every head, so they are worked out once a position (the
 * inverse frequencies once a chunk), and every column at that position,
 * c = pos, pos + t, ..., is turned with them. Worked out column by column,
 * every sequence paid again for a pow in double, a cosf and a sinf an
 * element pair: most of the op. */
CPU_HOT static void rotary_positions(void *ctx, size_t first, size_t last)
{
    rotary_args *a = ctx;
    size_t half = (size_t)a->hd / 2;
    float *inv_freq = cpu_chunk_scratch(&a->out_of_memory, 3 * half);
    if (!inv_freq)
        return;
    float *cosv = inv_freq + half, *sinv = cosv + half;
    rotary_inv_freqs(a, inv_freq);
    for (size_t pos = first; pos < last; pos++) {
        rotary_turns(a, inv_freq, pos, cosv, sinv);
        for (size_t c = pos; c < (size_t)a->cols; c += (size_t)a->t)
            rotate_heads((float *)a->x + c * (size_t)a->ld, a, cosv, sinv);
    }
    free(inv_freq);
}

/* bf16: each column's heads converted into the chunk's scratch, turned as
 * fp32's are and rounded back once. Element by element in place, the
 * conversions of a 16-pair head did not vectorise (the AVX-512 clone's
 * loop takes 32 bf16 at a time). */
CPU_HOT static void rotary_positions_bf16(void *ctx, size_t first, size_t last)
{
    rotary_args *a = ctx;
    size_t half = (size_t)a->hd / 2, rows = (size_t)a->heads * (size_t)a->hd;
    float *inv_freq = cpu_chunk_scratch(&a->out_of_memory, 3 * half + rows);
    if (!inv_freq)
        return;
    float *cosv = inv_freq + half, *sinv = cosv + half, *col = sinv + half;
    rotary_inv_freqs(a, inv_freq);
    for (size_t pos = first; pos < last; pos++) {
        rotary_turns(a, inv_freq, pos, cosv, sinv);
        for (size_t c = pos; c < (size_t)a->cols; c += (size_t)a->t) {
            bf16_bits *x = (bf16_bits *)a->x + c * (size_t)a->ld;
            bf16_to_f32(x, col, rows);
            rotate_heads(col, a, cosv, sinv);
            f32_to_bf16(col, x, rows);
        }
    }
    free(inv_freq);
}

/* Cut between threads by position: each thread's positions in every
 * sequence. */
static int rotary(backend *b, storage s, void *x, int ld, int heads, int hd, int t, int cols,
                  float theta, float sign)
{
    if (heads <= 0 || hd <= 1 || t <= 0 || cols <= 0)
        return BK_OK;
    rotary_args a = {.x = x, .ld = ld, .heads = heads, .hd = hd, .t = t, .cols = cols,
                     .theta = theta, .sign = sign};
    size_t positions = (size_t)(t < cols ? t : cols);
    size_t per_position = ((size_t)cols + positions - 1) / positions * (size_t)heads * (size_t)hd;
    cpu_parallel_for(positions, PARALLEL_MIN_ELEMS / per_position + 1,
                     s == STORAGE_BF16 ? rotary_positions_bf16 : rotary_positions, &a);
    return cpu_chunk_status(b, a.out_of_memory, sign > 0 ? "rotary_forward" : "rotary_backward");
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
    int out_of_memory; /* set by a bf16 chunk that could not get its scratch */
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

/* One fp32 column: each kv head's gradient is the sum of its group's, in
 * head order (from 0, as a float sum starts), LANES elements of a head at
 * a time in vector lanes. An element at a time, the group's loop
 * innermost, the sums stayed scalar. */
static inline __attribute__((always_inline)) void repeat_sum_column(const repeat_args *a,
                                                                   const float *src,
                                                                   float *dst)
{
    size_t hd = (size_t)a->hd, kvd = (size_t)a->kv_heads * hd, qd = kvd * (size_t)a->group;
    for (int p = 0; p < a->parts; p++)
        for (int g = 0; g < a->kv_heads; g++) {
            const float *from = src + (size_t)p * qd + (size_t)g * (size_t)a->group * hd;
            float *to = dst + (size_t)p * kvd + (size_t)g * hd;
            size_t e = 0;
            for (; e + LANES <= hd; e += LANES) {
                lanes sum = {0};
                for (int r = 0; r < a->group; r++)
                    sum += lanes_load(from + (size_t)r * hd + e);
                lanes_store(to + e, sum);
            }
            for (; e < hd; e++) {
                float sum = 0.0f;
                for (int r = 0; r < a->group; r++)
                    sum += from[(size_t)r * hd + e];
                to[e] = sum;
            }
        }
}

CPU_HOT static void repeat_backward_columns_f32(void *ctx, size_t first, size_t last)
{
    const repeat_args *a = ctx;
    size_t kv_rows = (size_t)a->parts * (size_t)a->kv_heads * (size_t)a->hd;
    for (size_t c = first; c < last; c++)
        repeat_sum_column(a, (const float *)a->src + c * (size_t)a->ld_dst,
                          (float *)a->dst + c * kv_rows);
}

/* bf16: a column's heads converted into the chunk's scratch, summed as
 * fp32's are and each sum rounded once. */
CPU_HOT static void repeat_backward_columns_bf16(void *ctx, size_t first, size_t last)
{
    repeat_args *a = ctx;
    size_t kv_rows = (size_t)a->parts * (size_t)a->kv_heads * (size_t)a->hd;
    size_t rows = kv_rows * (size_t)a->group;
    float *src = cpu_chunk_scratch(&a->out_of_memory, rows + kv_rows), *dst = src + rows;
    for (size_t c = first; src && c < last; c++) {
        bf16_to_f32((const bf16_bits *)a->src + c * (size_t)a->ld_dst, src, rows);
        repeat_sum_column(a, src, dst);
        f32_to_bf16(dst, (bf16_bits *)a->dst + c * kv_rows, kv_rows);
    }
    free(src);
}

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
    if (cols <= 0)
        return BK_OK;
    repeat_args a = {.src = ddst, .dst = dkv, .ld_dst = ld_dst, .hd = hd,
                     .kv_heads = kv_heads, .group = group, .parts = parts};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(parts * kv_heads * group * hd),
                     s == STORAGE_BF16 ? repeat_backward_columns_bf16
                                       : repeat_backward_columns_f32,
                     &a);
    return cpu_chunk_status(b, a.out_of_memory, "repeat_kv_backward");
}
