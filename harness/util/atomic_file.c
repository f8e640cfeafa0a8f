#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int atomic_file_create(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

int atomic_file_open_lock(const char *path)
{
    /* O_NONBLOCK: a FIFO planted at the name must not block the open. */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        /* The kernel's EPERM (a file made immutable, chattr +i) is not
         * the refusal below, which atomic_file_reason() words as one. */
        if (errno == EPERM)
            errno = EACCES;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

const char *atomic_file_reason(int err)
{
    if (err == ELOOP)
        return "a symbolic link is at that name (refused: it would be followed)";
    if (err == EEXIST)
        return "something is already at that name (refused: it would be followed)";
    if (err == EPERM)
        return "not a regular file of its own (refused: it would be written through)";
    return strerror(err);
}

/* The signals that stop a program from outside (Ctrl-C, kill, a closed
 * terminal), held back while a temporary exists: a program that takes them
 * by default (report, plan) died mid-write and left PATH.tmp.PID, half a
 * file, beside the target. Held, such a signal ends it just after the
 * rename or the removal; a handler (run's) runs then, its flag seen as
 * before. A write takes milliseconds: nothing waits long. */
static void hold_stop_signals(sigset_t *old)
{
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    sigaddset(&stops, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &stops, old);
}

/* The temporary's name for path; 0, or -1 with the reason. */
static int temporary_name(const char *path, char tmp[static ATOMIC_TMP_LEN], char *why,
                          size_t why_len)
{
    if (snprintf(tmp, ATOMIC_TMP_LEN, "%s.tmp.%ld", path, (long)getpid()) >= ATOMIC_TMP_LEN) {
        snprintf(why, why_len, "cannot write %s: the path is too long", path);
        return -1; /* nothing created: a truncated name is never removed */
    }
    return 0;
}

/* Writes the whole text of path to its temporary, flushed to the disk.
 * Returns 0 with the temporary in place, or -1 with nothing left behind. */
static int write_temporary(const atomic_file_job *job, char tmp[static ATOMIC_TMP_LEN],
                           char *why, size_t why_len)
{
    if (temporary_name(job->path, tmp, why, why_len))
        return -1;
    /* Created here, never opened through a link or over a planted file. */
    int fd = atomic_file_create(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int err = errno;
        snprintf(why, why_len, "cannot write %s: %s", tmp, atomic_file_reason(err));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return -1;
    }
    if (job->write(f, job->ctx, why, why_len) != 0) {
        fclose(f);
        unlink(tmp);
        return -1;
    }
    /* Every error the stream met, then the data on the disk before the
     * rename makes it the target: after a crash the target is the old file
     * or the whole new one. */
    int failed = ferror(f) != 0, err = errno; /* errno of the failed write */
    if (!failed && (fflush(f) != 0 || fsync(fileno(f)) != 0)) {
        failed = 1;
        err = errno;
    }
    if (fclose(f) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (failed) {
        snprintf(why, why_len, "cannot write %s: %s", job->path,
                 err ? strerror(err) : "write error");
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* atomic_write_files with the stop signals already held. */
static int write_set(const atomic_file_job *jobs, int n, char *why, size_t why_len)
{
    char tmp[ATOMIC_FILES_MAX][ATOMIC_TMP_LEN];
    if (n < 1 || n > ATOMIC_FILES_MAX) {
        snprintf(why, why_len, "cannot write %d files as one set (1 to %d)", n,
                 ATOMIC_FILES_MAX);
        return -1;
    }
    /* Every file written before any is renamed: a full disk or a refused
     * name in the last leaves all the targets as they were. */
    for (int i = 0; i < n; i++)
        if (write_temporary(&jobs[i], tmp[i], why, why_len)) {
            while (i-- > 0)
                unlink(tmp[i]);
            return -1;
        }
    for (int i = 0; i < n; i++)
        if (rename(tmp[i], jobs[i].path) != 0) {
            /* Renames do not fail on a full disk; this is a folder made
             * unwritable between the two loops. The earlier files are
             * already new; the rest stay old, and the line says which. */
            snprintf(why, why_len, "cannot rename %s to %s: %s%s", tmp[i], jobs[i].path,
                     strerror(errno), i ? " (the files before it are written)" : "");
            for (; i < n; i++)
                unlink(tmp[i]);
            return -1;
        }
    return 0;
}

int atomic_write_files(const atomic_file_job *jobs, int n, char *why, size_t why_len)
{
    sigset_t old;
    hold_stop_signals(&old);
    int rc = write_set(jobs, n, why, why_len);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int atomic_write_file(const char *path, atomic_writer write, void *ctx, char *why,
                      size_t why_len)
{
    atomic_file_job job = {path, write, ctx};
    return atomic_write_files(&job, 1, why, why_len);
}

/* The pid in NAME if it is BASE.tmp.PID, else 0. */
static long temporary_pid(const char *name, const char *base)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0 || strncmp(name + bl, ".tmp.", 5) != 0)
        return 0;
    const char *digits = name + bl + 5;
    char *end;
    if (*digits < '1' || *digits > '9')
        return 0;
    long pid = strtol(digits, &end, 10);
    return *end == '\0' && pid > 0 ? pid : 0;
}

int atomic_file_remove_stale(const char *path)
{
    char folder[4200];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else if (slash == path)
        snprintf(folder, sizeof folder, "/");
    else
        snprintf(folder, sizeof folder, "%.*s", (int)(slash - path), path);
    DIR *d = opendir(folder);
    if (!d)
        return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long pid = temporary_pid(e->d_name, base);
        /* ESRCH: no such process. EPERM means it runs (as someone else).
         * This process's own pid: it writes nothing before this call, so a
         * file by that name is a dead run's whose pid came round again. */
        if (pid <= 0 || (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)))
            continue;
        /* Only what a writer could have left: a regular file (a link, a
         * folder or a device by that name is someone else's). */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        removed += unlinkat(dirfd(d), e->d_name, 0) == 0;
    }
    closedir(d);
    return removed;
}
