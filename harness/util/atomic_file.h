/* Files written whole or not at all. The text goes to a temporary beside
 * the target (PATH.tmp.PID: same folder, so the rename cannot cross file
 * systems), is flushed to the disk, and is renamed over the target. A
 * reader sees the old file or the new one, never half of either; on any
 * failure the temporary is removed and the target is left as it was. A
 * stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that would end the
 * program leaves none behind, on whichever thread it lands: while the
 * temporaries are written it ends the program at once, removing them;
 * while they are renamed it is held until the set is whole. One the
 * program handles runs its handler as it comes, and the write goes on. */
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

/* One file of a set written together. */
typedef struct atomic_file_job {
    const char *path;
    atomic_writer write;
    void *ctx;
} atomic_file_job;

enum { ATOMIC_FILES_MAX = 8, ATOMIC_TMP_LEN = 4200 };

/* Writes n files (1..ATOMIC_FILES_MAX) as one set: every temporary is
 * written and flushed before any is renamed, so a failure while writing
 * (a full disk, a refused name) leaves every target as it was, and the
 * files of one set never come from two runs. Returns 0, or -1 with a
 * one-line reason. One set at a time: a writer must not write another. */
int atomic_write_files(const atomic_file_job *jobs, int n, char *why, size_t why_len);

/* Whether the temporary of `path` (PATH.tmp.PID, this process's pid) is a
 * name the file system of `folder`, path's folder, takes: its last part
 * at most NAME_MAX bytes (pathconf: 255 on most) and the whole under
 * PATH_MAX. A target whose name fits with no room for the suffix was
 * refused only at its first write, after a run had measured. 0, or -1
 * with a reason naming both limits. */
int atomic_file_temporary_fits(const char *path, const char *folder, char *why, size_t why_len);

/* Creates path as a new file for writing: O_CREAT|O_EXCL|O_NOFOLLOW, so a
 * symbolic link or any file already at that name is never followed or
 * reused. Returns the descriptor, or -1 with errno (EEXIST, ELOOP). */
int atomic_file_create(const char *path);

/* Opens (creating when absent) a lock file for reading and writing, never
 * through a symbolic link (ELOOP), and only a regular file with one name
 * (EPERM otherwise: a planted hard link or device is not written to).
 * A lock file a killed holder left is reused. Returns the descriptor or -1. */
int atomic_file_open_lock(const char *path);

/* The words for errno from the two calls above, for a one-line reason. */
const char *atomic_file_reason(int err);

/* Removes the temporaries a killed writer of `path` left beside it: the
 * regular files PATH.tmp.PID (the name above) whose PID no longer runs, or
 * is this process's own (nothing of it is written yet). A live process's
 * temporary, a link, a folder and every other file are left alone. Returns how
 * many were removed. Called once before a program starts writing `path`. */
int atomic_file_remove_stale(const char *path);

#endif
