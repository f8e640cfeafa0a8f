/* Every path `accubench run` writes, checked before anything is measured
 * (output_path.h): a run that cannot keep its results is refused in its
 * first second, with one line, not after the sweep. */
#ifndef ACCUBENCH_RUN_OUTPUTS_H
#define ACCUBENCH_RUN_OUTPUTS_H

#include <stddef.h>

#include "csv_lock.h"
#include "options.h"

typedef struct run_outputs {
    csv_lock lock; /* on --csv, held for the run */
} run_outputs;

/* --csv: a regular file or nothing, in a writable folder, and locked for
 * the run (a second run writing the same file is refused); without it,
 * --out: a folder, created when missing (with --csv, --out is not
 * touched). --trace: a regular file or nothing, in a writable folder, and
 * a trace pass to fill it (--trace-steps not 0).
 * Temporaries a killed run left beside these files are removed
 * (atomic_file_remove_stale). A new output option adds its check here
 * (a folder it fills: output_path_check(NAME, path, OUTPUT_DIR, ...)).
 * Returns 0, or -1 with a one-line reason that echoes the path. */
int run_outputs_open(const run_options *o, run_outputs *out, char *why, size_t why_len);

/* Lets go of the lock (after the last write). */
void run_outputs_close(run_outputs *out);

#endif
