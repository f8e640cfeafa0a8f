/* What a command that writes a CSV (run --csv FILE, plan --recommend
 * --csv, gpu-check --csv) does with a FILE that already holds something.
 * A writer never empties a file it was not told to: a file that is not one
 * of its own kind (a notes file, another program's table) is refused
 * whatever it is told; one of its kind is refused without a word;
 * --append adds this run's rows to it (a compatible file only: this
 * build's columns, the same backend, device, dtype, optimizer and memory
 * cap, so the rows compare); --replace starts it again, but only once the
 * first row is measured (an interrupted run keeps the old file whole).
 * Checked under the CSV's lock, before anything is measured. */
#ifndef ACCUBENCH_CSV_EXISTING_H
#define ACCUBENCH_CSV_EXISTING_H

#include <stddef.h>

#include "csv_lock.h"

typedef enum csv_existing {
    CSV_REFUSE = 0, /* the default: an existing file is refused */
    CSV_APPEND,
    CSV_REPLACE,
} csv_existing;

struct csv_writer;

/* What makes a file one a writer may append to or replace: the columns its
 * header row (the first line that is neither blank nor a `#` line) holds. */
typedef struct csv_kind {
    const char *name;           /* "an accubench CSV", in the reason */
    const char *const *columns; /* NULL-terminated */
    int appendable;             /* the writer takes --append */
} csv_kind;

/* accubench's results (run, plan --recommend): a backend, a model and a
 * status column (a loss-curves file has the first two), as the PyTorch
 * peer's writer checks too. */
extern const csv_kind csv_kind_results;

/* Whether `path` holds anything (a file of 0 bytes, or of a header and no
 * row, holds nothing to lose): 1, 0, or -1 with a one-line reason when it
 * holds something and `want` is CSV_REFUSE, or when what it holds is not
 * of `kind`. */
int csv_existing_check(const char *path, csv_existing want, const csv_kind *kind, char *why,
                       size_t why_len);

/* Reserves a CSV a user named (`what`: the option, "--csv") for one
 * writer, before anything is measured: the path is a regular file or
 * nothing in an existing folder (output_path.h), it is locked for the
 * writer (csv_lock.h), what it holds is checked under the lock
 * (csv_existing_check), and a dead writer's temporaries beside it are
 * removed. Returns 0 with the lock held and *existing CSV_APPEND or
 * CSV_REPLACE where the file holds rows (CSV_REFUSE where it holds
 * nothing), or -1 with a one-line reason and nothing held. */
int csv_reserve(const char *what, const char *path, csv_existing want, const csv_kind *kind,
                csv_lock *lock, csv_existing *existing, char *why, size_t why_len);

/* --append: reads `path` and checks it against the metadata already set
 * in `w` (run_metadata_write), then keeps its rows in `w` (written before
 * this run's) and its metadata lines this run does not set. Returns 0, or
 * -1 with a one-line reason saying what differs. */
int csv_existing_adopt(struct csv_writer *w, const char *path, char *why, size_t why_len);

#endif
