#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int atomic_write_file(const char *path, atomic_writer write, void *ctx, char *why,
                      size_t why_len)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(why, why_len, "cannot write %s: the path is too long", path);
        return -1; /* nothing created: a truncated name is never removed */
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(why, why_len, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (write(f, ctx, why, why_len) != 0) {
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
        snprintf(why, why_len, "cannot write %s: %s", path, err ? strerror(err) : "write error");
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(why, why_len, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
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
        /* ESRCH: no such process. EPERM means it runs (as someone else). */
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char stale[8400];
        snprintf(stale, sizeof stale, "%s/%s", folder, e->d_name);
        removed += unlink(stale) == 0;
    }
    closedir(d);
    return removed;
}
