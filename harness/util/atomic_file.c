#include "atomic_file.h"

#include <errno.h>
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
