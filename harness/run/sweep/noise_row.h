/* The noise scale's columns of a config's row (noise_pass.h): measured
 * when --noise-windows is not 0, from the starting weights; empty, with a
 * note, where a window holds one small batch. */
#ifndef ACCUBENCH_NOISE_ROW_H
#define ACCUBENCH_NOISE_ROW_H

#include "comm.h"
#include "model.h"
#include "noise_scale.h"
#include "config.h"
#include "result_row.h"
#include "split.h"

/* What a config's pass did, beyond the row's columns. */
typedef struct noise_row_pass {
    int windows_run;      /* the windows this call ran (0: none, or the last
                           * config's result reused), what its time was spent on */
    int windows_complete; /* the windows the estimate drew from (noise_result) */
    char none[RESULT_TEXT_LEN]; /* why the row has no noise scale; "" where it has */
} noise_row_pass;

/* BK_* status of the pass; the columns stay empty when it fails. */
int noise_row_fill(model *m, const config *cfg, comm *c, result_row *r, noise_row_pass *p);

/* A pass's B_simple and its error in examples (grad_noise_scale's unit)
 * from the window's mean valid items over `global` examples. 0, or -1
 * (nothing written) where there is no positive estimate to convert. */
int noise_in_examples(const noise_result *n, int global, double *b, double *err);

#endif
