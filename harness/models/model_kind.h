/* A model kind's interface: its shapes and presets (model_spec), its
 * input, the activations and micro-batch views its passes take, its
 * tensors, and the table of functions a kind fills in (struct
 * model_kind), with what a shape comes to without building it. What every
 * model instance holds is model.h; the memory a config needs, model_need.h. */
#ifndef ACCUBENCH_MODEL_KIND_H
#define ACCUBENCH_MODEL_KIND_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "optimizer.h"
#include "recompute.h"

typedef struct model_kind model_kind;
typedef struct model model;

/* ---------------------------------------------------------------- shapes */

/* A shape is a few whole numbers, one per key of its kind
 * (mlp:hidden=1024,layers=4,classes=1024). */
#define MODEL_MAX_DIMS 8

/* One key of a kind's shape and the values it accepts. */
typedef struct model_dim {
    const char *key;
    int min, max;
} model_dim;

/* A named shape: `S` for mlp:hidden=1024,layers=4,classes=1024. */
typedef struct model_preset {
    const char *name;
    int dims[MODEL_MAX_DIMS]; /* in the order of the kind's keys */
} model_preset;

/* One model to build: its kind and shape, parsed (registry.h), and its name
 * as the CSV's model column and the NVTX ranges show it: the preset's
 * name, or the shape written out (mlp:hidden=2048,layers=6,classes=1000). */
typedef struct model_spec {
    const model_kind *kind;
    int dims[MODEL_MAX_DIMS];
    char name[128];
    /* What the backward recomputes instead of keeping (recompute.h): set
     * per config by the sweep, RECOMPUTE_NONE (0) unless it says so. The
     * activations, the memory need and the recomputed FLOPs follow it; the
     * name does not (the CSV has a recompute column of its own). */
    recompute recompute;
    /* Whether the backend fuses attention (backend_ops.attention_forward):
     * then no scores are stored, and the activations and the memory need
     * say so. Set where a spec meets its backend (model_spec_on). */
    int fused_attention;
    /* The backend's head_chunk_bytes (0: the model's default), set where
     * fused_attention is: the head's chunk, so its buffers and the memory
     * need, follow it. */
    size_t head_chunk_bytes;
} model_spec;

/* A spec as it runs on backend b: what its memory and its passes depend
 * on there (fused_attention, head_chunk_bytes). model_create applies it; so must anything
 * that sizes a model's memory for a backend. */
void model_spec_on(model_spec *s, const backend *b);

/* ----------------------------------------------------------------- input */

/* What a model reads. Per example: `width` floats (features, kept in the
 * compute storage) or `width` token ids in [0, vocab) (ints); and
 * `loss_items` labels in [0, classes) with as many validity flags: 1 for a
 * classifier, one per token for a language model. */
typedef enum input_kind { INPUT_FEATURES = 0, INPUT_TOKENS = 1 } input_kind;

typedef struct input_spec {
    input_kind kind;
    int width;
    int vocab; /* tokens only; 0 for features */
    int classes;
    int loss_items;
} input_spec;

/* Bytes of one input buffer of `effective` examples on the device: the
 * inputs, the labels, the validity flags and the loss scales (one per
 * micro-batch, at most E, and the full batch's). */
size_t input_buffer_bytes(const input_spec *in, storage s, int effective);

/* ----------------------------------------------------------- activations */

/* The device buffers of one micro-batch of up to `capacity` examples, in
 * the order the kind lists them (activation_sizes). Each kind asserts that
 * its deepest shape fits (the GPT: 11 buffers a block, 96 blocks). */
#define MODEL_MAX_ACTIVATIONS 1088

typedef struct activations {
    int capacity;
    int count;
    void *buf[MODEL_MAX_ACTIVATIONS];
    size_t buf_bytes[MODEL_MAX_ACTIVATIONS];
    size_t bytes; /* all of them */
} activations;

/* One micro-batch: examples [first, first + count) of a buffer. x holds
 * the inputs of every example of the buffer (features [width x E] in
 * compute storage, or token ids [width x E]); labels and valid hold
 * loss_items device ints per example; scale is a device float, the loss
 * normalisation of this micro-batch. */
typedef struct micro_batch_view {
    const void *x;
    const int *labels, *valid;
    const float *scale;
    int first, count;
    /* The window's first micro-batch: a kind that `writes_first_gradient`
     * writes its gradient over m->grads instead of adding to it, so that
     * the window starts without a pass that zeroes the gradient. */
    int first_of_window;
} micro_batch_view;

/* ----------------------------------------------------------- tensors */

/* One parameter tensor as PyTorch names and shapes it, for the window dump
 * (docs/dump.md). The floats at `offset` of the parameter vector are a
 * column-major [rows x cols] matrix, or a vector of rows floats. PyTorch's
 * tensor is that matrix as a row-major [rows, cols] array (an nn.Linear
 * weight [out, in]: the dump transposes the memory), or, when
 * `torch_is_transpose` is set, as a row-major [cols, rows] array (an
 * nn.Embedding weight [vocab, d] stored one token per column: the dump
 * writes the memory as it is). Vectors are written with shape [rows]: a
 * vector is said so (`vector`), never read from cols = 1, since a matrix
 * may have one column (nn.Linear(1, n)'s weight is [n, 1]). */
#define MODEL_TENSOR_NAME 64

typedef struct model_tensor {
    char name[MODEL_TENSOR_NAME]; /* PyTorch's state_dict key: "layers.0.weight" */
    size_t offset;
    int64_t rows, cols;
    int torch_is_transpose;
    int vector; /* a bias or a norm's gain: [rows] (cols is 1) */
    /* Its gradient is written twice in one backward (a tied weight: the
     * GPT's token embedding, by the LM head and by the embedding): ZeRO-2
     * keeps it in a place of its own for the whole backward (grad_ring.h). */
    int grad_twice;
} model_tensor;

/* A number a kind's arithmetic fixes for every shape (the Llama's rotary
 * base, its norms' epsilon): the dump's manifest writes it beside the
 * shape's keys, so that a checker builds the same model (docs/dump.md). */
typedef struct model_constant {
    const char *key;
    double value;
} model_constant;

/* ------------------------------------------------------------ model kind */

struct model_kind {
    const char *name; /* "mlp": the prefix of a custom shape */
    const model_dim *dims;
    int n_dims;
    const model_preset *presets;
    int n_presets;
    /* Its constants for the manifest; NULL and 0: none. */
    const model_constant *constants;
    int n_constants;
    /* Checks across keys once each key is in its range (a size that must
     * divide another, a total that must stay in bounds): 0, or -1 with a
     * reason. NULL: none needed. */
    int (*check)(const model_spec *s, char *why, size_t why_len);

    size_t (*param_count)(const model_spec *s);
    /* FLOPs of one optimizer step over `examples` examples: the same for
     * every split of the same effective batch. */
    double (*flops_per_step)(const model_spec *s, int examples);
    void (*input)(const model_spec *s, input_spec *out);
    /* Bytes of each activation buffer of one micro-batch of `capacity`
     * examples in storage st; returns how many (<= MODEL_MAX_ACTIVATIONS). */
    int (*activation_sizes)(const model_spec *s, storage st, int capacity, size_t *bytes);
    /* The recompute rows it can run (RECOMPUTE_BIT of each; none is always
     * among them), and what the recomputation of s->recompute costs over
     * `examples` examples: matrix-product FLOPs (2 m n k each, as
     * flops_per_step counts them) and GELU elements recomputed. NULL:
     * nothing is recomputed. */
    unsigned recompute_caps;
    void (*recompute_cost)(const model_spec *s, int examples, double *gemm_flops,
                           double *gelu_elements);
    /* The starting weights from the seed: param_count floats. */
    void (*init_weights)(const model_spec *s, uint64_t seed, float *w);

    /* The parameter tensors in the order of the parameter vector: writes up
     * to `max` into out (out may be NULL) and returns how many there are. */
    int (*tensors)(const model_spec *s, model_tensor *out, int max);

    /* The kind's own host state in m->impl, made after the parameters;
     * destroy also meets a half-made model. NULL: none. */
    int (*create)(model *m);
    void (*destroy)(model *m);
    /* Forward through the loss: loss_sum (device float) += the valid items'
     * losses, and the loss gradient scaled by *mb->scale left in `a` for
     * backward, which accumulates the weight gradients into m->grads.
     * A kind may run part of its backward here, adding into m->grads (the
     * decoders' LM head and loss, a chunk of tokens at a time: decoder_head.h):
     * a forward whose backward does not follow (a loss alone) leaves
     * m->grads to be zeroed by the next window. */
    int (*forward)(model *m, activations *a, const micro_batch_view *mb, float *loss_sum);
    int (*backward)(model *m, activations *a, const micro_batch_view *mb);
    /* 1 when backward calls model_grad_ready for each range of the
     * gradient as it becomes final, the whole vector from its end to its
     * start (tests/models/test_model_contract.c checks it), so that a
     * data-parallel step can all-reduce it behind the rest of the
     * backward, and a step on one device can run the optimizer on it
     * there. 0: the step all-reduces the whole gradient after backward,
     * and says so. */
    int reports_grad_ready;
    /* Set when backward writes every gradient element, rather than adding
     * to it, on a micro-batch marked first_of_window (model_start_window
     * then leaves the gradient as it is). 0: the gradient is zeroed first. */
    int writes_first_gradient;
    /* A small shape ("mlp:hidden=12,layers=2,classes=5") at which
     * tests/models/test_model_contract.c checks the kind: its gradient
     * against central differences of its loss, its tensors, its gradient
     * ranges, its window start and its memory need. Small enough that a
     * forward pass per checked element stays cheap (a few thousand
     * parameters), with every key above 1 where it can be, so that no path
     * of the model is a degenerate one. */
    const char *test_shape;
};

/* What a shape comes to, without building it. */
size_t model_param_count(const model_spec *s);
double model_flops_per_step(const model_spec *s, int examples);
void model_input(const model_spec *s, input_spec *out);
size_t activations_bytes(const model_spec *s, storage st, int capacity);
/* Whether s's kind can run s->recompute: 1, or 0 with the reason. */
int model_can_recompute(const model_spec *s, char *why, size_t why_len);
/* The FLOPs the recomputation of s->recompute adds to one optimizer step
 * over `examples` examples: its matrix products, and RECOMPUTE_GELU_FLOPS
 * per GELU element. Not in flops_per_step, so that MFU stays the useful
 * work's. 0 for none. */
double model_recompute_flops(const model_spec *s, int examples);
/* Its matrix-product part alone: what the window's GEMMs do beyond
 * flops_per_step. */
double model_recompute_gemm_flops(const model_spec *s, int examples);

#endif
