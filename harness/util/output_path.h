/* Output paths checked before anything is measured. Every file the program
 * writes goes through a temporary and a rename (atomic_file.h), which would
 * quietly replace whatever the path names: a device node such as /dev/null,
 * a FIFO, a socket. A path that exists and is not what it should be is
 * refused here, with one line, before a run spends time measuring. */
#ifndef ACCUBENCH_OUTPUT_PATH_H
#define ACCUBENCH_OUTPUT_PATH_H

#include <stddef.h>

typedef enum {
    OUTPUT_FILE, /* a regular file, or nothing yet in an existing folder */
    OUTPUT_DIR,  /* a folder, created (with its parents) when missing */
} output_kind;

/* Checks `path` for output of the given kind. `what` names the option in
 * the reason ("--csv", "report --out").
 *   OUTPUT_FILE: the path is absent or a regular file (symbolic links are
 *     followed: a link to a regular file is accepted, and the link itself is
 *     replaced by the rename) that a rename may replace (not immutable or
 *     append-only, chattr +i or +a), and its folder exists and takes a new file
 *     (tried with a file created and removed: /proc passes access() as root).
 *   OUTPUT_DIR: the path is a writable folder, or is absent and is created
 *     here with its parents (mode 0777 less the umask).
 * Returns 0, or -1 with a one-line reason that echoes the path. */
int output_path_check(const char *what, const char *path, output_kind kind, char *why,
                      size_t why_len);

/* Whether `folder` takes a new entry, tried by creating a file in it and
 * removing it (root passes access() on /proc, where nothing can be made),
 * and, where `path` is not the folder itself, whether the name of path's
 * temporary fits its file system (atomic_file_temporary_fits). 0, or -1
 * with a reason naming `what` and `path` (the output that would land
 * there). */
int output_path_folder_takes_new(const char *what, const char *path, const char *folder,
                                 char *why, size_t why_len);

/* Whether the kernel keeps `path` from being replaced by a rename, root
 * too: immutable (chattr +i) or append-only (chattr +a), a file or a
 * folder. 0 when it does not (or has no such flags), else -1 with the
 * reason. */
int output_path_pinned(const char *what, const char *path, char *why, size_t why_len);

/* Whether two paths name one file: the same place once their folders are
 * resolved, or two names (links) of one existing file. */
int output_path_same(const char *a, const char *b);

/* Whether `path` lies inside the folder `dir` (at any depth). */
int output_path_within(const char *path, const char *dir);

#endif
