/* What the CPU backend's files share: its ops, their tables, the fused
 * attention's storage check and the threshold of its parallel loops. Seen
 * only by kernels/cpu/. */
#ifndef ACCUBENCH_CPU_INTERNAL_H
#define ACCUBENCH_CPU_INTERNAL_H

#include <stddef.h>

#include "backend.h"
#include "cpu_parallel.h"

/* The streaming loops get AVX-512 and AVX2 + FMA clones, picked at load
 * time by the CPU's x86-64 level (a feature check, not a CPU model); the
 * default clone runs anywhere. The GELU and softmax loops need the level's
 * integer vectors too: with AVX alone (no AVX2) gcc leaves their exp's
 * exponent shift scalar and does not vectorise them. No clones under
 * ThreadSanitizer: gcc instruments the resolver that picks one, and the
 * loader runs it before the TSan runtime is relocated (a SIGSEGV before
 * main). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define CPU_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CPU_HOT
#endif

/* Below this many elements a loop runs on the calling thread alone. */
#define PARALLEL_MIN_ELEMS ((size_t)1 << 16)
/* The same for loops that evaluate an exponential per element (GELU and its
 * gradient: about 1 ns an element on one core, against a fraction of that
 * for a streaming pass): 8 K elements are about 8 us of work, several times
 * what handing a chunk to the pool's polling worker costs. Model S's
 * 1024 x 64 activations then run on both cores, not one. */
#define PARALLEL_MIN_EXP_ELEMS ((size_t)1 << 13)

/* A chunk of columns of `rows` elements long enough to be worth a thread
 * (cpu_transformer.c). */
size_t cpu_column_chunk(int rows);
/* A loop over `dim` features, each over all `cols` columns, cut between
 * threads in whole cache lines of features (cpu_transformer.c): what every
 * sum over columns (a norm's gain gradient) runs on. */
void cpu_parallel_features(size_t dim, size_t cols, cpu_range_fn fn, void *ctx);

/* A chunk's fp32 scratch of n floats (a bf16 column converted, the
 * rotary's turns), or NULL with *out_of_memory set (atomically: the op's
 * chunks run on several threads); and the op's status after its chunks:
 * BK_OOM with the reason in b->error where one set the flag
 * (cpu_transformer.c). */
float *cpu_chunk_scratch(int *out_of_memory, size_t n);
int cpu_chunk_status(backend *b, int out_of_memory, const char *op);

/* BK_OK for fp32 storage; else BK_UNSUPPORTED with the reason in b->error:
 * the fused attention reads and writes fp32 alone (a bf16 backend's table
 * leaves it out, cpu_attention_choice.c). */
int cpu_f32_only(backend *b, storage s);

/* The transformer ops (cpu_layernorm.c, cpu_transformer.c), with
 * backend_ops' signatures and semantics (backend.h). */
int cpu_layernorm_forward(backend *b, storage s, const void *x, const float *gamma,
                          const float *beta, void *y, float *mean, float *rstd, int dim,
                          int rows);
int cpu_layernorm_backward(backend *b, storage s, const void *dy, const void *x,
                           const float *gamma, const float *mean, const float *rstd,
                           float *dx, float *dgamma, float *dbeta, int dim, int rows);
int cpu_causal_softmax_forward(backend *b, storage s, const void *scores, void *probs,
                               float scale, int t, int count);
int cpu_causal_softmax_backward(backend *b, storage s, const void *probs,
                                const void *dprobs, void *dscores, float scale, int t,
                                int count);
int cpu_embedding_forward(backend *b, storage s, const int *tokens, const float *wte,
                          const float *wpe, void *out, int dim, int t, int batch);
int cpu_embedding_backward(backend *b, storage s, const int *tokens, const void *dout,
                           float *dwte, float *dwpe, int dim, int t, int batch);
/* One example's softmax cross-entropy: ew_softmax_xent's result, in
 * vectors (cpu_transformer.c). */
float cpu_softmax_xent_column(const float *logits, float *dlogits, int classes, int label,
                              int valid, float scale);
int cpu_add(backend *b, storage s, void *y, const void *x, size_t n);
int cpu_permute_heads(backend *b, storage s, const void *src, void *dst, int hd, int heads,
                      int t, int batch, int parts, int to_tokens);
/* The Llama-style decoder's ops (cpu_llama_ops.c). */
int cpu_rmsnorm_forward(backend *b, storage s, const void *x, const float *gamma, void *y,
                        float *rstd, int dim, int rows);
int cpu_rmsnorm_backward(backend *b, storage s, const void *dy, const void *x,
                         const float *gamma, const float *rstd, float *dx, float *dgamma,
                         int dim, int rows);
int cpu_swiglu_forward(backend *b, storage s, const void *gate, const void *up, void *h,
                       size_t n);
int cpu_swiglu_backward(backend *b, storage s, const void *gate, const void *up,
                        const void *dh, void *dgate, void *dup, size_t n);
int cpu_rotary_forward(backend *b, storage s, void *x, int ld, int heads, int hd, int t,
                       int cols, float theta);
int cpu_rotary_backward(backend *b, storage s, void *dx, int ld, int heads, int hd, int t,
                        int cols, float theta);
int cpu_repeat_kv_forward(backend *b, storage s, const void *kv, void *dst, int ld_dst, int hd,
                          int kv_heads, int group, int parts, int cols);
int cpu_repeat_kv_backward(backend *b, storage s, const void *ddst, int ld_dst, void *dkv,
                           int hd, int kv_heads, int group, int parts, int cols);
/* The noise pass's reductions (cpu_reduce.c). */
int cpu_sum_squares(backend *b, const float *x, size_t n, double *out);
int cpu_axpy(backend *b, float *y, float alpha, const float *x, size_t n);
int cpu_round_bf16(backend *b, float *x, size_t n);
/* Every op of the CPU backend, the fused attention's among them
 * (cpu_backend.c). */
extern const backend_ops cpu_ops_all;
/* The ops table a CPU backend in dt runs: cpu_ops_all, or it without the
 * fused attention where CPU_ATTENTION_ENV asks for the unfused path or dt
 * is bf16; NULL with the one-line reason where the variable names no
 * arrangement (cpu_attention_choice.c). */
const backend_ops *cpu_ops_for(dtype dt, char *why, size_t why_len);
/* The fused attention (cpu_attention.c). */
int cpu_attention_forward(backend *b, storage s, const void *qkv, void *y, float *lse,
                          float scale, int hd, int heads, int t, int batch);
int cpu_attention_backward(backend *b, storage s, const void *qkv, const void *y,
                           const float *lse, const void *dy, void *dqkv, float scale, int hd,
                           int heads, int t, int batch);

#endif
