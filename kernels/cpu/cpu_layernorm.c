/* The CPU backend's LayerNorm, forward and backward, in fp32 or bf16
 * storage: elementwise.h's column math with its sums in lanes, a bf16
 * column converted into a thread's scratch and its output rounded once.
 * The parameter gradients are split by feature, never by column
 * (cpu_parallel_features), so each element's sum runs over the columns in
 * order, the same on any number of threads. */
#include <stdlib.h>
#include <string.h>

#include "cpu_bf16.h"
#include "cpu_internal.h"
#include "cpu_lanes.h"
#include "cpu_parallel.h"
#include "elementwise.h"

/* ------------------------------------------------------------ LayerNorm */

typedef struct layernorm_args {
    const void *x, *dy; /* in the op's storage */
    void *y;
    const float *gamma, *beta, *mean, *rstd;
    float *dx, *dgamma, *dbeta, *mean_out, *rstd_out;
    int dim, rows;
    int out_of_memory; /* set by a bf16 chunk that could not get its scratch */
} layernorm_args;

#define LN_INLINE static inline __attribute__((always_inline))

/* The sum over i < n of x[i], or of (x[i] - mean)^2 when `squares`, in
 * lanes (cpu_lanes.h). */
LN_INLINE float lane_sum(const float *x, float mean, int squares, int n)
{
    lanes acc = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES) {
        lanes d = lanes_load(x + i) - mean;
        acc += squares ? d * d : lanes_load(x + i);
    }
    float sum = lanes_sum(acc);
    for (; i < n; i++) {
        float d = x[i] - mean;
        sum += squares ? d * d : x[i];
    }
    return sum;
}

/* ew_layernorm_column with its two sums in lanes. */
LN_INLINE void layernorm_column(const float *x, const float *gamma, const float *beta,
                                float *y, float *mean_out, float *rstd_out, int dim)
{
    float mean = lane_sum(x, 0.0f, 0, dim) / (float)dim;
    float rstd = ew_layernorm_rstd(lane_sum(x, mean, 1, dim), dim);
    for (int i = 0; i < dim; i++)
        y[i] = ew_layernorm_out(x[i], mean, rstd, gamma[i], beta[i]);
    *mean_out = mean;
    *rstd_out = rstd;
}

CPU_HOT static void layernorm_columns(void *ctx, size_t first, size_t last)
{
    const layernorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        layernorm_column((const float *)a->x + off, a->gamma, a->beta, (float *)a->y + off,
                         &a->mean_out[j], &a->rstd_out[j], a->dim);
    }
}

CPU_HOT static void layernorm_columns_bf16(void *ctx, size_t first, size_t last)
{
    layernorm_args *a = ctx;
    size_t dim = (size_t)a->dim;
    float *x = cpu_chunk_scratch(&a->out_of_memory, 2 * dim), *y = x + dim;
    for (size_t j = first; x && j < last; j++) {
        bf16_to_f32((const bf16_bits *)a->x + j * dim, x, dim);
        layernorm_column(x, a->gamma, a->beta, y, &a->mean_out[j], &a->rstd_out[j], a->dim);
        f32_to_bf16(y, (bf16_bits *)a->y + j * dim, dim);
    }
    free(x);
}

int cpu_layernorm_forward(backend *b, storage s, const void *x, const float *gamma,
                          const float *beta, void *y, float *mean, float *rstd, int dim,
                          int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    layernorm_args a = {.x = x, .gamma = gamma, .beta = beta, .y = y, .mean_out = mean,
                        .rstd_out = rstd, .dim = dim, .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim),
                     s == STORAGE_BF16 ? layernorm_columns_bf16 : layernorm_columns, &a);
    return cpu_chunk_status(b, a.out_of_memory, "layernorm_forward");
}

/* ew_layernorm_backward_column with its two sums in lanes: g = dy gamma
 * and g xhat (ew_layernorm_xhat, written out for the vector). */
LN_INLINE void layernorm_backward_column(const float *dy, const float *x, const float *gamma,
                                         float mean, float rstd, float *dx, int dim)
{
    lanes g_acc = {0}, gx_acc = {0};
    int i = 0;
    for (; i + LANES <= dim; i += LANES) {
        lanes g = lanes_load(dy + i) * lanes_load(gamma + i);
        g_acc += g;
        gx_acc += g * ((lanes_load(x + i) - mean) * rstd);
    }
    float g_sum = lanes_sum(g_acc), gx_sum = lanes_sum(gx_acc);
    for (; i < dim; i++) {
        float g = dy[i] * gamma[i];
        g_sum += g;
        gx_sum += g * ew_layernorm_xhat(x[i], mean, rstd);
    }
    float g_mean = g_sum / (float)dim, gx_mean = gx_sum / (float)dim;
    for (i = 0; i < dim; i++)
        dx[i] += ew_layernorm_dx(dy[i] * gamma[i], ew_layernorm_xhat(x[i], mean, rstd), rstd,
                                 g_mean, gx_mean);
}

CPU_HOT static void layernorm_dx_columns(void *ctx, size_t first, size_t last)
{
    const layernorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        layernorm_backward_column((const float *)a->dy + off, (const float *)a->x + off,
                                  a->gamma, a->mean[j], a->rstd[j], a->dx + off, a->dim);
    }
}

CPU_HOT static void layernorm_dx_columns_bf16(void *ctx, size_t first, size_t last)
{
    layernorm_args *a = ctx;
    size_t dim = (size_t)a->dim;
    float *dy = cpu_chunk_scratch(&a->out_of_memory, 2 * dim), *x = dy + dim;
    for (size_t j = first; dy && j < last; j++) {
        bf16_to_f32((const bf16_bits *)a->dy + j * dim, dy, dim);
        bf16_to_f32((const bf16_bits *)a->x + j * dim, x, dim);
        layernorm_backward_column(dy, x, a->gamma, a->mean[j], a->rstd[j], a->dx + j * dim,
                                  a->dim);
    }
    free(dy);
}

/* Features [first, last) of dgamma and dbeta, summed over every column in
 * column order, up to PARAM_BLOCKS blocks of LANES features at a time in
 * registers, then added once into the gradient. Added into it column by
 * column, a block's line of dgamma was written 8192 times in a 8192-column
 * backward, and shared with the next thread's where the gradient is not
 * aligned. Several blocks a pass over the columns, because one block a
 * pass reads a single line of every column, a row's length apart. */
#define PARAM_BLOCKS 4

CPU_HOT static void layernorm_param_features(void *ctx, size_t first, size_t last)
{
    const layernorm_args *a = ctx;
    size_t dim = (size_t)a->dim, i = first;
    while (i + LANES <= last) {
        size_t blocks = (last - i) / LANES;
        blocks = blocks < PARAM_BLOCKS ? blocks : PARAM_BLOCKS;
        lanes g[PARAM_BLOCKS] = {{0}}, b[PARAM_BLOCKS] = {{0}};
        for (int j = 0; j < a->rows; j++) {
            const float *dy = (const float *)a->dy + (size_t)j * dim + i;
            const float *x = (const float *)a->x + (size_t)j * dim + i;
            float mean = a->mean[j], rstd = a->rstd[j];
            for (size_t k = 0; k < blocks; k++) {
                lanes d = lanes_load(dy + k * LANES);
                g[k] += d * ((lanes_load(x + k * LANES) - mean) * rstd);
                b[k] += d;
            }
        }
        for (size_t k = 0; k < blocks; k++, i += LANES) {
            lanes_store(a->dgamma + i, lanes_load(a->dgamma + i) + g[k]);
            lanes_store(a->dbeta + i, lanes_load(a->dbeta + i) + b[k]);
        }
    }
    for (; i < last; i++) { /* the same sums, one feature at a time */
        float g = 0.0f, b = 0.0f;
        for (int j = 0; j < a->rows; j++) {
            size_t off = (size_t)j * dim + i;
            float dy = ((const float *)a->dy)[off];
            g += dy * ew_layernorm_xhat(((const float *)a->x)[off], a->mean[j], a->rstd[j]);
            b += dy;
        }
        a->dgamma[i] += g;
        a->dbeta[i] += b;
    }
}

/* bf16: features [first, last) of every column converted in turn, their
 * sums kept in fp32 beside them and added once: the same sums, over the
 * columns in the same order, as the fp32 loop's. */
CPU_HOT static void layernorm_param_features_bf16(void *ctx, size_t first, size_t last)
{
    layernorm_args *a = ctx;
    size_t dim = (size_t)a->dim, n = last - first;
    float *dy = cpu_chunk_scratch(&a->out_of_memory, 4 * n), *x = dy + n, *g = x + n, *b = g + n;
    if (!dy)
        return;
    memset(g, 0, 2 * n * sizeof *g);
    for (int j = 0; j < a->rows; j++) {
        bf16_to_f32((const bf16_bits *)a->dy + (size_t)j * dim + first, dy, n);
        bf16_to_f32((const bf16_bits *)a->x + (size_t)j * dim + first, x, n);
        for (size_t i = 0; i < n; i++) {
            g[i] += dy[i] * ew_layernorm_xhat(x[i], a->mean[j], a->rstd[j]);
            b[i] += dy[i];
        }
    }
    for (size_t i = 0; i < n; i++) {
        a->dgamma[first + i] += g[i];
        a->dbeta[first + i] += b[i];
    }
    free(dy);
}

int cpu_layernorm_backward(backend *b, storage s, const void *dy, const void *x,
                           const float *gamma, const float *mean, const float *rstd,
                           float *dx, float *dgamma, float *dbeta, int dim, int rows)
{
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    layernorm_args a = {.x = x, .dy = dy, .gamma = gamma, .mean = mean, .rstd = rstd,
                        .dx = dx, .dgamma = dgamma, .dbeta = dbeta, .dim = dim,
                        .rows = rows};
    int bf16 = s == STORAGE_BF16;
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim),
                     bf16 ? layernorm_dx_columns_bf16 : layernorm_dx_columns, &a);
    cpu_parallel_features((size_t)dim, (size_t)rows,
                          bf16 ? layernorm_param_features_bf16 : layernorm_param_features, &a);
    return cpu_chunk_status(b, a.out_of_memory, "layernorm_backward");
}
