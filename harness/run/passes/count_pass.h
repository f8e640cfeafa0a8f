/* The counting pass: a few steps after the timed ones, with the backend's
 * table wrapped so that every GEMM is tallied by shape and every host
 * sync (sync, a download, a timer read) is counted. Apart from the timed
 * pass because the wrapping costs time of its own (the CPU's GEMMs are
 * timed one by one by the host clock around each call).
 *
 * The GEMMs' own time is measured only where a dispatch is the device's
 * work itself (BK_CAP_DISPATCH_IS_DEVICE_WORK: the CPU, whose call
 * returns when the product is done); elsewhere the shapes are counted and
 * their time is left unmeasured. */
#ifndef ACCUBENCH_COUNT_PASS_H
#define ACCUBENCH_COUNT_PASS_H

#include "result_row.h"
#include "step_runner.h"

/* Shapes kept apart; a step with more distinct ones tallies the rest as
 * "other". */
#define COUNT_MAX_SHAPES 32

typedef struct gemm_shape_tally {
    int m, n, k, batch, trans_a, trans_b;
    double calls, ms; /* over the counted steps */
} gemm_shape_tally;

typedef struct count_result {
    int steps;
    int timed;                 /* the GEMMs' time was measured */
    double host_syncs;         /* over the steps */
    double gemm_ms;            /* every GEMM's, over the steps */
    int n_shapes;
    gemm_shape_tally shapes[COUNT_MAX_SHAPES + 1]; /* the last: "other" */
} count_result;

/* Runs `steps` optimizer steps with the counting table in place, then
 * puts the backend's own table back. BK_* status. */
int count_pass_run(step_runner *s, int steps, count_result *out);

/* The row's host_syncs_per_step, gemm_ms_per_step and gemm_shapes
 * ("M x N x K [x batch]: calls, ms and MFU per step", the costliest first,
 * MFU against peak_tflops, the higher probe's rate; NAN: no MFU). */
void count_fill_row(result_row *r, const count_result *c, double peak_tflops);

#endif
