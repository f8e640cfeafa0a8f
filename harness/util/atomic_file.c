#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int atomic_file_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    /* The kernel's EPERM (a folder made immutable, chattr +i, mid-run) is
     * not the lock's refusal, which atomic_file_reason() words as one: it
     * said "not a regular file of its own" of a name nothing was at. */
    if (fd < 0 && errno == EPERM)
        errno = EACCES;
    return fd;
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
 * terminal, the quit key). One left to its default action (report, plan,
 * gpu-check) killed a program mid-write and left PATH.tmp.PID, half a
 * file, beside the target. For the time of a set such a signal is caught,
 * process-wide: a signal mask holds it for the calling thread alone, and
 * another thread that does not block it (Open MPI's, under mpirun) takes
 * it and dies of it as before. While the temporaries are written, the
 * signal gives their writing up at once: they are removed and it ends the
 * program, the targets as they were (a report of 10^5 rows writes for
 * seconds: too long to make a person wait). While they are renamed (a few
 * microseconds) it is held and ends the program once the set is whole, so
 * a set is never left half old and half new. A signal the program handles
 * itself (run's, which only notes it) is left alone: its handler runs as
 * the signal comes (under mpirun before the SIGKILL that follows it), and
 * the write goes on. An ignored one stays ignored. */
static const int STOP_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
enum { N_STOPS = sizeof STOP_SIGNALS / sizeof *STOP_SIGNALS };

enum { SET_IDLE, SET_WRITING, SET_RENAMING, SET_GIVEN_UP };
static atomic_int set_phase = SET_IDLE;
static atomic_int set_held;                      /* a signal held while renaming */
static char set_tmp[ATOMIC_FILES_MAX][ATOMIC_TMP_LEN]; /* the set's temporaries... */
static atomic_int set_tmps;                            /* ...that may exist */
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER; /* one set at a time */

/* Ends the program by sig, as its default action does: sig is blocked
 * while this handler runs, so it is delivered as the handler returns. */
static void end_by(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* Only calls safe in a handler (unlink, sigaction, raise) and lock-free
 * atomics: it may run on any thread, in the middle of the writer. */
static void on_stop_signal(int sig)
{
    int phase = SET_WRITING;
    if (atomic_compare_exchange_strong(&set_phase, &phase, SET_GIVEN_UP)) {
        for (int i = 0, n = atomic_load(&set_tmps); i < n; i++)
            unlink(set_tmp[i]);
        end_by(sig);
    } else if (phase == SET_RENAMING) {
        int none = 0;
        atomic_compare_exchange_strong(&set_held, &none, sig);
        if (atomic_load(&set_phase) == SET_IDLE) /* the set ended as it was held: */
            end_by(sig);                         /* its end may not have seen it */
    } else if (phase == SET_IDLE) {
        end_by(sig); /* delivered as the set ended: its default action is back */
    }
    /* SET_GIVEN_UP: another stop signal is ending the program already */
}

typedef struct stop_hold {
    struct sigaction old[N_STOPS];
    int caught[N_STOPS];
} stop_hold;

/* Takes the set's place (set_lock) and catches the stop signals left to
 * their default action. */
static void hold_stop_signals(stop_hold *h)
{
    pthread_mutex_lock(&set_lock);
    atomic_store(&set_tmps, 0);
    atomic_store(&set_held, 0);
    atomic_store(&set_phase, SET_WRITING); /* before the handler can run */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_STOPS; i++)
        sigaddset(&sa.sa_mask, STOP_SIGNALS[i]);
    for (int i = 0; i < N_STOPS; i++) {
        h->caught[i] = sigaction(STOP_SIGNALS[i], NULL, &h->old[i]) == 0 &&
                       !(h->old[i].sa_flags & SA_SIGINFO) && h->old[i].sa_handler == SIG_DFL;
        if (h->caught[i])
            sigaction(STOP_SIGNALS[i], &sa, NULL);
    }
}

/* The writing done: 0 to go on to the renames, -1 where a stop signal on
 * another thread gave the set up (it is ending the program). */
static int start_renaming(void)
{
    int phase = SET_WRITING;
    return atomic_compare_exchange_strong(&set_phase, &phase, SET_RENAMING) ? 0 : -1;
}

/* The defaults back; a signal held while renaming ends the program now. */
static void release_stop_signals(stop_hold *h)
{
    for (int i = 0; i < N_STOPS; i++)
        if (h->caught[i])
            sigaction(STOP_SIGNALS[i], &h->old[i], NULL);
    int given_up = atomic_load(&set_phase) == SET_GIVEN_UP;
    if (!given_up)
        atomic_store(&set_phase, SET_IDLE);
    int sig = atomic_exchange(&set_held, 0);
    pthread_mutex_unlock(&set_lock);
    if (sig)
        raise(sig);
    while (given_up) /* the signal that gave the set up ends the program */
        pause();
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

int atomic_file_temporary_fits(const char *path, const char *folder, char *why, size_t why_len)
{
    char target[ATOMIC_TMP_LEN], tmp[ATOMIC_TMP_LEN];
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') /* a folder's (--dump DIR/): DIR.tmp.PID */
        len--;
    if (len >= PATH_MAX || len >= sizeof target) { /* the limit the line names */
        snprintf(why, why_len, "the path is too long: %zu bytes, at most %d", len, PATH_MAX - 1);
        return -1;
    }
    memcpy(target, path, len);
    target[len] = '\0';
    if (temporary_name(target, tmp, why, why_len))
        return -1;
    const char *slash = strrchr(tmp, '/'), *name = slash ? slash + 1 : tmp;
    errno = 0;
    long name_max = pathconf(folder, _PC_NAME_MAX); /* -1 and errno 0: no limit */
    if (name_max > 0 && (long)strlen(name) > name_max) {
        /* the name is in the line already: the suffix alone */
        snprintf(why, why_len, "the name is too long: with its temporary's suffix (%s) it is "
                 "%zu bytes, over the %ld a name takes on its file system",
                 name + strlen(name) - (strlen(tmp) - strlen(target)), strlen(name), name_max);
        return -1;
    }
    if (strlen(tmp) >= PATH_MAX) {
        snprintf(why, why_len, "the path is too long: its temporary is %zu bytes, at most %d",
                 strlen(tmp), PATH_MAX - 1);
        return -1;
    }
    return 0;
}

/* Writes the whole text of path to its temporary tmp, flushed to the disk.
 * Returns 0 with the temporary in place, or -1 with nothing left behind. */
static int write_temporary(const atomic_file_job *job, const char tmp[static ATOMIC_TMP_LEN],
                           char *why, size_t why_len)
{
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

/* atomic_write_files, the stop signals caught (hold_stop_signals). */
static int write_set(const atomic_file_job *jobs, int n, char *why, size_t why_len)
{
    char (*tmp)[ATOMIC_TMP_LEN] = set_tmp;
    /* Every file written before any is renamed: a full disk or a refused
     * name in the last leaves all the targets as they were. */
    for (int i = 0; i < n; i++) {
        if (temporary_name(jobs[i].path, tmp[i], why, why_len)) {
            while (i-- > 0)
                unlink(tmp[i]);
            return -1;
        }
        atomic_store(&set_tmps, i + 1); /* named before it is made */
        if (write_temporary(&jobs[i], tmp[i], why, why_len)) {
            while (i-- > 0)
                unlink(tmp[i]);
            return -1;
        }
    }
    if (start_renaming()) {
        for (int i = 0; i < n; i++)
            unlink(tmp[i]);
        snprintf(why, why_len, "cannot write %s: stopped by a signal", jobs[0].path);
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
    if (n < 1 || n > ATOMIC_FILES_MAX) {
        snprintf(why, why_len, "cannot write %d files as one set (1 to %d)", n,
                 ATOMIC_FILES_MAX);
        return -1;
    }
    stop_hold h;
    hold_stop_signals(&h);
    int rc = write_set(jobs, n, why, why_len);
    release_stop_signals(&h);
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
