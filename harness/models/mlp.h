/* The MLP: input width = hidden; `layers` blocks of Linear + bias + GELU; a
 * final Linear to `classes`; softmax cross-entropy over examples that carry
 * a validity mask. Weights and biases of every layer sit in order in the
 * model's one parameter vector.
 *
 * Presets: tiny, S, M, L, XL; any other shape as
 * mlp:hidden=N,layers=N,classes=N. */
#ifndef ACCUBENCH_MLP_H
#define ACCUBENCH_MLP_H

#include "model_kind.h"

extern const model_kind mlp_kind;

/* The keys of a shape, in order (model_spec.dims). */
enum { MLP_HIDDEN = 0, MLP_LAYERS = 1, MLP_CLASSES = 2 };

#define MLP_MAX_LAYERS 64
#define MLP_MAX_LINEAR (MLP_MAX_LAYERS + 1)

/* Which linear layer sits where in the parameter vector. */
typedef struct mlp_layout {
    int n_linear;
    int in[MLP_MAX_LINEAR], out[MLP_MAX_LINEAR];
    size_t w_off[MLP_MAX_LINEAR], b_off[MLP_MAX_LINEAR];
    size_t n_params;
    int max_width; /* widest activation: max(hidden, classes) */
} mlp_layout;

void mlp_layout_of(const model_spec *s, mlp_layout *out);

#endif
