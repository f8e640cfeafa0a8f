#include "csv_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

/* The pid in a lock file, or 0 when unreadable. */
static long holder_of(int fd)
{
    char text[32] = {0};
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    return n > 0 ? strtol(text, NULL, 10) : 0;
}

int csv_lock_take(csv_lock *l, const char *csv_path, char *why, size_t why_len)
{
    l->fd = -1;
    if (snprintf(l->path, sizeof l->path, "%s.lock", csv_path) >= (int)sizeof l->path) {
        snprintf(why, why_len, "--csv %s: the path is too long", csv_path);
        return -1;
    }
    /* A holder removes the file before it lets go, so the file we locked
     * may have been unlinked in between: then the lock guards nothing and
     * we try again on the path's new file. */
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = atomic_file_open_lock(l->path);
        if (fd < 0) {
            snprintf(why, why_len, "--csv %s: cannot create the lock %s: %s", csv_path, l->path,
                     atomic_file_reason(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            long pid = holder_of(fd);
            close(fd);
            if (err == EWOULDBLOCK && pid > 0)
                snprintf(why, why_len, "--csv %s is being written by another run (pid %ld); "
                         "give this run another --csv", csv_path, pid);
            else if (err == EWOULDBLOCK)
                snprintf(why, why_len, "--csv %s is being written by another run (%s is "
                         "held); give this run another --csv", csv_path, l->path);
            else
                snprintf(why, why_len, "--csv %s: cannot lock %s: %s", csv_path, l->path,
                         strerror(err));
            return -1;
        }
        struct stat held, now;
        if (fstat(fd, &held) == 0 && lstat(l->path, &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino) {
            char pid[32];
            int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
                /* the pid is only for the message of a refused writer */
            }
            l->fd = fd;
            return 0;
        }
        close(fd);
    }
    snprintf(why, why_len, "--csv %s: cannot hold the lock %s (it keeps being replaced)",
             csv_path, l->path);
    return -1;
}

void csv_lock_release(csv_lock *l)
{
    if (l->fd < 0)
        return;
    /* Unlinked while still held, so no other run can lock this file and
     * then see it vanish. */
    unlink(l->path);
    close(l->fd);
    l->fd = -1;
}

int csv_claim_new(const char *stem, char *path, size_t cap, char *why, size_t why_len)
{
    for (int n = 1; n <= 1000; n++) {
        int len = n == 1 ? snprintf(path, cap, "%s.csv", stem)
                         : snprintf(path, cap, "%s-%d.csv", stem, n);
        if (len >= (int)cap) {
            snprintf(why, why_len, "cannot name the CSV %s.csv: the path is too long", stem);
            return -1;
        }
        int fd = atomic_file_create(path);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST) {
            snprintf(why, why_len, "cannot create %s: %s", path, atomic_file_reason(errno));
            return -1;
        }
    }
    snprintf(why, why_len, "cannot name the CSV: %s.csv and 999 numbered ones exist", stem);
    return -1;
}
