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

/* BK_* status of the pass; the columns stay empty when it fails.
 * *windows_run: the windows this call ran (0: none, or the last config's
 * result reused), what the time it took was spent on. */
int noise_row_fill(model *m, const config *cfg, comm *c, result_row *r, int *windows_run);

/* A pass's B_simple and its error in examples (grad_noise_scale's unit)
 * from the window's mean valid items over `global` examples. 0, or -1
 * (nothing written) where there is no positive estimate to convert. */
int noise_in_examples(const noise_result *n, int global, double *b, double *err);

#endif
