/* The curves CSV of --train-steps (train_curves.h): a row per step of
 * every config's curve, and a `#` summary line per series at the end. It
 * has the CSV's guarantees (docs/files-and-locks.md): reserved with the
 * run's other outputs before anything is measured (run_outputs.h), under
 * its own lock, rewritten whole after each row with a curve is written
 * (so a run that stops keeps the curves of its rows), and added to with
 * --append. */
#ifndef ACCUBENCH_CURVES_FILE_H
#define ACCUBENCH_CURVES_FILE_H

#include <stdio.h>

#include "atomic_file.h"
#include "result_row.h"

/* The digits the curves file names a rate by (a float's: "0.0015", not
 * 0.00150000001): rates of a grid must differ in them, or their curves
 * would read as one (lr_grid_parse refuses such a grid). */
#define LR_CURVE_DIGITS 7

typedef struct curve {
    result_row key; /* the config's columns */
    int reverse;
    double lr;    /* the learning rate it trained at */
    double *loss;
    double *noise; /* steps x 2: B_simple and its error per step, NAN where
                    * not measured (curve_noise.h); NULL: none */
} curve;

typedef struct curves_file {
    char path[1400];
    int steps;
    curve *curves;
    int count, capacity;
    /* curves[0..rows) are those of rows written to the CSV, in the order
     * written, and the only ones the file gets; the rest wait for theirs
     * (a comparison timed in rounds trains every member's curve before
     * its first row is written) */
    int rows;
    char *earlier; /* --append: the file's rows and summaries as they were */
    int unwritten; /* curves of written rows the file does not hold yet */
    int taking;    /* the curves of the row being written (curves_row_job) */
    int replaced;  /* --replace: the file holds the replaced run's curves,
                    * which the first flush rewrites (or removes) */
} curves_file;

/* The curves file's name beside the main CSV: NAME.curves.csv for NAME.csv
 * (or NAME). */
void curves_path_of(const char *main_csv, char *out, size_t len);

/* The file at `path` (reserved: run_outputs.h), `steps` a curve (0: a
 * run that trains none, opened only to replace an earlier run's). With
 * `append`, the rows it holds are kept, after a check that its columns are
 * this version's; with `replace`, the first flush writes this run's curves
 * over them, or removes the file where it has none. Nothing is written
 * yet. 0, or -1 with the reason. */
int curves_open(curves_file *c, const char *path, int steps, int append, int replace,
                char *why, size_t why_len);
/* One config's curve at learning rate lr (with the noise scale along it
 * and its error where measured, else both NULL), kept until its row is written.
 * 0, or -1 with the reason (out of memory). */
int curves_add(curves_file *c, const result_row *key, int reverse, double lr,
               const double *loss, const double *noise, const double *noise_err, char *why,
               size_t why_len);
/* The curves file's part in the write of `row`, which writes both files
 * as one set (csv_writer_append_with): its curves join those of the rows
 * written before it. 1 with *job set when the file is rewritten whole
 * with them (it gained one, or holds a replaced run's curves and this
 * run has some), 0 when it stays as it is. The curves of rows not written
 * yet stay out. Then curves_row_done. */
int curves_row_job(curves_file *c, const result_row *row, atomic_file_job *job);
/* After the set: `written` 0 (a full disk: neither file changed), and the
 * row's curves wait again, so that the file, curves_written and the
 * summary lines say only what is on disk; 1, and where the file holds a
 * replaced run's curves and this run has none yet, they are removed (the
 * rows they belong to are gone). So the curves on disk are those of the
 * rows on disk. 0, or -1 with the reason (the removal failed). */
int curves_row_done(curves_file *c, int written, char *why, size_t why_len);
/* The curves of the rows written (curves_row_done). */
int curves_written(const curves_file *c);
/* The summary line of each series written to `echo` (when not NULL), and
 * the curves freed. */
void curves_close(curves_file *c, FILE *echo);

#endif
