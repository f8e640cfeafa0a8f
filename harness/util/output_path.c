#include "output_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

#define PATH_CAP 4096

/* What a path is, in the words of the refusal. */
static const char *kind_of(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* The folder a file path lands in ("." for a bare name). */
static void folder_of(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == path)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

int output_path_folder_takes_new(const char *what, const char *path, const char *folder,
                                 char *why, size_t n)
{
    /* A file (or a dump's folder) is written as PATH.tmp.PID beside it:
     * that name must fit too, or the first write after the measuring
     * fails (a folder asked for as itself, --out, has none). */
    char reason[600];
    if (strcmp(path, folder) != 0 &&
        atomic_file_temporary_fits(path, folder, reason, sizeof reason)) {
        snprintf(why, n, "%s %s: %s", what, path, reason);
        return -1;
    }
    struct stat st;
    if (stat(folder, &st) != 0) {
        snprintf(why, n, "%s %s: folder %s %s", what, path, folder,
                 errno == ENOENT ? "does not exist" : strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, n, "%s %s: %s is %s, not a folder", what, path, folder,
                 kind_of(st.st_mode));
        return -1;
    }
    if (access(folder, W_OK | X_OK) != 0) {
        snprintf(why, n, "%s %s: folder %s is not writable: %s", what, path, folder,
                 strerror(errno));
        return -1;
    }
    /* access() says yes to root on a folder that takes no new files (/proc,
     * /sys): only creating one tells, and the writes come after a run. */
    char probe[PATH_CAP + 32];
    snprintf(probe, sizeof probe, "%s/.accubench-probe-XXXXXX", folder);
    int fd = mkstemp(probe);
    if (fd < 0) {
        snprintf(why, n, "%s %s: cannot create a file in folder %s: %s", what, path, folder,
                 strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* Its folder takes new files, so only this tells before a run that the
 * rename at its end would fail. A link is replaced, not its target, and a
 * file system without the flags has none set. */
int output_path_pinned(const char *what, const char *path, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int flags = 0; /* the kernel reads and writes an int, whatever the macro says */
    int got = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    close(fd);
    if (!got || !(flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
        return 0;
    snprintf(why, n, "%s %s is %s (chattr %s): the rename that writes it would fail; "
             "clear the flag or name another path", what, path,
             flags & FS_IMMUTABLE_FL ? "immutable" : "append-only",
             flags & FS_IMMUTABLE_FL ? "+i" : "+a");
    return -1;
}

/* mkdir -p: each missing component in turn. */
static int make_folders(const char *what, const char *dir, char *why, size_t n)
{
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                snprintf(why, n, "%s %s: cannot create the output directory %s: %s", what,
                         dir, path, strerror(errno));
                return -1;
            }
            *p = c;
        }
        if (c == '\0')
            break;
    }
    return 0;
}

int output_path_check(const char *what, const char *path, output_kind kind, char *why,
                      size_t why_len)
{
    if (!path[0] || strlen(path) >= PATH_CAP) {
        snprintf(why, why_len, "%s '%s': needs a path of 1 to %d characters", what, path,
                 PATH_CAP - 1);
        return -1;
    }
    struct stat st;
    int exists = stat(path, &st) == 0;
    /* ENOTDIR: a file in the way; what to say about it is below. */
    if (!exists && errno != ENOENT && errno != ENOTDIR) {
        snprintf(why, why_len, "%s %s: %s", what, path, strerror(errno));
        return -1;
    }
    if (kind == OUTPUT_FILE) {
        if (exists && S_ISDIR(st.st_mode)) {
            snprintf(why, why_len, "%s %s is a folder, not a file", what, path);
            return -1;
        }
        if (exists && !S_ISREG(st.st_mode)) {
            snprintf(why, why_len, "%s %s is %s, not a regular file (refused: writing would "
                     "replace it)", what, path, kind_of(st.st_mode));
            return -1;
        }
        if (exists && output_path_pinned(what, path, why, why_len))
            return -1;
        char folder[PATH_CAP];
        folder_of(path, folder, sizeof folder);
        return output_path_folder_takes_new(what, path, folder, why, why_len);
    }
    if (exists && !S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "%s %s is %s, not a folder", what, path, kind_of(st.st_mode));
        return -1;
    }
    if (!exists && make_folders(what, path, why, why_len))
        return -1;
    return output_path_folder_takes_new(what, path, path, why, why_len);
}

/* The path with its folder resolved (links, "..", "."), the last name
 * kept as written: where a write to `path` lands, link or not. */
static void canonical(const char *path, char *out, size_t cap)
{
    char folder[PATH_CAP], real[PATH_MAX];
    char trimmed[PATH_CAP];
    snprintf(trimmed, sizeof trimmed, "%s", path);
    size_t len = strlen(trimmed);
    while (len > 1 && trimmed[len - 1] == '/')
        trimmed[--len] = '\0';
    folder_of(trimmed, folder, sizeof folder);
    const char *slash = strrchr(trimmed, '/'), *base = slash ? slash + 1 : trimmed;
    if (realpath(folder, real))
        snprintf(out, cap, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
    else
        snprintf(out, cap, "%s", trimmed);
}

int output_path_same(const char *a, const char *b)
{
    char ca[PATH_CAP * 2], cb[PATH_CAP * 2];
    canonical(a, ca, sizeof ca);
    canonical(b, cb, sizeof cb);
    if (strcmp(ca, cb) == 0)
        return 1;
    struct stat sa, sb; /* two names of one file (a link, a hard link) */
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int output_path_within(const char *path, const char *dir)
{
    char cp[PATH_CAP * 2], cd[PATH_CAP * 2];
    canonical(path, cp, sizeof cp);
    canonical(dir, cd, sizeof cd);
    /* The folder itself, resolved (a link to it counts as it). */
    char real[PATH_MAX];
    if (realpath(dir, real))
        snprintf(cd, sizeof cd, "%s", real);
    size_t n = strlen(cd);
    return strncmp(cp, cd, n) == 0 && (cp[n] == '/' || (n == 1 && cd[0] == '/'));
}
