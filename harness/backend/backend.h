/* The backend table: everything the model needs from a device.
 *
 * The model is written once against this table; the CPU backend and the CUDA
 * backend fill it in. No CUDA header is ever included here: device pointers
 * are plain void* / float* owned by the backend.
 *
 * Conventions
 *  - Matrices are column-major (BLAS). Activations are [features x batch]
 *    with leading dimension = features, so one example is one column.
 *  - Every op returns BK_OK or an error code and leaves a one-line reason in
 *    backend.error (with file, line and call for CUDA errors). Nothing exits.
 *  - Ops are asynchronous with respect to the host where the device allows;
 *    sync() waits for everything issued so far.
 *  - Master weights, gradients and optimizer state are always fp32.
 *    Activations and the weights the GEMMs read are in the compute storage
 *    type (fp32, or bf16 when dtype is bf16). The dtype is the backend's
 *    current one (use_dtype): a run of several dtypes switches it before
 *    each model it runs. */
#ifndef ACCUBENCH_BACKEND_H
#define ACCUBENCH_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "dtype_table.h"
#include "optimizer_hparams.h"

enum bk_status {
    BK_OK = 0,
    BK_OOM = 1,          /* an allocation failed; everything else is intact */
    BK_UNSUPPORTED = 2,  /* this backend cannot do what was asked */
    BK_ERROR = 3,        /* a device or library call failed */
    BK_NO_DEVICE = 4,    /* create: no device of this kind is present at all */
};

/* What a backend's device is like, where the harness must act on it: the
 * harness asks these flags, never a backend's name (struct backend.caps).
 * The optional ops below (graph_begin, profiler_start) are capabilities of
 * their own: NULL where the backend has none. */
enum bk_cap {
    /* The host computes each op while its call runs, so the per-dispatch
     * records of the harness wrappers (dispatch.h) are the device's
     * timeline: a trace pass needs no activity collector, and the host's
     * enqueue time is the step time (launch-boundness means nothing). */
    BK_CAP_DISPATCH_IS_DEVICE_WORK = 1u << 0,
    /* Device memory is the host's memory: the host-side copies of the
     * gradient check compete with the model for it, and probing it to
     * exhaustion would exhaust the machine. */
    BK_CAP_SHARES_HOST_MEMORY = 1u << 1,
};

/* How one buffer stores its elements. */
typedef enum storage {
    STORAGE_F32 = 0,
    STORAGE_BF16 = 1,
} storage;

static inline size_t storage_bytes(storage s) { return s == STORAGE_BF16 ? 2 : 4; }

/* What a run in dt stores its activations and the compute copy of its
 * weights in: bf16 for bf16, fp32 for the rest (tf32 is fp32 storage with
 * TF32 GEMMs). The backends and the memory need read it here, so that a
 * dtype with storage of its own is one line. */
static inline storage dtype_storage(dtype dt)
{
    return dt == DTYPE_BF16 ? STORAGE_BF16 : STORAGE_F32;
}

/* C = alpha * op(A) * op(B) + beta * C, column-major, BLAS semantics.
 * A and B are in ab_storage; C in c_storage (weight gradients accumulate in
 * fp32 with beta = 1 while A and B may be bf16). */
typedef struct gemm_desc {
    int trans_a, trans_b; /* 0 = N, 1 = T */
    int m, n, k;
    float alpha;
    const void *a;
    int lda;
    const void *b;
    int ldb;
    float beta;
    void *c;
    int ldc;
    storage ab_storage, c_storage;
    /* Strided-batched (attention's products): `batch` products, the i-th
     * reading a + i * stride_a and b + i * stride_b and writing
     * c + i * stride_c (strides in elements). batch 0 or 1: one product. */
    int batch;
    int64_t stride_a, stride_b, stride_c;
} gemm_desc;

typedef struct backend backend;

/* Where a buffer's memory comes from: a column of the execution modes'
 * table (harness/run/step/modes.c), passed with every call so that a backend
 * keeps no state about modes. Buffers held for a whole config come from
 * alloc; the `alloc` modes take each micro-batch's activations from
 * alloc_transient and give them back at once, through the plain allocator
 * or a stream-ordered one (whose pool keeps freed memory for reuse). */
typedef enum bk_allocator {
    BK_ALLOC_HELD = 0,           /* alloc/free: held for the whole config */
    BK_ALLOC_PLAIN = 1,          /* alloc_transient: the plain allocator */
    BK_ALLOC_STREAM_ORDERED = 2, /* alloc_transient: the stream-ordered one */
} bk_allocator;

/* A timestamp on the device's timeline (a CUDA event, or a host clock). */
typedef struct bk_timer bk_timer;

typedef struct backend_ops {
    void (*destroy)(backend *b);
    /* Makes dt the dtype the ops that follow compute in: b->dtype,
     * b->compute_storage and what differs with it (the ops table where an
     * op runs in one storage only, the library's words, the datasheet
     * peak). One open backend serves every dtype of a run, each model and
     * its data in their own (bk_use_dtype, dispatch.h). BK_UNSUPPORTED and
     * the reason in why where the device cannot compute in dt; nothing is
     * changed then. */
    int (*use_dtype)(backend *b, dtype dt, char *why, size_t why_len);

    /* Memory. alloc returns BK_OOM (never aborts) when the device is full.
     * alloc_transient/free_transient serve the `alloc` execution modes from
     * the allocator `from` names (BK_ALLOC_PLAIN or BK_ALLOC_STREAM_ORDERED;
     * a backend with one allocator serves both from it); a buffer is freed
     * with the allocator it came from. */
    int (*alloc)(backend *b, size_t bytes, void **out);
    void (*free)(backend *b, void *p);
    int (*alloc_transient)(backend *b, bk_allocator from, size_t bytes, void **out);
    void (*free_transient)(backend *b, bk_allocator from, void *p);
    int (*upload)(backend *b, void *dst, const void *src, size_t bytes);
    int (*download)(backend *b, void *dst, const void *src, size_t bytes);
    int (*zero)(backend *b, void *dst, size_t bytes);
    /* Optional (NULL where not measured): what the device really holds,
     * beside the bytes the harness allocated (mem_in_use, mem_peak).
     * held_reset starts a window; held_peak gives the most held since (the
     * CPU: the process's resident high-water mark; CUDA: the most memory
     * the device had in use, the context, cuBLAS's workspace and the
     * pool's reserve with it, read at the window's allocation tops and
     * bounded by the pool's own high-water mark: kernels/cuda/cuda_held.h). */
    int (*held_reset)(backend *b);
    int (*held_peak)(backend *b, size_t *bytes);

    int (*gemm)(backend *b, const gemm_desc *g);

    /* z[:, j] += bias; then h = gelu(z) when gelu is set (z keeps the
     * pre-activation for the backward pass; h may be NULL without gelu).
     * z and h are [rows x cols] in storage s. */
    int (*bias_gelu_forward)(backend *b, storage s, void *z, const float *bias,
                             void *h, int rows, int cols, int gelu);
    /* h = gelu(z), n elements in storage s: the output a recomputing
     * backward needs again from the pre-activation it kept (the same value
     * bias_gelu_forward wrote). */
    int (*gelu_forward)(backend *b, storage s, const void *z, void *h, size_t n);
    /* dz = dh * gelu'(z), n elements in storage s. dz may alias dh. */
    int (*gelu_backward)(backend *b, storage s, const void *z, const void *dh,
                         void *dz, size_t n);
    /* db[i] += sum_j dz[i, j]: the bias gradient, accumulated in fp32. */
    int (*bias_grad_accumulate)(backend *b, storage s, const void *dz, float *db,
                                int rows, int cols);
    /* Softmax cross-entropy over a [classes x batch] block. labels and valid
     * are device arrays of batch ints; *scale is a device float: the factor
     * every example's gradient is multiplied by (the loss normalisation).
     * loss_sum (device float) += the sum of the valid examples' losses. */
    int (*softmax_xent)(backend *b, storage s, const void *logits, void *dlogits,
                        const int *labels, const int *valid, const float *scale,
                        float *loss_sum, int classes, int batch);
    /* Transformer ops. Activations are [features x tokens], one token per
     * column; a micro-batch of `batch` sequences of t tokens has batch * t
     * columns, sequence by sequence. LayerNorm and embedding weights are the
     * fp32 master weights (like the biases); gradients accumulate in fp32.
     *
     * LayerNorm of each column of x [dim x rows]:
     * y = (x - mean) * rstd * gamma + beta, with mean and rstd (fp32, one
     * per column) kept for the backward. */
    int (*layernorm_forward)(backend *b, storage s, const void *x, const float *gamma,
                             const float *beta, void *y, float *mean, float *rstd,
                             int dim, int rows);
    /* dx += the input gradient; dx is fp32 whatever the storage: it is the
     * residual stream's gradient, which every LayerNorm backward adds into
     * (2 x layers of them), and bf16 would round it each time.
     * dgamma += sum_cols dy * xhat; dbeta += sum_cols dy. */
    int (*layernorm_backward)(backend *b, storage s, const void *dy, const void *x,
                              const float *gamma, const float *mean, const float *rstd,
                              float *dx, float *dgamma, float *dbeta, int dim, int rows);
    /* Causal softmax of `count` [t x t] score blocks stored one after the
     * other, one query per column (column i holds query i's scores against
     * keys 0..t-1): p[j, i] = exp(scale s[j, i]) / sum_{j' <= i}
     * exp(scale s[j', i]) for j <= i, and 0 for j > i. */
    int (*causal_softmax_forward)(backend *b, storage s, const void *scores, void *probs,
                                  float scale, int t, int count);
    /* dscores[j, i] = scale p[j, i] (dp[j, i] - sum_{j'} p[j', i] dp[j', i]);
     * 0 above the diagonal. dscores may alias dprobs. */
    int (*causal_softmax_backward)(backend *b, storage s, const void *probs,
                                   const void *dprobs, void *dscores, float scale, int t,
                                   int count);
    /* out[:, q * t + i] = wte[:, tokens[q * t + i]] + wpe[:, i] for the
     * `batch` sequences q; wte [dim x vocab] and wpe [dim x t] are fp32.
     * wpe NULL: no position table (a rotary model), out = wte's columns.
     * tokens (device ints) must lie in [0, vocab): no backend checks them. */
    int (*embedding_forward)(backend *b, storage s, const int *tokens, const float *wte,
                             const float *wpe, void *out, int dim, int t, int batch);
    /* dwte[:, tokens[c]] += dout[:, c]; dwpe[:, i] += sum_q dout[:, q * t + i]
     * (none when dwpe is NULL). */
    int (*embedding_backward)(backend *b, storage s, const int *tokens, const void *dout,
                              float *dwte, float *dwpe, int dim, int t, int batch);
    /* y += x over n elements: the residual connections. */
    int (*add)(backend *b, storage s, void *y, const void *x, size_t n);
    /* Attention's arrangement of the heads (llm.c's): x is [parts * heads *
     * hd x batch * t], one token per column, its rows part p (q, k, v),
     * head h, element e at p * heads * hd + h * hd + e; y is `parts`
     * arrays of batch * heads blocks of [hd x t], block q * heads + h
     * holding head h of sequence q, so that each attention product is one
     * strided-batched GEMM over sequences x heads (stride hd * t):
     *   y[((p * batch + q) * heads + h) * t * hd + i * hd + e]
     *     = x[(q * t + i) * parts * heads * hd + p * heads * hd + h * hd + e].
     * to_tokens = 1 copies the other way, y back into x. */
    int (*permute_heads)(backend *b, storage s, const void *src, void *dst, int hd,
                         int heads, int t, int batch, int parts, int to_tokens);
    /* Causal self-attention fused into one op, where a backend has one
     * (NULL where not: the model then runs the products, the softmax and
     * the permutes above). qkv is the projection's [3 * heads * hd x
     * batch * t], token layout as permute_heads' x (q, then k, then v);
     * y [heads * hd x batch * t] the same layout: for head h of each
     * sequence, y_i = sum_{j <= i} softmax_j(scale k_j . q_i) v_j. The
     * scores are never stored: lse (fp32, [t x heads x batch], query i of
     * head h of sequence q at (q * heads + h) * t + i) keeps each query's
     * log-sum-exp of its scaled scores, from which the backward makes the
     * probabilities again. */
    int (*attention_forward)(backend *b, storage s, const void *qkv, void *y, float *lse,
                             float scale, int hd, int heads, int t, int batch);
    /* dqkv (every element written) from dy, the gradient of y, and the
     * forward's qkv, y and lse. y gives each query's D = dy . y (= sum_j
     * P_ij dP_ij, FlashAttention-2's), which a backend that makes the
     * probabilities tile by tile would otherwise have to make them again
     * for; one that holds a query's whole row at once (the CPU's) may
     * take D from the row instead. */
    int (*attention_backward)(backend *b, storage s, const void *qkv, const void *y,
                              const float *lse, const void *dy, void *dqkv, float scale, int hd,
                              int heads, int t, int batch);
    /* The Llama-style decoder's ops.
     *
     * RMSNorm of each column of x [dim x rows]: y = x rstd gamma, rstd =
     * 1 / sqrt(mean(x^2) + eps), eps 1e-5 (fp32, one per column) kept for the
     * backward. No mean is taken and there is no bias. */
    int (*rmsnorm_forward)(backend *b, storage s, const void *x, const float *gamma, void *y,
                           float *rstd, int dim, int rows);
    /* dx += the input gradient (fp32, as LayerNorm's: the residual
     * stream's gradient); dgamma += sum_cols dy * x * rstd. */
    int (*rmsnorm_backward)(backend *b, storage s, const void *dy, const void *x,
                            const float *gamma, const float *rstd, float *dx, float *dgamma,
                            int dim, int rows);
    /* SwiGLU's product over n elements: h = silu(gate) * up. */
    int (*swiglu_forward)(backend *b, storage s, const void *gate, const void *up, void *h,
                          size_t n);
    /* dgate = dh * up * silu'(gate), dup = dh * silu(gate); dgate may alias
     * dh (each element of dh is read before it is written). */
    int (*swiglu_backward)(backend *b, storage s, const void *gate, const void *up,
                           const void *dh, void *dgate, void *dup, size_t n);
    /* Rotary position embedding in place, Hugging Face's rotate_half
     * convention: rows [0, heads * hd) of x (leading dimension ld, `cols`
     * columns of sequences of t tokens: position c % t), head by head, the
     * head's elements e and e + hd/2 rotated by the angle pos * theta^(-2e
     * / hd). hd is even. rotary_backward rotates the other way: the
     * gradient of the input from the gradient of the output. */
    int (*rotary_forward)(backend *b, storage s, void *x, int ld, int heads, int hd, int t,
                          int cols, float theta);
    int (*rotary_backward)(backend *b, storage s, void *dx, int ld, int heads, int hd, int t,
                           int cols, float theta);
    /* Grouped-query attention's keys and values repeated for the query
     * heads (Hugging Face's repeat_kv): kv is [parts * kv_heads * hd x
     * cols], contiguous; rows of dst (leading dimension ld_dst) get
     *   dst[p * H * hd + h * hd + e, c] = kv[p * kv_heads * hd + (h / group) * hd + e, c]
     * with H = kv_heads * group. repeat_kv_backward writes dkv (every
     * element) as the sum over each group of ddst. */
    int (*repeat_kv_forward)(backend *b, storage s, const void *kv, void *dst, int ld_dst,
                             int hd, int kv_heads, int group, int parts, int cols);
    int (*repeat_kv_backward)(backend *b, storage s, const void *ddst, int ld_dst, void *dkv,
                              int hd, int kv_heads, int group, int parts, int cols);

    /* h points to device memory, written with upload() before each step,
     * so that a captured graph reads the current step's bias correction. */
    int (*adamw)(backend *b, float *w, const float *g, float *m, float *v,
                 size_t n, const adamw_hparams *h);
    int (*sgd)(backend *b, float *w, const float *g, size_t n, float lr,
               float weight_decay);
    /* dst = (compute storage) src: refreshes the bf16 weight copy. */
    int (*convert)(backend *b, const float *src, void *dst, storage dst_storage,
                   size_t n);
    /* dst = (fp32) src: brings compute-storage data back for checks. */
    int (*to_f32)(backend *b, const void *src, storage src_storage, float *dst,
                  size_t n);

    /* The noise pass's reductions over fp32 device vectors (gradients),
     * whatever the compute storage, so that a gradient's norm never leaves
     * the device: *out (a device double) = sum_i x[i]^2, each square and
     * the sum in double, in an order fixed by n alone (a run repeats to the
     * bit); and y += alpha x. */
    int (*sum_squares)(backend *b, const float *x, size_t n, double *out);
    int (*axpy)(backend *b, float *y, float alpha, const float *x, size_t n);
    /* x[i] rounded to bf16, nearest even (NaN stays NaN, infinities and
     * subnormals round as the bits say), and left in fp32: a bf16
     * gradient accumulator emulated on fp32 storage (grad_dtype.h). */
    int (*round_bf16)(backend *b, float *x, size_t n);

    /* Timing on the device timeline. elapsed_ms waits for `end`. */
    int (*timer_create)(backend *b, bk_timer **out);
    void (*timer_destroy)(backend *b, bk_timer *t);
    int (*timer_record)(backend *b, bk_timer *t);
    int (*timer_elapsed_ms)(backend *b, bk_timer *start, bk_timer *end, double *ms);
    int (*sync)(backend *b);

    /* Optional (NULL where unsupported): capture what is issued between
     * begin and end as one replayable graph (the `graph` mode). */
    int (*graph_begin)(backend *b);
    int (*graph_end)(backend *b, void **graph);
    int (*graph_launch)(backend *b, void *graph);
    void (*graph_destroy)(backend *b, void *graph);

    /* Optional: bracket the measured region for external profilers. */
    void (*profiler_start)(backend *b);
    void (*profiler_stop)(backend *b);
} backend_ops;

struct trace_recorder; /* harness/trace.h */

struct backend {
    const backend_ops *ops;
    void *impl;              /* the backend's own state */
    const char *name;        /* its row in the program's backend table */
    unsigned caps;           /* BK_CAP_* */
    char device[128];        /* what it runs on, for the CSV */
    /* The GPU's PCI bus id ("0000:3B:00.0"), for NVML's clocks; empty
     * where the device is not a GPU. */
    char pci_bus_id[32];
    char library[160];       /* BLAS core / cuBLAS version, for the metadata */
    dtype dtype;             /* the current one (use_dtype) */
    storage compute_storage; /* derived from dtype */
    /* Largest square GEMM size worth timing for the peak rate. */
    int peak_gemm_n;
    /* The most logits (and as many of their gradient) one chunk of a
     * language model's head may hold, in bytes: what the device's memory
     * hierarchy rewards (harness/models/gpt_head.c cuts the head in whole
     * sequences within it). 0: the model's default. */
    size_t head_chunk_bytes;
    /* Datasheet peak for the current dtype in TFLOP/s, 0 when unknown. */
    double datasheet_tflops;
    /* Bytes the device can hold (0 = unknown) and the soft cap the user set
     * (0 = none): an allocation that would pass the cap fails with BK_OOM. */
    size_t mem_total, mem_cap;
    /* Allocation accounting, kept by the harness wrappers (dispatch.h).
     * mem_apart: the part of mem_in_use held outside the cap
     * (bk_alloc_apart), which the cap does not count. */
    size_t mem_in_use, mem_peak, mem_apart;
    /* Counted by the harness wrappers: every op issued on the device. */
    uint64_t dispatches;
    /* When set, each dispatched op is recorded with its start and end
     * (backends without their own tracer; see trace.h). */
    struct trace_recorder *recorder;
    char error[320];
    /* Set by the backend when its device can run nothing more in this
     * process (CUDA's sticky errors: an illegal address, a kernel fault):
     * every later op would fail, so the sweep stops with one line instead
     * of writing an error row for every config left. */
    int lost;
};

#endif
