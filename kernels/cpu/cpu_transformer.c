/* The CPU backend's transformer ops: causal softmax, the token
 * and position embeddings, the residual add and the heads' arrangement for
 * attention, in fp32 or bf16 storage. The per-column
 * math is elementwise.h's, always in fp32: a bf16 column is converted into
 * a thread's scratch, run through the fp32 column's code and its output
 * rounded once (cpu_bf16.h); here are the loops around it and how they are
 * cut between threads. Every sum over columns (the LayerNorm and embedding
 * parameter gradients) is split by feature, never by column, so that each
 * thread owns its outputs: no two threads add into one element, and each
 * element's sum runs over the columns in order, the same on any number of
 * threads. LayerNorm is cpu_layernorm.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_bf16.h"
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

/* A chunk's fp32 scratch of n floats, or NULL with the op's flag set. */
float *cpu_chunk_scratch(int *out_of_memory, size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof *p);
    if (!p)
        __atomic_store_n(out_of_memory, 1, __ATOMIC_RELAXED);
    return p;
}

/* BK_OOM with the reason where a chunk set the flag. */
int cpu_chunk_status(backend *b, int out_of_memory, const char *op)
{
    if (!out_of_memory)
        return BK_OK;
    snprintf(b->error, sizeof b->error, "%s: out of host memory for a chunk's scratch", op);
    return BK_OOM;
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
    const void *in, *probs; /* in the op's storage */
    void *out;
    float scale;
    int t;
    int out_of_memory; /* set by a bf16 chunk that could not get its scratch */
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
        softmax_column((const float *)a->in + off, (float *)a->out + off, a->scale,
                       (int)(c % (size_t)a->t), a->t);
    }
}

CPU_HOT static void causal_softmax_columns_bf16(void *ctx, size_t first, size_t last)
{
    softmax_args *a = ctx;
    size_t t = (size_t)a->t;
    float *in = cpu_chunk_scratch(&a->out_of_memory, 2 * t), *out = in + t;
    for (size_t c = first; in && c < last; c++) {
        bf16_to_f32((const bf16_bits *)a->in + c * t, in, t);
        softmax_column(in, out, a->scale, (int)(c % t), a->t);
        f32_to_bf16(out, (bf16_bits *)a->out + c * t, t);
    }
    free(in);
}

int cpu_causal_softmax_forward(backend *b, storage s, const void *scores, void *probs,
                               float scale, int t, int count)
{
    if (t <= 0 || count <= 0)
        return BK_OK;
    softmax_args a = {.in = scores, .out = probs, .scale = scale, .t = t};
    cpu_parallel_for((size_t)count * (size_t)t, cpu_column_chunk(t),
                     s == STORAGE_BF16 ? causal_softmax_columns_bf16 : causal_softmax_columns,
                     &a);
    return cpu_chunk_status(b, a.out_of_memory, "causal_softmax_forward");
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
        softmax_backward_column((const float *)a->probs + off, (const float *)a->in + off,
                                (float *)a->out + off, a->scale, (int)(c % (size_t)a->t),
                                a->t);
    }
}

CPU_HOT static void causal_softmax_backward_columns_bf16(void *ctx, size_t first, size_t last)
{
    softmax_args *a = ctx;
    size_t t = (size_t)a->t;
    float *p = cpu_chunk_scratch(&a->out_of_memory, 2 * t), *dp = p + t;
    for (size_t c = first; p && c < last; c++) {
        bf16_to_f32((const bf16_bits *)a->probs + c * t, p, t);
        bf16_to_f32((const bf16_bits *)a->in + c * t, dp, t);
        softmax_backward_column(p, dp, dp, a->scale, (int)(c % t), a->t);
        f32_to_bf16(dp, (bf16_bits *)a->out + c * t, t);
    }
    free(p);
}

int cpu_causal_softmax_backward(backend *b, storage s, const void *probs,
                                const void *dprobs, void *dscores, float scale, int t,
                                int count)
{
    if (t <= 0 || count <= 0)
        return BK_OK;
    softmax_args a = {.in = dprobs, .probs = probs, .out = dscores, .scale = scale, .t = t};
    cpu_parallel_for((size_t)count * (size_t)t, cpu_column_chunk(t),
                     s == STORAGE_BF16 ? causal_softmax_backward_columns_bf16
                                       : causal_softmax_backward_columns, &a);
    return cpu_chunk_status(b, a.out_of_memory, "causal_softmax_backward");
}

/* ----------------------------------------------------------- embeddings */

typedef struct embedding_args {
    const int *tokens;
    const float *wte, *wpe;
    const void *dout; /* in the op's storage, as out */
    void *out;
    float *dwte, *dwpe;
    int dim, t;
    size_t cols;
} embedding_args;

BF16_INLINE void embedding_body(void *ctx, storage s, size_t first, size_t last)
{
    const embedding_args *a = ctx;
    size_t dim = (size_t)a->dim;
    for (size_t c = first; c < last; c++) {
        const float *te = a->wte + (size_t)a->tokens[c] * dim;
        if (!a->wpe && s == STORAGE_F32) { /* no position table: a rotary model */
            memcpy((float *)a->out + c * dim, te, dim * sizeof *te);
            continue;
        }
        const float *pe = a->wpe ? a->wpe + (c % (size_t)a->t) * dim : NULL;
        for (size_t i = 0; i < dim; i++)
            store_from_f32(a->out, s, c * dim + i, pe ? te[i] + pe[i] : te[i]);
    }
}
CPU_STORAGE_LOOPS(embedding_columns, embedding_body)

int cpu_embedding_forward(backend *b, storage s, const int *tokens, const float *wte,
                          const float *wpe, void *out, int dim, int t, int batch)
{
    (void)b;
    if (dim <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
    embedding_args a = {.tokens = tokens, .wte = wte, .wpe = wpe, .out = out, .dim = dim,
                        .t = t};
    cpu_parallel_for((size_t)batch * (size_t)t, cpu_column_chunk(dim), embedding_columns(s),
                     &a);
    return BK_OK;
}

/* Features [first, last) of every column added into its token's and its
 * position's gradient: a token repeated anywhere in the micro-batch adds
 * each of its columns in turn, on one thread. */
BF16_INLINE void embedding_grad_body(void *ctx, storage s, size_t first, size_t last)
{
    const embedding_args *a = ctx;
    size_t dim = (size_t)a->dim;
    for (size_t c = 0; c < a->cols; c++) {
        float *te = a->dwte + (size_t)a->tokens[c] * dim;
        float *pe = a->dwpe ? a->dwpe + (c % (size_t)a->t) * dim : NULL;
        for (size_t i = first; i < last; i++) {
            float d = load_as_f32(a->dout, s, c * dim + i);
            te[i] += d;
            if (pe) /* none without a position table */
                pe[i] += d;
        }
    }
}
CPU_STORAGE_LOOPS(embedding_grad_features, embedding_grad_body)

int cpu_embedding_backward(backend *b, storage s, const int *tokens, const void *dout,
                           float *dwte, float *dwpe, int dim, int t, int batch)
{
    (void)b;
    if (dim <= 0 || t <= 0 || batch <= 0)
        return BK_OK;
    embedding_args a = {.tokens = tokens, .dout = dout, .dwte = dwte, .dwpe = dwpe,
                        .dim = dim, .t = t, .cols = (size_t)batch * (size_t)t};
    cpu_parallel_features((size_t)dim, a.cols, embedding_grad_features(s), &a);
    return BK_OK;
}

/* ------------------------------------------------------------ residual */

typedef struct add_args {
    void *y;
    const void *x;
} add_args;

/* No restrict: y += y is allowed. */
BF16_INLINE void add_body(void *ctx, storage s, size_t first, size_t last)
{
    const add_args *a = ctx;
    for (size_t i = first; i < last; i++)
        store_from_f32(a->y, s, i, load_as_f32(a->y, s, i) + load_as_f32(a->x, s, i));
}
CPU_STORAGE_LOOPS(add_range, add_body)

int cpu_add(backend *b, storage s, void *y, const void *x, size_t n)
{
    (void)b;
    add_args a = {y, x};
    cpu_parallel_for(n, PARALLEL_MIN_ELEMS, add_range(s), &a);
    return BK_OK;
}

/* ------------------------------------------------------ head arrangement */

typedef struct permute_args {
    const char *src;
    char *dst;
    size_t hd, heads, t, batch, parts;
    size_t elem; /* bytes an element: a move of bits, the same in either storage */
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
                    memcpy(a->dst + tok * a->elem, a->src + blk * a->elem, hd * a->elem);
                else
                    memcpy(a->dst + blk * a->elem, a->src + tok * a->elem, hd * a->elem);
            }
    }
}

int cpu_permute_heads(backend *b, storage s, const void *src, void *dst, int hd, int heads,
                      int t, int batch, int parts, int to_tokens)
{
    (void)b;
    if (hd <= 0 || heads <= 0 || t <= 0 || batch <= 0 || parts <= 0)
        return BK_OK;
    permute_args a = {.src = src, .dst = dst, .hd = (size_t)hd, .heads = (size_t)heads,
                      .t = (size_t)t, .batch = (size_t)batch, .parts = (size_t)parts,
                      .elem = storage_bytes(s), .to_tokens = to_tokens};
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
