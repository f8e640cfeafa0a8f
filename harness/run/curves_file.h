/* The curves CSV of --train-steps (train_curves.h): a row per step of
 * every config's curve, and a `#` summary line per series at the end. */
#ifndef ACCUBENCH_CURVES_FILE_H
#define ACCUBENCH_CURVES_FILE_H

#include <stdio.h>

#include "result_row.h"

typedef struct curve {
    result_row key; /* the config's columns */
    int reverse;
    double *loss;
} curve;

typedef struct curves_file {
    char path[1400];
    int steps;
    curve *curves;
    int count, capacity;
} curves_file;

/* NAME.curves.csv beside the main CSV (NAME.csv): refused when it exists,
 * unless `replace`. Nothing is written yet. 0, or -1 with the reason. */
int curves_open(curves_file *c, const char *main_csv, int steps, int replace, char *why,
                size_t why_len);
/* One config's curve, kept for the file and the summary. 0 or -1. */
int curves_add(curves_file *c, const result_row *key, int reverse, const double *loss);
/* Writes the file whole (atomic_file.h): every curve's rows, then a
 * summary line per series (also to `echo` when not NULL), and frees the
 * curves. 0, or -1 with the reason. */
int curves_close(curves_file *c, FILE *echo, char *why, size_t why_len);

#endif
