/* The CUDA backend's own state and the ops its .cu files define for the
 * table in cuda_backend.cu. Seen only by kernels/cuda_*.cu. */
#ifndef ACCUBENCH_CUDA_INTERNAL_H
#define ACCUBENCH_CUDA_INTERNAL_H

#include "cuda_check.h"

extern "C" {
#include "cuda_held.h"
}

struct cuda_gemm_cache; /* cuda_gemm.cu */

/* cuBLAS's recommendation for Hopper is 32 MiB; shared by cuBLAS and
 * cuBLASLt (both run on the one stream, so never at the same time). */
#define CUDA_GEMM_WORKSPACE_BYTES ((size_t)32 << 20)
/* Partial sums of the bias-gradient and LayerNorm parameter-gradient
 * reductions and of the noise pass's sum of squares, and the
 * cross-entropy's per-example losses before their sum (see
 * cuda_elementwise.cu, cuda_transformer.cu, cuda_reduce.cu). Allocated
 * once as the backend starts, outside the memory need, so that no step
 * allocates for a reduction. */
#define CUDA_REDUCE_SCRATCH_FLOATS ((size_t)1 << 20)

/* The LM head's chunk on a GPU (backend.head_chunk_bytes). No chunk's
 * logits fit an L2 there (one GPT-2 sequence's are 103 MB in bf16, an
 * H200's L2 60 MB), so a chunk buys memory alone, and costs GEMMs of fewer
 * columns and more launches: the CPU's 1 MiB made every chunk one
 * sequence. 512 MiB holds 5 sequences of GPT-2 small in bf16 ([50304 x
 * 5120 x 768] products; 2 in fp32): micro 8 in 2 chunks instead of 8, its
 * logits and their gradient 1.0 GB instead of 1.6 unchunked, a small share
 * of a card the planner caps in tens of GB. Not yet timed on a GPU. */
#define CUDA_HEAD_CHUNK_BYTES ((size_t)512 << 20)

/* Small uploads (a step's optimizer numbers) are staged through pinned
 * slots, so that the copy never waits for the stream (see cu_upload). */
#define CUDA_UPLOAD_SLOTS 64
#define CUDA_UPLOAD_SLOT_BYTES ((size_t)4096)

typedef struct cuda_impl {
    int device;
    int sm_count;
    int smem_optin; /* shared memory a block may ask for (cuda_flash_attention.cu) */
    cudaStream_t stream; /* the one compute stream, non-blocking */
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    void *workspace;
    float *reduce_scratch;
    struct cuda_gemm_cache *gemms;
    int mempools; /* the device supports cudaMallocAsync */
    unsigned char *upload_ring; /* pinned: CUDA_UPLOAD_SLOTS slots */
    cudaEvent_t upload_done[CUDA_UPLOAD_SLOTS]; /* each slot's last copy */
    int upload_next;
    int (*wait_poll)(void *ctx, double waited_s); /* see cuda_backend_set_wait_poll */
    void *wait_poll_ctx;
    /* What a dtype's switch reads (cuda_dtype.cu): the device's name, for
     * its datasheet row, and its compute capability, for bf16's GEMMs. */
    char device_name[256];
    int cc_major;
    cuda_held held; /* the most the device held in the window (cuda_memory.cu) */
} cuda_impl;

static inline cuda_impl *cuda_of(backend *b) { return (cuda_impl *)b->impl; }

extern "C" {
/* cuda_wait.cu: waits for ev, or for the stream when ev is NULL (BK_*) */
int cuda_wait_for(backend *b, cudaEvent_t ev);

/* cuda_memory.cu: the allocators, the pool's trim, the most held */
int cuda_alloc(backend *b, size_t bytes, void **out);
void cuda_free(backend *b, void *p);
int cuda_alloc_transient(backend *b, bk_allocator from, size_t bytes, void **out);
void cuda_free_transient(backend *b, bk_allocator from, void *p);
cudaError_t cuda_trim_pool(const cuda_impl *c); /* its free blocks back to the device */
int cuda_memory_held_reset(backend *b);
int cuda_memory_held_peak(backend *b, size_t *bytes);

/* cuda_dtype.cu: backend_ops.use_dtype */
int cuda_use_dtype(backend *b, dtype dt, char *why, size_t why_len);

/* cuda_gemm.cu */
int cuda_gemm_create(backend *b);
void cuda_gemm_destroy(backend *b);
int cuda_gemm(backend *b, const gemm_desc *g);

/* cuda_elementwise.cu */
cudaError_t cuda_elementwise_loadable(void);
int cuda_bias_gelu_forward(backend *b, storage s, void *z, const float *bias, void *h,
                           int rows, int cols, int gelu);
int cuda_gelu_forward(backend *b, storage s, const void *z, void *h, size_t n);
int cuda_gelu_backward(backend *b, storage s, const void *z, const void *dh, void *dz,
                       size_t n);
int cuda_bias_grad(backend *b, storage s, const void *dz, float *db, int rows, int cols);
int cuda_softmax_xent(backend *b, storage s, const void *logits, void *dlogits,
                      const int *labels, const int *valid, const float *scale,
                      float *loss_sum, int classes, int batch);
int cuda_adamw(backend *b, float *w, const float *g, float *m, float *v, size_t n,
               const adamw_hparams *h);
int cuda_sgd(backend *b, float *w, const float *g, size_t n, float lr,
             float weight_decay);
int cuda_convert(backend *b, const float *src, void *dst, storage dst_storage, size_t n);
int cuda_to_f32(backend *b, const void *src, storage src_storage, float *dst, size_t n);

/* cuda_reduce.cu: the noise pass's reductions; the cross-entropy's loss
 * sum (*loss_sum += the n losses, in a fixed order) */
int cuda_sum_squares(backend *b, const float *x, size_t n, double *out);
int cuda_loss_sum(backend *b, const float *losses, int n, float *loss_sum);
int cuda_axpy(backend *b, float *y, float alpha, const float *x, size_t n);
int cuda_round_bf16(backend *b, float *x, size_t n);

/* cuda_transformer.cu */
int cuda_layernorm_forward(backend *b, storage s, const void *x, const float *gamma,
                           const float *beta, void *y, float *mean, float *rstd, int dim,
                           int rows);
int cuda_layernorm_backward(backend *b, storage s, const void *dy, const void *x,
                            const float *gamma, const float *mean, const float *rstd,
                            float *dx, float *dgamma, float *dbeta, int dim, int rows);
int cuda_causal_softmax_forward(backend *b, storage s, const void *scores, void *probs,
                                float scale, int t, int count);
int cuda_causal_softmax_backward(backend *b, storage s, const void *probs,
                                 const void *dprobs, void *dscores, float scale, int t,
                                 int count);
int cuda_embedding_forward(backend *b, storage s, const int *tokens, const float *wte,
                           const float *wpe, void *out, int dim, int t, int batch);
int cuda_embedding_backward(backend *b, storage s, const int *tokens, const void *dout,
                            float *dwte, float *dwpe, int dim, int t, int batch);
int cuda_add(backend *b, storage s, void *y, const void *x, size_t n);
int cuda_permute_heads(backend *b, storage s, const void *src, void *dst, int hd, int heads,
                       int t, int batch, int parts, int to_tokens);

/* The fused causal attention (cuda_flash_attention.cu); _prepare, as the
 * backend starts, lets its kernels have the shared memory they need. */
int cuda_flash_attention_prepare(backend *b);
int cuda_attention_forward(backend *b, storage s, const void *qkv, void *y, float *lse,
                           float scale, int hd, int heads, int t, int batch);
int cuda_attention_backward(backend *b, storage s, const void *qkv, const void *y,
                            const float *lse, const void *dy, void *dqkv, float scale, int hd,
                            int heads, int t, int batch);

/* Graph capture and replay, and the profiler's range (cuda_graphs.cu). */
int cuda_graph_begin(backend *b);
int cuda_graph_end(backend *b, void **graph);
int cuda_graph_launch(backend *b, void *graph);
void cuda_graph_destroy(backend *b, void *graph);
void cuda_profiler_start(backend *b);
void cuda_profiler_stop(backend *b);

/* The Llama-style decoder's ops (cuda_llama_ops.cu). */
int cuda_rmsnorm_forward(backend *b, storage s, const void *x, const float *gamma, void *y,
                         float *rstd, int dim, int rows);
int cuda_rmsnorm_backward(backend *b, storage s, const void *dy, const void *x,
                          const float *gamma, const float *rstd, float *dx, float *dgamma,
                          int dim, int rows);
int cuda_swiglu_forward(backend *b, storage s, const void *gate, const void *up, void *h,
                        size_t n);
int cuda_swiglu_backward(backend *b, storage s, const void *gate, const void *up,
                         const void *dh, void *dgate, void *dup, size_t n);
int cuda_rotary_forward(backend *b, storage s, void *x, int ld, int heads, int hd, int t,
                        int cols, float theta);
int cuda_rotary_backward(backend *b, storage s, void *dx, int ld, int heads, int hd, int t,
                         int cols, float theta);
int cuda_repeat_kv_forward(backend *b, storage s, const void *kv, void *dst, int ld_dst,
                           int hd, int kv_heads, int group, int parts, int cols);
int cuda_repeat_kv_backward(backend *b, storage s, const void *ddst, int ld_dst, void *dkv,
                            int hd, int kv_heads, int group, int parts, int cols);
}

#endif
