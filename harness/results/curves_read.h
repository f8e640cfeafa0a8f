/* Reading back the curves file of --train-steps (NAME.curves.csv beside
 * NAME.csv; harness/run/passes/curves_file.h writes it): one curve per config,
 * order and learning rate, its loss per step. Columns are found by name,
 * so a file from before the `lr` column still reads (lr NAN). A quoted
 * model spec's commas read as ';', the main CSV's spelling of the same
 * name, so that a curve and its rows match. Each run's rows end with its
 * summary lines ("# curves ... steps=N"): a curve of other length, or rows
 * with none after them (a file cut between lines), are refused. */
#ifndef ACCUBENCH_CURVES_READ_H
#define ACCUBENCH_CURVES_READ_H

#include <stddef.h>

#include "levers.h"

#define CURVE_TEXT 256

/* How each run's summary lines begin, one per series after the run's rows:
 * "# curves SERIES steps=N: gap_...=..." (curves_file.c writes them; the
 * readers find the runs' ends and the report its bullets by it). */
#define CURVES_SUMMARY_PREFIX "# curves "

typedef struct read_curve {
    char backend[CURVE_TEXT], model[CURVE_TEXT], dtype[CURVE_TEXT], mode[CURVE_TEXT],
        reduction[CURVE_TEXT], sync[CURVE_TEXT], recompute[CURVE_TEXT], shard[CURVE_TEXT],
        grad_dtype[CURVE_TEXT]; /* "" in a file from before the column */
    long long effective_batch, micro_batch, accum_steps, devices, arm;
    int reverse;   /* the sums taken in reverse order */
    double lr;     /* NAN: a file without the column */
    int steps;     /* steps logged (1 + the largest step) */
    int rows;      /* rows read: more than steps is a step written twice */
    int run;       /* the run that wrote it, counted by the summary lines
                    * that end each run's rows: a later run's curve of the
                    * same key (a config appended again) is not read */
    double *loss;  /* steps values; NAN where empty (diverged) */
    double *noise, *noise_err; /* per step, the noise scale measured along
                                * the curve (examples); NAN where not */
} read_curve;

typedef struct curves_table {
    read_curve *c;
    size_t n;
    size_t rewritten; /* configs' curves a later run wrote again (the first
                       * read), not counting their reverse-order twins */
} curves_table;

/* Curve k's value of each lever ("" for a file from before its column). */
lever_values read_curve_levers(const read_curve *k);

/* The curves file beside a main CSV: NAME.curves.csv for NAME.csv. */
void curves_path_beside(const char *main_csv, char *out, size_t len);

/* Reads `path`. 0; 1 when there is no such file (nothing to free); -1
 * with a one-line reason when it cannot be read or is not a curves file. */
int curves_read(const char *path, curves_table *out, char *why, size_t why_len);
void curves_table_free(curves_table *t);

/* The sentence plan and report print where a later run wrote curves again
 * ("NAME holds 2 curves a later run wrote again (...): the first run's
 * are read, ..."), "" where none was; `name` is the file as shown. */
void curves_rewritten_text(const curves_table *t, const char *name, char *out, size_t len);

#endif
