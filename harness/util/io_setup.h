/* What a program sets up before it opens a file, so that a failing
 * environment makes a write fail, which every writer handles (one line,
 * the files as they were: atomic_file.h), rather than something worse.
 *
 * - A standard stream closed (`accubench run >&-`, a daemon's child):
 *   its number is free, and the next file opened takes it. The CSV's lock
 *   took fd 1 and the console table was written into it (the pid a
 *   refused run names was lost); a temporary that took fd 2 would get any
 *   line printed while it was written. /dev/null is opened at each closed
 *   one of fds 0, 1 and 2, the other way round (stdout and stderr for
 *   reading), so a write to the stream still fails (EBADF) as it would
 *   have: plan's and compare's "cannot write the output" still says so.
 * - A file-size limit (ulimit -f, a batch system's or systemd's
 *   LimitFSIZE): a write past it sends SIGXFSZ, whose default action
 *   killed the run mid-write, a temporary and the lock left behind and
 *   the row measured lost, not a word said. Ignored, the write fails with
 *   EFBIG as on a full disk. The programs it starts inherit that. */
#ifndef ACCUBENCH_IO_SETUP_H
#define ACCUBENCH_IO_SETUP_H

/* Both of the above; first thing in main, before anything is opened. */
void io_setup(void);

#endif
