/* The CPU backend's transformer ops: LayerNorm, causal softmax, the token
 * and position embeddings, the residual add and the heads' arrangement for
 * attention, in fp32. The per-column
 * math is elementwise.h's; here are the loops around it and how they are
 * cut between threads. Every sum over columns (the LayerNorm and embedding
 * parameter gradients) is split by feature, never by column, so that each
 * thread owns its outputs: no two threads add into one element, and each
 * element's sum runs over the columns in order, the same on any number of
 * threads. */
#include <string.h>

#include "cpu_internal.h"
#include "cpu_lanes.h"
#include "cpu_parallel.h"
#include "elementwise.h"

/* A chunk of columns long enough to be worth a thread: at least
 * PARALLEL_MIN_ELEMS elements in all. */
size_t cpu_column_chunk(int rows)
{
    return PARALLEL_MIN_ELEMS / (size_t)(rows > 0 ? rows : 1) + 1;
}

/* A loop over `dim` features, each over all `cols` columns, is cut between
 * threads in whole blocks of FEATURE_BLOCK features (a cache line of
 * floats), at least PARALLEL_MIN_ELEMS elements a chunk. Cut anywhere, two
 * threads read and write parts of the same lines of every column: an
 * 8192 x 128 LayerNorm backward ran twice as long on two threads as on
 * one. fn still gets a range of features. */
#define FEATURE_BLOCK 16

typedef struct feature_loop {
    cpu_range_fn fn;
    void *ctx;
    size_t dim;
} feature_loop;

static void feature_blocks(void *ctx, size_t first, size_t last)
{
    const feature_loop *l = ctx;
    size_t end = last * FEATURE_BLOCK;
    l->fn(l->ctx, first * FEATURE_BLOCK, end < l->dim ? end : l->dim);
}

void cpu_parallel_features(size_t dim, size_t cols, cpu_range_fn fn, void *ctx)
{
    feature_loop l = {fn, ctx, dim};
    size_t per_block = FEATURE_BLOCK * (cols ? cols : 1);
    cpu_parallel_for((dim + FEATURE_BLOCK - 1) / FEATURE_BLOCK,
                     (PARALLEL_MIN_ELEMS + per_block - 1) / per_block, feature_blocks, &l);
}

/* ------------------------------------------------------------ LayerNorm */

typedef struct layernorm_args {
    const float *x, *dy, *gamma, *beta, *mean, *rstd;
    float *y, *dx, *dgamma, *dbeta, *mean_out, *rstd_out;
    int dim, rows;
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
        layernorm_column(a->x + off, a->gamma, a->beta, a->y + off, &a->mean_out[j],
                         &a->rstd_out[j], a->dim);
    }
}

int cpu_layernorm_forward(backend *b, storage s, const void *x, const float *gamma,
                          const float *beta, void *y, float *mean, float *rstd, int dim,
                          int rows)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    layernorm_args a = {.x = x, .gamma = gamma, .beta = beta, .y = y, .mean_out = mean,
                        .rstd_out = rstd, .dim = dim, .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim), layernorm_columns, &a);
    return BK_OK;
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
        layernorm_backward_column(a->dy + off, a->x + off, a->gamma, a->mean[j], a->rstd[j],
                                  a->dx + off, a->dim);
    }
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
            const float *dy = a->dy + (size_t)j * dim + i, *x = a->x + (size_t)j * dim + i;
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
            g += a->dy[off] * ew_layernorm_xhat(a->x[off], a->mean[j], a->rstd[j]);
            b += a->dy[off];
        }
        a->dgamma[i] += g;
        a->dbeta[i] += b;
    }
}

int cpu_layernorm_backward(backend *b, storage s, const void *dy, const void *x,
                           const float *gamma, const float *mean, const float *rstd,
                           float *dx, float *dgamma, float *dbeta, int dim, int rows)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (dim <= 0 || rows <= 0)
        return BK_OK;
    layernorm_args a = {.x = x, .dy = dy, .gamma = gamma, .mean = mean, .rstd = rstd,
                        .dx = dx, .dgamma = dgamma, .dbeta = dbeta, .dim = dim,
                        .rows = rows};
    cpu_parallel_for((size_t)rows, cpu_column_chunk(dim), layernorm_dx_columns, &a);
    cpu_parallel_features((size_t)dim, (size_t)rows, layernorm_param_features, &a);
    return BK_OK;
}

/* --------------------------------------------- row max and exponentials */

/* Running maxima and sums in lanes (cpu_lanes.h; for the cross-entropy
 * and the causal softmax, scale 1 in the cross-entropy): ew_softmax_xent's
 * loops reduce into one float, which gcc keeps scalar (it may not reorder
 * a float sum), so each of the row's exponentials ran one at a time. */
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

/* e = exp(l * scale - maxv) into `e`; returns their sum. Both helpers are inlined
 * into the caller's AVX-512 and AVX2 clones (CPU_HOT), or they would run as
 * the default clone's scalar code. The exponentials of a block are written
 * first (a loop with no sum, which vectorises) and then added as lanes. */
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

/* ------------------------------------------------------- causal softmax */

/* Column c of the `count` [t x t] blocks is query c % t of block c / t, and
 * starts at c * t. */
typedef struct softmax_args {
    const float *in, *probs;
    float *out;
    float scale;
    int t;
} softmax_args;

/* ew_causal_softmax_column's result with its max and sum in lanes: the
 * scalar reductions kept every column's loops one element at a time (3 to 6 ns
 * a score on gpt-cpu). Keys j <= i alone are read; the rest is 0. */
static inline __attribute__((always_inline)) void softmax_column(const float *s, float *p,
                                                                 float scale, int i, int t)
{
    float maxv = row_max(s, scale, i + 1);
    float inv_sum = 1.0f / row_exp_sum(s, p, scale, maxv, i + 1);
    for (int j = 0; j <= i; j++)
        p[j] *= inv_sum;
    if (i + 1 < t)
        memset(p + i + 1, 0, (size_t)(t - i - 1) * sizeof *p);
}

CPU_HOT static void causal_softmax_columns(void *ctx, size_t first, size_t last)
{
    const softmax_args *a = ctx;
    for (size_t c = first; c < last; c++) {
        size_t off = c * (size_t)a->t;
        softmax_column(a->in + off, a->out + off, a->scale, (int)(c % (size_t)a->t), a->t);
    }
}

int cpu_causal_softmax_forward(backend *b, storage s, const void *scores, void *probs,
                               float scale, int t, int count)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (t <= 0 || count <= 0)
        return BK_OK;
    softmax_args a = {.in = scores, .out = probs, .scale = scale, .t = t};
    cpu_parallel_for((size_t)count * (size_t)t, cpu_column_chunk(t), causal_softmax_columns, &a);
    return BK_OK;
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

CPU_HOT static void causal_softmax_backward_columns(void *ctx, size_t first, size_t last)
{
    const softmax_args *a = ctx;
    for (size_t c = first; c < last; c++) {
        size_t off = c * (size_t)a->t;
        softmax_backward_column(a->probs + off, a->in + off, a->out + off, a->scale,
                                (int)(c % (size_t)a->t), a->t);
    }
}

int cpu_causal_softmax_backward(backend *b, storage s, const void *probs,
                                const void *dprobs, void *dscores, float scale, int t,
                                int count)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (t <= 0 || count <= 0)
        return BK_OK;
    softmax_args a = {.in = dprobs, .probs = probs, .out = dscores, .scale = scale, .t = t};
    cpu_parallel_for((size_t)count * (size_t)t, cpu_column_chunk(t),
                     causal_softmax_backward_columns, &a);
    return BK_OK;
}

/* ----------------------------------------------------------- embeddings */

typedef struct embedding_args {
    const int *tokens;
    const float *wte, *wpe, *dout;
    float *out, *dwte, *dwpe;
    int dim, t;
    size_t cols;
} embedding_args;

CPU_HOT static void embedding_columns(void *ctx, size_t first, size_t last)
{
    const embedding_args *a = ctx;
    size_t dim = (size_t)a->dim;
    for (size_t c = first; c < last; c++) {
        const float *te = a->wte + (size_t)a->tokens[c] * dim;
        float *o = a->out + c * dim;
        if (!a->wpe) { /* no position table: a rotary model */
            memcpy(o, te, dim * sizeof *o);
            continue;
        }
        const float *pe = a->wpe + (c % (size_t)a->t) * dim;
        for (size_t i = 0; i < dim; i++)
            o[i] = te[i] + pe[i];
    }
}

int cpu_embedding_forward(backend *b, storage s, const int *tokens, const float *wte,
                          const float *wpe, void *out, int dim, int t, int batch)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (dim <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
    embedding_args a = {.tokens = tokens, .wte = wte, .wpe = wpe, .out = out, .dim = dim,
                        .t = t};
    cpu_parallel_for((size_t)batch * (size_t)t, cpu_column_chunk(dim), embedding_columns, &a);
    return BK_OK;
}

/* Features [first, last) of every column added into its token's and its
 * position's gradient: a token repeated anywhere in the micro-batch adds
 * each of its columns in turn, on one thread. */
CPU_HOT static void embedding_grad_features(void *ctx, size_t first, size_t last)
{
    const embedding_args *a = ctx;
    size_t dim = (size_t)a->dim;
    for (size_t c = 0; c < a->cols; c++) {
        const float *d = a->dout + c * dim;
        float *te = a->dwte + (size_t)a->tokens[c] * dim;
        if (!a->dwpe) { /* no position table */
            for (size_t i = first; i < last; i++)
                te[i] += d[i];
            continue;
        }
        float *pe = a->dwpe + (c % (size_t)a->t) * dim;
        for (size_t i = first; i < last; i++) {
            te[i] += d[i];
            pe[i] += d[i];
        }
    }
}

int cpu_embedding_backward(backend *b, storage s, const int *tokens, const void *dout,
                           float *dwte, float *dwpe, int dim, int t, int batch)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (dim <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
    embedding_args a = {.tokens = tokens, .dout = dout, .dwte = dwte, .dwpe = dwpe,
                        .dim = dim, .t = t, .cols = (size_t)batch * (size_t)t};
    cpu_parallel_features((size_t)dim, a.cols, embedding_grad_features, &a);
    return BK_OK;
}

/* ------------------------------------------------------------ residual */

typedef struct add_args {
    float *y;
    const float *x;
} add_args;

CPU_HOT static void add_range(void *ctx, size_t first, size_t last)
{
    const add_args *a = ctx;
    float *y = a->y; /* no restrict: y += y is allowed */
    const float *x = a->x;
    for (size_t i = first; i < last; i++)
        y[i] += x[i];
}

int cpu_add(backend *b, storage s, void *y, const void *x, size_t n)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    add_args a = {y, x};
    cpu_parallel_for(n, PARALLEL_MIN_ELEMS, add_range, &a);
    return BK_OK;
}

/* ------------------------------------------------------ head arrangement */

typedef struct permute_args {
    const float *src;
    float *dst;
    size_t hd, heads, t, batch, parts;
    int to_tokens;
} permute_args;

/* Token columns [first, last): each holds parts x heads runs of hd
 * elements, each run one row of its head's block. */
CPU_HOT static void permute_columns(void *ctx, size_t first, size_t last)
{
    const permute_args *a = ctx;
    size_t hd = a->hd, width = a->parts * a->heads * hd, part = a->batch * a->heads * a->t * hd;
    for (size_t c = first; c < last; c++) {
        size_t q = c / a->t, i = c % a->t;
        for (size_t p = 0; p < a->parts; p++)
            for (size_t h = 0; h < a->heads; h++) {
                size_t tok = c * width + (p * a->heads + h) * hd;
                size_t blk = p * part + ((q * a->heads + h) * a->t + i) * hd;
                if (a->to_tokens)
                    memcpy(a->dst + tok, a->src + blk, hd * sizeof(float));
                else
                    memcpy(a->dst + blk, a->src + tok, hd * sizeof(float));
            }
    }
}

int cpu_permute_heads(backend *b, storage s, const void *src, void *dst, int hd, int heads,
                      int t, int batch, int parts, int to_tokens)
{
    if (cpu_f32_only(b, s))
        return BK_UNSUPPORTED;
    if (hd <= 0 || heads <= 0 || t <= 0 || batch <= 0 || parts <= 0)
        return BK_OK;
    permute_args a = {.src = src, .dst = dst, .hd = (size_t)hd, .heads = (size_t)heads,
                      .t = (size_t)t, .batch = (size_t)batch, .parts = (size_t)parts,
                      .to_tokens = to_tokens};
    cpu_parallel_for((size_t)batch * (size_t)t, cpu_column_chunk(parts * heads * hd),
                     permute_columns, &a);
    return BK_OK;
}

/* ------------------------------------------------ softmax cross-entropy */

/* ew_softmax_xent's loss and gradient, (softmax - onehot) * scale, with
 * one exponential an element rather than two: the exponentials are kept
 * in dlogits and scaled by scale / sum. dlogits must not alias logits. */
CPU_HOT float cpu_softmax_xent_column(const float *logits, float *dlogits, int classes,
                                      int label, int valid, float scale)
{
    if (!valid) {
        memset(dlogits, 0, (size_t)classes * sizeof *dlogits);
        return 0.0f;
    }
    float maxv = row_max(logits, 1.0f, classes);
    float sum = row_exp_sum(logits, dlogits, 1.0f, maxv, classes);
    float k = scale / sum;
    for (int c = 0; c < classes; c++)
        dlogits[c] *= k;
    dlogits[label] -= scale;
    return logf(sum) + maxv - logits[label];
}
