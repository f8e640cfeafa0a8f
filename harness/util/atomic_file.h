/* Files written whole or not at all. The text goes to a temporary beside
 * the target (PATH.tmp.PID: same folder, so the rename cannot cross file
 * systems), is flushed to the disk, and is renamed over the target. A
 * reader sees the old file or the new one, never half of either; on any
 * failure the temporary is removed and the target is left as it was. */
#ifndef ACCUBENCH_ATOMIC_FILE_H
#define ACCUBENCH_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Writes the file's content to f. Returns 0, or -1 with a one-line reason
 * (write errors of f itself need no reason: they are caught afterwards). */
typedef int (*atomic_writer)(FILE *f, void *ctx, char *why, size_t why_len);

/* Writes `path` through write(f, ctx) as described above. Returns 0, or -1
 * with a one-line reason in why. */
int atomic_write_file(const char *path, atomic_writer write, void *ctx, char *why,
                      size_t why_len);

/* Removes the temporaries a killed writer of `path` left beside it: the
 * files PATH.tmp.PID (the name above) whose PID no longer runs. A live
 * process's temporary, and every other file, is left alone. Returns how
 * many were removed. Called once before a program starts writing `path`. */
int atomic_file_remove_stale(const char *path);

#endif
