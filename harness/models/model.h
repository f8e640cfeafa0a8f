/* The MLP, written once against the backend table.
 *
 * Input width = hidden; `layers` blocks of Linear + bias + GELU; a final
 * Linear to `classes`; softmax cross-entropy over examples that carry a
 * validity mask. All parameters live in one fp32 vector (weights and biases
 * of every layer in order), so that the gradient, the optimizer state and
 * the optimizer step are each one buffer and one call. */
#ifndef ACCUBENCH_MODEL_H
#define ACCUBENCH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define MODEL_MAX_LINEAR 17

typedef struct model_preset {
    const char *name;
    int hidden, layers, classes;
} model_preset;

/* tiny, S, M, L, XL; NULL when the name is unknown. */
const model_preset *model_preset_find(const char *name);
/* "tiny, S, M, L, XL" for messages. */
const char *model_preset_names(void);

typedef enum optimizer_kind { OPT_ADAMW = 0, OPT_SGD = 1 } optimizer_kind;

typedef struct optimizer_config {
    optimizer_kind kind;
    float lr, beta1, beta2, eps, weight_decay;
} optimizer_config;

/* The shapes of a preset: which linear layer sits where in the vector. */
typedef struct model_layout {
    int n_linear;
    int in[MODEL_MAX_LINEAR], out[MODEL_MAX_LINEAR];
    size_t w_off[MODEL_MAX_LINEAR], b_off[MODEL_MAX_LINEAR];
    size_t n_params;
    int max_width; /* widest activation: max(hidden, classes) */
} model_layout;

void model_layout_of(const model_preset *p, model_layout *out);

/* GEMM FLOPs of one optimizer step over `examples` examples: forward, the
 * weight gradients and the input gradients of every layer but the first.
 * The same for every split of the same effective batch. */
double model_flops_per_step(const model_layout *l, int examples);

/* Bytes a config needs on the device: master weights, gradients, optimizer
 * state, the compute copy (bf16), the activations of one micro-batch, and
 * the rotated input buffers of one effective batch. */
typedef struct memory_need {
    size_t weights, master_copy, gradients, optimizer_state, activations, inputs;
    size_t total;
} memory_need;

void model_memory_need(const model_layout *l, dtype dt, optimizer_kind opt,
                       int micro_batch, int effective_batch, int input_buffers,
                       memory_need *out);

/* Device state of one model: parameters, gradients, optimizer state. */
typedef struct model {
    backend *b;
    model_preset preset;
    model_layout layout;
    optimizer_config opt;
    float *params;        /* fp32 master weights */
    void *params_compute; /* what the GEMMs read: params itself, or a bf16 copy */
    float *grads;
    float *adam_m, *adam_v;
    adamw_hparams *hparams; /* device copy of this step's AdamW numbers */
    float *initial;         /* host copy of the starting weights (reset) */
    int64_t step_count;
} model;

int model_create(backend *b, const model_preset *p, const optimizer_config *opt,
                 uint64_t seed, model *m);
void model_destroy(model *m);
/* Back to the starting weights and a fresh optimizer state. */
int model_reset(model *m);

/* Activations of one micro-batch of up to `capacity` examples. */
typedef struct activations {
    int capacity;
    void *z[MODEL_MAX_LINEAR]; /* pre-activation per layer (logits last) */
    void *h[MODEL_MAX_LINEAR]; /* post-GELU per hidden layer */
    void *grad[2];             /* ping-pong gradient buffers, max_width wide */
    size_t bytes;              /* everything above */
} activations;

size_t activations_bytes(const model_layout *l, storage s, int capacity);
/* from: BK_ALLOC_HELD for activations kept for a whole config, or the
 * per-micro-batch allocator of an `alloc` mode; destroy with the same. */
int activations_create(model *m, int capacity, bk_allocator from, activations *a);
void activations_destroy(model *m, activations *a, bk_allocator from);

/* One micro-batch: the inputs are columns [first, first + count) of x
 * ([hidden x E] in compute storage), with labels/valid device int arrays
 * and a device float *scale (the loss normalisation of this micro-batch).
 * Runs forward and backward; weight gradients accumulate into m->grads. */
typedef struct micro_batch_view {
    const void *x;
    const int *labels, *valid;
    const float *scale;
    int first, count;
} micro_batch_view;

int model_forward(model *m, activations *a, const micro_batch_view *mb,
                  float *loss_sum);
int model_backward(model *m, activations *a, const micro_batch_view *mb);

/* Start of a window: zero gradients and the loss accumulator. */
int model_zero_grads(model *m, float *loss_sum);
/* The optimizer step on the accumulated gradient; refreshes the bf16 copy.
 * Writes this step's hyper-parameters to the device first unless
 * `hparams_ready` (the graph mode writes them before the replay). */
int model_optimizer_step(model *m, int hparams_ready);
/* Writes the next step's AdamW numbers to the device copy. */
int model_upload_hparams(model *m);

#endif
