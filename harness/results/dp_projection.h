/* Past the ranks one machine has: a model of the gradient all-reduce,
 * fitted to the all-reduce times a data-parallel run measured, and the step
 * time and communication share it predicts at many devices (`accubench plan
 * --fit FILE.csv`). A model, labelled as one wherever it is printed.
 *
 * Ring all-reduce of B bytes over N devices, each link of bandwidth bw and
 * latency lat:  t(B, N) = 2 (N - 1) / N x B / bw + 2 (N - 1) x lat. */
#ifndef ACCUBENCH_DP_PROJECTION_H
#define ACCUBENCH_DP_PROJECTION_H

#include <stddef.h>
#include <stdio.h>

#include "csv_read.h"

typedef struct ring_model {
    double bw_bytes_per_s;
    double latency_s;
} ring_model;

/* The model's time of one all-reduce, in seconds. */
double ring_allreduce_s(const ring_model *m, double bytes, int devices);

/* One all-reduce measured: its bytes, its ranks, its seconds. */
typedef struct allreduce_sample {
    double bytes;
    int devices;
    double seconds;
} allreduce_sample;

/* The least-squares fit of bw and lat to n samples (relative errors, so a
 * small all-reduce counts as much as a large one). When the best latency
 * is negative, the fit is bandwidth alone (latency 0) and *note says so.
 * 0, or -1 with a reason (fewer than two samples, or no positive bandwidth
 * fits them). */
int ring_fit(const allreduce_sample *s, int n, ring_model *out, char *note, size_t note_len);

/* The all-reduce samples of a run's rows: ok rows of more than one device
 * whose all-reduces block (every sync mode but one that hides them: their
 * busy time is their transfer), one sample per row (the mean all-reduce of
 * its step; a config timed twice, once: RESULT_SECOND_ARM). Writes the
 * first max; returns how many the rows hold, which is more than max when
 * some were left out. */
int allreduce_samples(const csv_row *rows, size_t n, allreduce_sample *out, int max);

typedef struct projection_options {
    const char *csv_path;
    int fit_devices[32], n_fit_devices; /* 0: every count in the file */
    double bw_gbps, latency_us;         /* > 0: given, not fitted */
    int devices[32], n_devices;         /* where to predict */
} projection_options;

/* Reads the run, fits (or takes) the model, prints the fit, how far it is
 * from the rows it was not fitted on, and per split (micro x K on each
 * device, as measured) the predicted step time and communication share at
 * each device count, all-reducing per micro-batch and per window. 0, 1
 * when nothing could be projected, 2 on bad input (one line on stderr). */
int projection_main(FILE *out, const projection_options *o);

#endif
