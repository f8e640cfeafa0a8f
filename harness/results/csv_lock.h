/* One writer per CSV: a lock on a path the user named, a fresh name for
 * a path the run chooses. The CSV itself is replaced by a rename after every
 * row (csv_writer.h), so a lock on it would be lost with the old file: the
 * lock is on PATH.lock beside it, held (flock) for the whole run and
 * removed when the run ends. The holder's pid is written into the lock file
 * so that a refused second writer can say who has it. The kernel drops the
 * lock when its holder dies, however it dies: a lock file left by a killed
 * run is taken over by the next. */
#ifndef ACCUBENCH_CSV_LOCK_H
#define ACCUBENCH_CSV_LOCK_H

#include <stddef.h>

typedef struct csv_lock {
    int fd; /* -1: not held */
    char path[4200];
} csv_lock;

/* Takes the lock on csv_path, or refuses at once (never waits). Returns 0,
 * or -1 with a one-line reason naming the path and the holder's pid. */
int csv_lock_take(csv_lock *l, const char *csv_path, char *why, size_t why_len);

/* Removes the lock file and lets go; a lock not held is left alone. */
void csv_lock_release(csv_lock *l);

/* A default name no other run has: creates STEM.csv, or STEM-2.csv,
 * STEM-3.csv ... whichever is free first (O_EXCL, so two runs started in
 * the same second never get the same file), as an empty file that the
 * run's first write replaces. Writes the name to path. Returns 0, or -1
 * with a one-line reason. */
int csv_claim_new(const char *stem, char *path, size_t cap, char *why, size_t why_len);

#endif
