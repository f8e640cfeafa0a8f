/* What `run --csv FILE` does with a FILE that already holds something. A
 * run never empties a file it was not told to: without a word it is
 * refused; --append adds this run's rows to it (a compatible file only:
 * this build's columns, the same backend, device, dtype, optimizer and
 * memory cap, so the rows compare); --replace starts it again, but
 * only once the first row is measured (an interrupted run keeps the old
 * file whole). Checked under the CSV's lock, before anything is measured. */
#ifndef ACCUBENCH_CSV_EXISTING_H
#define ACCUBENCH_CSV_EXISTING_H

#include <stddef.h>

typedef enum csv_existing {
    CSV_REFUSE = 0, /* the default: an existing file is refused */
    CSV_APPEND,
    CSV_REPLACE,
} csv_existing;

struct csv_writer;

/* Whether `path` holds anything (a file of 0 bytes holds nothing): 1, 0,
 * or -1 with a one-line reason when it holds something and `want` is
 * CSV_REFUSE. */
int csv_existing_check(const char *path, csv_existing want, char *why, size_t why_len);

/* --append: reads `path` and checks it against the metadata already set
 * in `w` (run_metadata_write), then keeps its rows in `w` (written before
 * this run's) and its metadata lines this run does not set. Returns 0, or
 * -1 with a one-line reason saying what differs. */
int csv_existing_adopt(struct csv_writer *w, const char *path, char *why, size_t why_len);

#endif
