/* The CPU backend's ops for the Llama-style decoder: RMSNorm, SwiGLU, the
 * rotary position embedding and the repeat of grouped-query attention's
 * key and value heads, in fp32. The per-element math is elementwise.h's,
 * shared with the GPU; here are the loops around it and how they are cut
 * between threads. As in cpu_transformer.c, a sum over columns (RMSNorm's
 * gain gradient) is split by feature, never by column, so that no two
 * threads add into one element and each sum runs in column order. */
#include <math.h>

#include "cpu_internal.h"
#include "elementwise.h"

/* -------------------------------------------------------------- RMSNorm */

typedef struct rmsnorm_args {
    const float *x, *dy, *gamma, *rstd_in;
    float *y, *dx, *dgamma, *rstd;
    int dim, rows;
} rmsnorm_args;

CPU_HOT static void rmsnorm_columns(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        a->rstd[j] = ew_rmsnorm_column(a->x + off, a->gamma, a->y + off, a->dim);
    }
}

int cpu_rmsnorm_forward(backend *b, storage s, const void *x, const float *gamma, void *y,
                        float *rstd, int dim, int rows)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    rmsnorm_args a = {.x = x, .gamma = gamma, .y = y, .rstd = rstd, .dim = dim, .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim), rmsnorm_columns, &a);
    return BK_OK;
}

CPU_HOT static void rmsnorm_dx_columns(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    for (size_t j = first; j < last; j++) {
        size_t off = j * (size_t)a->dim;
        ew_rmsnorm_backward_column(a->dy + off, a->x + off, a->gamma, a->rstd_in[j],
                                   a->dx + off, a->dim);
    }
}

/* Features [first, last) of dgamma, each summed over every column in
 * column order, then added once. */
CPU_HOT static void rmsnorm_gain_features(void *ctx, size_t first, size_t last)
{
    const rmsnorm_args *a = ctx;
    size_t dim = (size_t)a->dim;
    for (size_t i = first; i < last; i++) {
        float g = 0.0f;
        for (int j = 0; j < a->rows; j++) {
            size_t off = (size_t)j * dim + i;
            g += a->dy[off] * a->x[off] * a->rstd_in[j];
        }
        a->dgamma[i] += g;
    }
}

int cpu_rmsnorm_backward(backend *b, storage s, const void *dy, const void *x,
                         const float *gamma, const float *rstd, float *dx, float *dgamma,
                         int dim, int rows)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    rmsnorm_args a = {.x = x, .dy = dy, .gamma = gamma, .rstd_in = rstd, .dx = dx,
                      .dgamma = dgamma, .dim = dim, .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim), rmsnorm_dx_columns, &a);
    cpu_parallel_features((size_t)dim, (size_t)rows, rmsnorm_gain_features, &a);
    return BK_OK;
}

/* --------------------------------------------------------------- SwiGLU */

typedef struct swiglu_args {
    const float *gate, *up, *dh;
    float *h, *dgate, *dup;
} swiglu_args;

CPU_HOT static void swiglu_range(void *ctx, size_t first, size_t last)
{
    const swiglu_args *a = ctx;
    for (size_t i = first; i < last; i++)
        a->h[i] = ew_swiglu(a->gate[i], a->up[i]);
}

int cpu_swiglu_forward(backend *b, storage s, const void *gate, const void *up, void *h,
                       size_t n)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    swiglu_args a = {.gate = gate, .up = up, .h = h};
    cpu_parallel_for(n, PARALLEL_MIN_EXP_ELEMS, swiglu_range, &a);
    return BK_OK;
}

/* dh is read before dgate (which may alias it) is written. */
CPU_HOT static void swiglu_backward_range(void *ctx, size_t first, size_t last)
{
    const swiglu_args *a = ctx;
    for (size_t i = first; i < last; i++) {
        float g = a->gate[i], u = a->up[i], d = a->dh[i];
        a->dup[i] = ew_swiglu_dup(g, d);
        a->dgate[i] = ew_swiglu_dgate(g, u, d);
    }
}

int cpu_swiglu_backward(backend *b, storage s, const void *gate, const void *up,
                        const void *dh, void *dgate, void *dup, size_t n)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    swiglu_args a = {.gate = gate, .up = up, .dh = dh, .dgate = dgate, .dup = dup};
    cpu_parallel_for(n, PARALLEL_MIN_EXP_ELEMS, swiglu_backward_range, &a);
    return BK_OK;
}

/* --------------------------------------------------------------- rotary */

typedef struct rotary_args {
    float *x;
    int ld, heads, hd, t;
    float theta, sign; /* sign of the sine: 1 forward, -1 backward */
} rotary_args;

/* Columns [first, last): each column's position turns every head alike,
 * so its angles are worked out once a column. */
CPU_HOT static void rotary_columns(void *ctx, size_t first, size_t last)
{
    const rotary_args *a = ctx;
    int half = a->hd / 2;
    for (size_t c = first; c < last; c++) {
        int pos = (int)(c % (size_t)a->t);
        float *col = a->x + c * (size_t)a->ld;
        for (int e = 0; e < half; e++) {
            float angle = ew_rotary_angle(pos, e, a->hd, a->theta);
            float cosv = cosf(angle), sinv = a->sign * sinf(angle);
            for (int h = 0; h < a->heads; h++) {
                float *head = col + (size_t)h * (size_t)a->hd;
                ew_rotate(head + e, head + e + half, cosv, sinv);
            }
        }
    }
}

static int rotary(backend *b, storage s, void *x, int ld, int heads, int hd, int t, int cols,
                  float theta, float sign)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (heads <= 0 || hd <= 1 || t <= 0 || cols <= 0)
        return BK_OK;
    rotary_args a = {.x = x, .ld = ld, .heads = heads, .hd = hd, .t = t, .theta = theta,
                     .sign = sign};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(heads * hd), rotary_columns, &a);
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
    const float *src;
    float *dst;
    int ld_dst, hd, kv_heads, group, parts;
} repeat_args;

CPU_HOT static void repeat_columns(void *ctx, size_t first, size_t last)
{
    const repeat_args *a = ctx;
    size_t hd = (size_t)a->hd, kvd = (size_t)a->kv_heads * hd, qd = kvd * (size_t)a->group;
    for (size_t c = first; c < last; c++) {
        const float *kv = a->src + c * (size_t)a->parts * kvd;
        float *out = a->dst + c * (size_t)a->ld_dst;
        for (int p = 0; p < a->parts; p++)
            for (size_t h = 0; h < qd / hd; h++) {
                const float *from = kv + (size_t)p * kvd + h / (size_t)a->group * hd;
                float *to = out + (size_t)p * qd + h * hd;
                for (size_t e = 0; e < hd; e++)
                    to[e] = from[e];
            }
    }
}

/* Each kv head's gradient is the sum of its group's, in head order. */
CPU_HOT static void repeat_backward_columns(void *ctx, size_t first, size_t last)
{
    const repeat_args *a = ctx;
    size_t hd = (size_t)a->hd, kvd = (size_t)a->kv_heads * hd, qd = kvd * (size_t)a->group;
    for (size_t c = first; c < last; c++) {
        const float *dd = a->src + c * (size_t)a->ld_dst;
        float *dkv = a->dst + c * (size_t)a->parts * kvd;
        for (int p = 0; p < a->parts; p++)
            for (int g = 0; g < a->kv_heads; g++) {
                float *to = dkv + (size_t)p * kvd + (size_t)g * hd;
                for (size_t e = 0; e < hd; e++) {
                    float sum = 0.0f;
                    for (int r = 0; r < a->group; r++)
                        sum += dd[(size_t)p * qd + ((size_t)g * (size_t)a->group + (size_t)r) *
                                                       hd + e];
                    to[e] = sum;
                }
            }
    }
}

int cpu_repeat_kv_forward(backend *b, storage s, const void *kv, void *dst, int ld_dst, int hd,
                          int kv_heads, int group, int parts, int cols)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (cols <= 0)
        return BK_OK;
    repeat_args a = {.src = kv, .dst = dst, .ld_dst = ld_dst, .hd = hd, .kv_heads = kv_heads,
                     .group = group, .parts = parts};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(parts * kv_heads * group * hd),
                     repeat_columns, &a);
    return BK_OK;
}

int cpu_repeat_kv_backward(backend *b, storage s, const void *ddst, int ld_dst, void *dkv,
                           int hd, int kv_heads, int group, int parts, int cols)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (cols <= 0)
        return BK_OK;
    repeat_args a = {.src = ddst, .dst = dkv, .ld_dst = ld_dst, .hd = hd,
                     .kv_heads = kv_heads, .group = group, .parts = parts};
    cpu_parallel_for((size_t)cols, cpu_column_chunk(parts * kv_heads * group * hd),
                     repeat_backward_columns, &a);
    return BK_OK;
}
