/* The optimizers every model steps with: one update over the whole fp32
 * parameter vector (model_optimizer_step), so a model never sees them. */
#ifndef ACCUBENCH_OPTIMIZER_H
#define ACCUBENCH_OPTIMIZER_H

typedef enum optimizer_kind { OPT_ADAMW = 0, OPT_SGD = 1, OPT_COUNT } optimizer_kind;

typedef struct optimizer_config {
    optimizer_kind kind;
    float lr, beta1, beta2, eps, weight_decay;
} optimizer_config;

/* "adamw", "sgd": the CLI's, the profiles' and the metadata's spelling;
 * "?" when k is out of range. */
const char *optimizer_name(optimizer_kind k);
/* Returns 0 and sets *out, or -1 when the name is unknown. */
int optimizer_parse(const char *s, optimizer_kind *out);
/* "adamw, sgd": every name, for messages. */
const char *optimizer_names(void);

#endif
