/* How the harness calls a backend: every op goes through these wrappers, so
 * the dispatch count, the memory accounting and the CPU activity records are
 * kept in one place for every backend. */
#ifndef ACCUBENCH_DISPATCH_H
#define ACCUBENCH_DISPATCH_H

#include <stdio.h>

#include "backend.h"
#include "trace.h"

/* Issues one device op: counts it and, when a recorder is attached, records
 * its interval as device work (a CPU dispatch runs while the call runs). */
#define BK_DISPATCH(b, op_name, call)                                        \
    do {                                                                     \
        uint64_t bk_t0_ = (b)->recorder ? trace_now_ns() : 0;                \
        int bk_rc_ = (call);                                                 \
        (b)->dispatches++;                                                   \
        if ((b)->recorder)                                                   \
            trace_add((b)->recorder, TRACE_KERNEL, (op_name), bk_t0_,        \
                      trace_now_ns(), 0, 0);                                 \
        return bk_rc_;                                                       \
    } while (0)

/* The backend computing in dt from here (backend_ops.use_dtype): nothing
 * to do where it does already. The reason, where it cannot, is in
 * b->error too. */
static inline int bk_use_dtype(backend *b, dtype dt)
{
    if (b->dtype == dt)
        return BK_OK;
    char why[sizeof b->error];
    int rc = b->ops->use_dtype(b, dt, why, sizeof why);
    if (rc != BK_OK)
        snprintf(b->error, sizeof b->error, "%s", why);
    return rc;
}

/* Allocates from the allocator `from` names (see bk_allocator), inside the
 * memory cap, and keeps the accounting. What is held apart from the cap
 * (bk_alloc_apart) does not count against it. */
static inline int bk_alloc_from(backend *b, bk_allocator from, size_t bytes, void **out)
{
    *out = NULL;
    size_t counted = b->mem_in_use - b->mem_apart;
    if (b->mem_cap && counted + bytes > b->mem_cap) {
        snprintf(b->error, sizeof b->error,
                 "allocation of %zu bytes would pass the memory cap of %zu bytes (%zu in use "
                 "already)", bytes, b->mem_cap, counted);
        return BK_OOM;
    }
    int rc = from == BK_ALLOC_HELD ? b->ops->alloc(b, bytes, out)
                                   : b->ops->alloc_transient(b, from, bytes, out);
    if (rc != BK_OK)
        return rc;
    b->mem_in_use += bytes;
    if (b->mem_in_use > b->mem_peak)
        b->mem_peak = b->mem_in_use;
    return BK_OK;
}

/* Frees p (of `bytes`) back to the allocator it came from. */
static inline void bk_free_from(backend *b, bk_allocator from, void *p, size_t bytes)
{
    if (!p)
        return;
    if (from == BK_ALLOC_HELD)
        b->ops->free(b, p);
    else
        b->ops->free_transient(b, from, p);
    b->mem_in_use -= bytes;
}

static inline int bk_alloc(backend *b, size_t bytes, void **out)
{
    return bk_alloc_from(b, BK_ALLOC_HELD, bytes, out);
}

static inline void bk_free(backend *b, void *p, size_t bytes)
{
    bk_free_from(b, BK_ALLOC_HELD, p, bytes);
}

/* Allocates outside the memory cap for as long as it is held: what a check
 * makes beside the step and the need never counts (ZeRO-2's whole gradient
 * for the gradient check). Setting the cap aside for the call alone would
 * not do: held, its bytes would still count against the cap for every
 * allocation under it that follows (the check's reference making its
 * activations, where the mode makes them per micro-batch), and a config
 * that fits its cap would fail its check. It counts in mem_in_use and the
 * peak like any other (its caller sets the peak right on its free). */
static inline int bk_alloc_apart(backend *b, size_t bytes, void **out)
{
    size_t cap = b->mem_cap;
    b->mem_cap = 0;
    int rc = bk_alloc(b, bytes, out);
    b->mem_cap = cap;
    if (rc == BK_OK)
        b->mem_apart += bytes;
    return rc;
}

static inline void bk_free_apart(backend *b, void *p, size_t bytes)
{
    if (!p)
        return;
    bk_free(b, p, bytes);
    b->mem_apart -= bytes;
}

/* A window for what the device holds (see backend_ops.held_reset). */
static inline void bk_held_reset(backend *b)
{
    if (b->ops->held_reset)
        b->ops->held_reset(b);
}

/* The most the device held in the window, or -1 where not measured. */
static inline int64_t bk_held_peak(backend *b)
{
    size_t bytes;
    if (!b->ops->held_peak || b->ops->held_peak(b, &bytes) != BK_OK)
        return -1;
    return (int64_t)bytes;
}

static inline int bk_upload(backend *b, void *dst, const void *src, size_t bytes)
{
    BK_DISPATCH(b, "upload", b->ops->upload(b, dst, src, bytes));
}

static inline int bk_download(backend *b, void *dst, const void *src, size_t bytes)
{
    return b->ops->download(b, dst, src, bytes);
}

static inline int bk_zero(backend *b, void *dst, size_t bytes)
{
    BK_DISPATCH(b, "zero", b->ops->zero(b, dst, bytes));
}

static inline int bk_gemm(backend *b, const gemm_desc *g)
{
    BK_DISPATCH(b, "gemm", b->ops->gemm(b, g));
}

static inline int bk_bias_gelu_forward(backend *b, void *z, const float *bias,
                                       void *h, int rows, int cols, int gelu)
{
    BK_DISPATCH(b, gelu ? "bias_gelu" : "bias",
                b->ops->bias_gelu_forward(b, b->compute_storage, z, bias, h, rows,
                                          cols, gelu));
}

static inline int bk_gelu_forward(backend *b, const void *z, void *h, size_t n)
{
    BK_DISPATCH(b, "gelu", b->ops->gelu_forward(b, b->compute_storage, z, h, n));
}

static inline int bk_gelu_backward(backend *b, const void *z, const void *dh,
                                   void *dz, size_t n)
{
    BK_DISPATCH(b, "gelu_backward",
                b->ops->gelu_backward(b, b->compute_storage, z, dh, dz, n));
}

static inline int bk_bias_grad(backend *b, const void *dz, float *db, int rows, int cols)
{
    BK_DISPATCH(b, "bias_grad",
                b->ops->bias_grad_accumulate(b, b->compute_storage, dz, db, rows, cols));
}

static inline int bk_softmax_xent(backend *b, const void *logits, void *dlogits,
                                  const int *labels, const int *valid,
                                  const float *scale, float *loss_sum,
                                  int classes, int batch)
{
    BK_DISPATCH(b, "softmax_xent",
                b->ops->softmax_xent(b, b->compute_storage, logits, dlogits, labels,
                                     valid, scale, loss_sum, classes, batch));
}

static inline int bk_layernorm_forward(backend *b, const void *x, const float *gamma,
                                       const float *beta, void *y, float *mean, float *rstd,
                                       int dim, int rows)
{
    BK_DISPATCH(b, "layernorm",
                b->ops->layernorm_forward(b, b->compute_storage, x, gamma, beta, y, mean,
                                          rstd, dim, rows));
}

static inline int bk_layernorm_backward(backend *b, const void *dy, const void *x,
                                        const float *gamma, const float *mean,
                                        const float *rstd, float *dx, float *dgamma,
                                        float *dbeta, int dim, int rows)
{
    BK_DISPATCH(b, "layernorm_backward",
                b->ops->layernorm_backward(b, b->compute_storage, dy, x, gamma, mean, rstd,
                                           dx, dgamma, dbeta, dim, rows));
}

static inline int bk_causal_softmax_forward(backend *b, const void *scores, void *probs,
                                            float scale, int t, int count)
{
    BK_DISPATCH(b, "causal_softmax",
                b->ops->causal_softmax_forward(b, b->compute_storage, scores, probs, scale,
                                               t, count));
}

static inline int bk_causal_softmax_backward(backend *b, const void *probs,
                                             const void *dprobs, void *dscores,
                                             float scale, int t, int count)
{
    BK_DISPATCH(b, "causal_softmax_backward",
                b->ops->causal_softmax_backward(b, b->compute_storage, probs, dprobs,
                                                dscores, scale, t, count));
}

static inline int bk_embedding_forward(backend *b, const int *tokens, const float *wte,
                                       const float *wpe, void *out, int dim, int t,
                                       int batch)
{
    BK_DISPATCH(b, "embedding",
                b->ops->embedding_forward(b, b->compute_storage, tokens, wte, wpe, out, dim,
                                          t, batch));
}

static inline int bk_embedding_backward(backend *b, const int *tokens, const void *dout,
                                        float *dwte, float *dwpe, int dim, int t, int batch)
{
    BK_DISPATCH(b, "embedding_backward",
                b->ops->embedding_backward(b, b->compute_storage, tokens, dout, dwte, dwpe,
                                           dim, t, batch));
}

static inline int bk_add(backend *b, void *y, const void *x, size_t n)
{
    BK_DISPATCH(b, "add", b->ops->add(b, b->compute_storage, y, x, n));
}

/* The tokens' [parts * heads * hd x batch * t] into per-head blocks
 * (to_tokens 0), or back (to_tokens 1); see backend_ops.permute_heads. */
static inline int bk_permute_heads(backend *b, const void *src, void *dst, int hd, int heads,
                                   int t, int batch, int parts, int to_tokens)
{
    BK_DISPATCH(b, to_tokens ? "heads_to_tokens" : "tokens_to_heads",
                b->ops->permute_heads(b, b->compute_storage, src, dst, hd, heads, t, batch,
                                      parts, to_tokens));
}

/* The fused attention (backend_ops.attention_forward, where the backend
 * has it). */
static inline int bk_attention_forward(backend *b, const void *qkv, void *y, float *lse,
                                       float scale, int hd, int heads, int t, int batch)
{
    BK_DISPATCH(b, "attention",
                b->ops->attention_forward(b, b->compute_storage, qkv, y, lse, scale, hd, heads,
                                          t, batch));
}

static inline int bk_attention_backward(backend *b, const void *qkv, const void *y,
                                        const float *lse, const void *dy, void *dqkv,
                                        float scale, int hd, int heads, int t, int batch)
{
    BK_DISPATCH(b, "attention_backward",
                b->ops->attention_backward(b, b->compute_storage, qkv, y, lse, dy, dqkv, scale,
                                           hd, heads, t, batch));
}

/* The Llama-style decoder's ops (backend_ops.rmsnorm_forward and on). */
static inline int bk_rmsnorm_forward(backend *b, const void *x, const float *gamma, void *y,
                                     float *rstd, int dim, int rows)
{
    BK_DISPATCH(b, "rmsnorm",
                b->ops->rmsnorm_forward(b, b->compute_storage, x, gamma, y, rstd, dim, rows));
}
static inline int bk_rmsnorm_backward(backend *b, const void *dy, const void *x,
                                      const float *gamma, const float *rstd, float *dx,
                                      float *dgamma, int dim, int rows)
{
    BK_DISPATCH(b, "rmsnorm_backward",
                b->ops->rmsnorm_backward(b, b->compute_storage, dy, x, gamma, rstd, dx, dgamma,
                                         dim, rows));
}
static inline int bk_swiglu_forward(backend *b, const void *gate, const void *up, void *h,
                                    size_t n)
{
    BK_DISPATCH(b, "swiglu", b->ops->swiglu_forward(b, b->compute_storage, gate, up, h, n));
}
static inline int bk_swiglu_backward(backend *b, const void *gate, const void *up,
                                     const void *dh, void *dgate, void *dup, size_t n)
{
    BK_DISPATCH(b, "swiglu_backward",
                b->ops->swiglu_backward(b, b->compute_storage, gate, up, dh, dgate, dup, n));
}
static inline int bk_rotary_forward(backend *b, void *x, int ld, int heads, int hd, int t,
                                    int cols, float theta)
{
    BK_DISPATCH(b, "rotary",
                b->ops->rotary_forward(b, b->compute_storage, x, ld, heads, hd, t, cols, theta));
}
static inline int bk_rotary_backward(backend *b, void *dx, int ld, int heads, int hd, int t,
                                     int cols, float theta)
{
    BK_DISPATCH(b, "rotary_backward",
                b->ops->rotary_backward(b, b->compute_storage, dx, ld, heads, hd, t, cols,
                                        theta));
}
static inline int bk_repeat_kv_forward(backend *b, const void *kv, void *dst, int ld_dst,
                                       int hd, int kv_heads, int group, int parts, int cols)
{
    BK_DISPATCH(b, "repeat_kv",
                b->ops->repeat_kv_forward(b, b->compute_storage, kv, dst, ld_dst, hd, kv_heads,
                                          group, parts, cols));
}
static inline int bk_repeat_kv_backward(backend *b, const void *ddst, int ld_dst, void *dkv,
                                        int hd, int kv_heads, int group, int parts, int cols)
{
    BK_DISPATCH(b, "repeat_kv_backward",
                b->ops->repeat_kv_backward(b, b->compute_storage, ddst, ld_dst, dkv, hd,
                                           kv_heads, group, parts, cols));
}
static inline int bk_adamw(backend *b, float *w, const float *g, float *m,
                           float *v, size_t n, const adamw_hparams *h)
{
    BK_DISPATCH(b, "adamw", b->ops->adamw(b, w, g, m, v, n, h));
}

/* The noise pass's per-small-batch reductions (backend_ops.sum_squares,
 * axpy): fp32 vectors, a device double out. */
static inline int bk_sum_squares(backend *b, const float *x, size_t n, double *out)
{
    BK_DISPATCH(b, "sum_squares", b->ops->sum_squares(b, x, n, out));
}

static inline int bk_axpy(backend *b, float *y, float alpha, const float *x, size_t n)
{
    BK_DISPATCH(b, "axpy", b->ops->axpy(b, y, alpha, x, n));
}

/* The accumulated gradient held in bf16 (backend_ops.round_bf16). */
static inline int bk_round_bf16(backend *b, float *x, size_t n)
{
    BK_DISPATCH(b, "round_bf16", b->ops->round_bf16(b, x, n));
}

static inline int bk_sgd(backend *b, float *w, const float *g, size_t n,
                         float lr, float weight_decay)
{
    BK_DISPATCH(b, "sgd", b->ops->sgd(b, w, g, n, lr, weight_decay));
}

static inline int bk_convert(backend *b, const float *src, void *dst,
                             storage dst_storage, size_t n)
{
    BK_DISPATCH(b, "convert", b->ops->convert(b, src, dst, dst_storage, n));
}

static inline int bk_graph_launch(backend *b, void *graph)
{
    BK_DISPATCH(b, "graph_launch", b->ops->graph_launch(b, graph));
}

#endif
