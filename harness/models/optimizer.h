/* The optimizers every model steps with: an update over the fp32 parameter
 * vector (model_optimizer_step, or model_optimizer_range per range of it),
 * so a model never sees them. */
#ifndef ACCUBENCH_OPTIMIZER_H
#define ACCUBENCH_OPTIMIZER_H

typedef enum optimizer_kind { OPT_ADAMW = 0, OPT_SGD = 1, OPT_COUNT } optimizer_kind;

/* When the update runs (the arithmetic is the same, to the bit):
 * step: over the whole vector once the window's last micro-batch is done.
 * backward: on each range of the vector as the window's last backward
 *   finishes it (model_grad_ready), while that range's gradient and
 *   weights are still in cache; the rest after the backward. A step on
 *   several devices (the all-reduce must come first) or captured as a
 *   graph runs at `step`. */
typedef enum optimizer_at { OPT_AT_STEP = 0, OPT_AT_BACKWARD = 1, OPT_AT_COUNT } optimizer_at;

typedef struct optimizer_config {
    optimizer_kind kind;
    float lr, beta1, beta2, eps, weight_decay;
    optimizer_at at;
} optimizer_config;

/* "adamw", "sgd": the CLI's, the profiles' and the metadata's spelling;
 * "?" when k is out of range. */
const char *optimizer_name(optimizer_kind k);
/* Returns 0 and sets *out, or -1 when the name is unknown. */
int optimizer_parse(const char *s, optimizer_kind *out);
/* "adamw, sgd": every name, for messages. */
const char *optimizer_names(void);

/* "step", "backward"; "?" when out of range. */
const char *optimizer_at_name(optimizer_at a);
/* Returns 0 and sets *out, or -1 when the name is unknown. */
int optimizer_at_parse(const char *s, optimizer_at *out);
/* "step, backward". */
const char *optimizer_at_names(void);

#endif
