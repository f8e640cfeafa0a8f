/* What the model kinds share, so that a kind writes its shape and the
 * order of its layers, not the arithmetic of each: linear layers forward
 * and backward (the window-start rule and the report of a final gradient
 * range with them), addressing in compute storage, the host layout a kind
 * keeps in m->impl, and the entries of its tensor list.
 *
 * The window-start rule. A kind that `writes_first_gradient` writes every
 * gradient element on the window's first micro-batch instead of adding to
 * it, so that the window needs no pass that zeroes the gradient: its weight
 * gradients' GEMMs run with beta = 0 there (1 otherwise: accumulate in
 * place), and its bias gradients are zeroed before the sum over the
 * micro-batch adds to them. The layer_pass says which it is; a kind never
 * picks a beta of its own. */
#ifndef ACCUBENCH_LAYERS_H
#define ACCUBENCH_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "rng.h"

/* One micro-batch's pass through a kind's layers. */
typedef struct layer_pass {
    model *m;
    backend *b;
    storage cs; /* what activations and the GEMMs' inputs are stored in */
    size_t es;  /* its bytes per element */
    int n;      /* columns of an activation: examples, or tokens */
    /* The window's first micro-batch of a kind that writes its first
     * gradient: weight gradients are written, not added to. */
    int overwrite;
} layer_pass;

layer_pass layer_pass_of(model *m, const micro_batch_view *mb, int columns);

/* Element i of a buffer in compute storage. */
void *layer_at(const layer_pass *p, const void *base, size_t i);
/* The compute copy of the parameter at `off`: what the GEMMs read. */
const void *layer_weight(const layer_pass *p, size_t off);

/* C = op(A) op(B) + beta C; A and B in compute storage, C too, or fp32
 * when `c_f32` (a weight gradient). */
int layer_gemm(const layer_pass *p, int ta, int tb, int m, int n, int k, const void *a, int lda,
               const void *b, int ldb, float beta, void *c, int ldc, int c_f32);

/* The beta of a weight gradient's GEMM under the window-start rule (and
 * under ZeRO-2, where every micro-batch writes its buckets fresh). */
float layer_grad_beta(const layer_pass *p);

/* A linear layer in the parameter vector: its weight a column-major
 * [out x in] matrix at w_off (one output per row, nn.Linear's [out, in]),
 * its bias `out` floats at b_off. */
typedef struct linear_layer {
    size_t w_off, b_off;
    int out, in;
} linear_layer;

/* z = W x + bias over p->n columns; with h, also h = GELU(z). */
int linear_forward(const layer_pass *p, const linear_layer *l, const void *x, void *z, void *h);

/* From dy = d(loss)/dz: the input gradient dx = W^T dy first (written;
 * none when dx is NULL), so that W is read no more after it; then the
 * weight gradient dW (+)= dy x^T and the bias gradient db (+)= the row sums
 * of dy, under the window-start rule. */
int linear_backward(const layer_pass *p, const linear_layer *l, const void *x, const void *dy,
                    void *dx);
/* linear_backward's two halves, for a kind that must order them otherwise
 * (a recomputed input needs the buffer dx later takes): dx = W^T dy; and
 * the weight and bias gradients under the window-start rule. */
int linear_backward_input(const layer_pass *p, const linear_layer *l, const void *dy, void *dx);
int linear_backward_weights(const layer_pass *p, const linear_layer *l, const void *x,
                            const void *dy);
/* The layer's weight and bias (adjacent, weight first) reported final. */
int linear_report_final(const layer_pass *p, const linear_layer *l);

/* linear_backward, then the layer's weight and bias (which must be
 * adjacent, weight first) reported final (model_grad_ready): for a kind
 * whose layers are its gradient ranges. */
int linear_backward_final(const layer_pass *p, const linear_layer *l, const void *x,
                          const void *dy, void *dx);

/* A kind's host layout in m->impl: `bytes` zeroed, or NULL (BK_OOM) with
 * the reason in the backend. layout_destroy frees it (a kind's destroy). */
void *layout_create(model *m, size_t bytes);
void layout_destroy(model *m);

/* Entry `count` of a tensor list (written when out has room: see the
 * kind's `tensors`); returns count + 1. */
int tensor_add(model_tensor *out, int max, int count, const char *name, size_t offset,
               int64_t rows, int64_t cols, int torch_is_transpose);
/* The same for a vector of n floats (PyTorch's shape [n]). */
int tensor_add_vector(model_tensor *out, int max, int count, const char *name, size_t offset,
                      int64_t n);
/* In a kind's table of tensors, the cols of a vector: a matrix's cols may
 * be 1 too. */
#define TENSOR_VECTOR 0
/* One tensor of a decoder block: its name after "PREFIX.LAYER.", its
 * offset in the block, its rows, and its cols (TENSOR_VECTOR for a
 * vector). */
typedef struct {
    const char *name;
    size_t off;
    int64_t rows, cols;
} block_tensor;
/* Every layer's entries of a block table, "PREFIX.I.NAME" at
 * layer0 + I layer_size + off, layer by layer in the table's order.
 * Returns count + layers n. */
int block_tensors(model_tensor *out, int max, int count, const char *prefix, int layers,
                  size_t layer0, size_t layer_size, const block_tensor *block, int n);
/* A linear layer's two entries: "PREFIX.weight" [out, in] and
 * "PREFIX.bias" [out]. Returns count + 2. */
int linear_tensors(model_tensor *out, int max, int count, const char *prefix,
                   const linear_layer *l);

/* Starting weights: n floats Normal(0, std) from r (GPT-2's and Llama's
 * initialisation), or n floats of v (a norm's gain, a bias). */
void weights_normal(rng *r, float *w, size_t n, float std);
void weights_fill(float *w, size_t n, float v);

#endif
