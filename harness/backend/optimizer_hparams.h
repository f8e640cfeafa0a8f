/* The numbers one optimizer step reads from device memory. The harness
 * writes them (backend.h's adamw op takes a device copy, so a captured graph
 * replays the current step's bias correction); the per-element update in
 * kernels/elementwise.h reads them. Plain C: no device header. */
#ifndef ACCUBENCH_OPTIMIZER_HPARAMS_H
#define ACCUBENCH_OPTIMIZER_HPARAMS_H

/* Hyper-parameters of one AdamW step. bias_correction1/2 are 1 - beta^t,
 * computed once per step on the host. */
typedef struct adamw_hparams {
    float lr, beta1, beta2, eps, weight_decay;
    float bias_correction1, bias_correction2;
} adamw_hparams;

#endif
