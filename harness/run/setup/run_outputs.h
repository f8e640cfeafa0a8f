/* Every path `accubench run` writes, checked before anything is measured
 * (output_path.h): a run that cannot keep its results is refused in its
 * first second, with one line, not after the sweep. */
#ifndef ACCUBENCH_RUN_OUTPUTS_H
#define ACCUBENCH_RUN_OUTPUTS_H

#include <stddef.h>

#include "csv_lock.h"
#include "options.h"

typedef struct run_outputs {
    char csv_path[1300]; /* the CSV this run writes */
    int named_here;      /* the run chose the name (no --csv) */
    csv_lock lock;       /* on csv_path, held for the run */
    csv_existing existing; /* a --csv that holds rows: CSV_APPEND or CSV_REPLACE */
    /* --train-steps: NAME.curves.csv beside the CSV, reserved and locked as
     * the CSV is; curves_append where it holds curves and --append asks to
     * add to them, curves_replace where --replace replaces them. Without
     * --train-steps, set only where --replace is to remove an earlier
     * run's curves; else "". */
    char curves_path[1400];
    csv_lock curves_lock;
    int curves_append, curves_replace;
} run_outputs;

/* --trace: a regular file or nothing, in a writable folder, and a trace
 * pass to fill it (--trace-steps not 0). --csv: reserved as every
 * command's CSV is (csv_reserve: a regular file or nothing, in a writable
 * folder, an accubench CSV when it holds anything, and then --append or
 * --replace). Without --csv, --out: a folder, created when
 * missing (with --csv, --out is not touched), and in it a fresh name
 * (csv_claim_new) from the profile, the backend and the dtype. Either CSV
 * is locked for the run: a second run writing the same file is refused.
 * --train-steps: the curves file beside the CSV (curves_path_of) checked,
 * locked and judged the same way (an earlier run's curves need --append or
 * --replace), and kept apart from --trace and --dump. Without it, an
 * earlier run's curves there are kept by --append, removed with the rows
 * by --replace, and else refused.
 * Temporaries a killed run left beside these files are removed
 * (atomic_file_remove_stale). A new output option adds its check here
 * (a folder it fills: output_path_check(NAME, path, OUTPUT_DIR, ...)).
 * Returns 0, or -1 with a one-line reason that echoes the path. */
int run_outputs_open(const run_options *o, const char *backend_name, run_outputs *out,
                     char *why, size_t why_len);

/* Lets go of the lock (after the last write). With `discard`, a name the
 * run chose is given up too (its file removed: nothing was written). */
void run_outputs_close(run_outputs *out, int discard);

#endif
