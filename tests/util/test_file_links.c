/* Temporaries are created, never followed: a symbolic link planted at
 * PATH.tmp.PID (this process's own pid included) is not written through,
 * and the stale-temporary cleanup removes only regular files, this
 * process's own pid's included. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "check.h"

static char dir[] = "/tmp/accubench-links-XXXXXX";

static int write_text(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    fputs(ctx, f);
    return 0;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int holds(const char *path, const char *text)
{
    char buf[64] = {0};
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    char path[300], tmp[400], victim[300], why[400];
    snprintf(path, sizeof path, "%s/run.csv", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    put(victim, "keep\n");

    /* A link at this process's temporary: refused, the victim untouched. */
    CHECK(symlink(victim, tmp) == 0);
    why[0] = '\0';
    CHECK(atomic_write_file(path, write_text, "header\n", why, sizeof why) == -1);
    CHECK(holds(victim, "keep\n"));
    CHECK(strstr(why, "symbolic link") != NULL || strstr(why, "already") != NULL);
    /* The cleanup leaves a link alone (it is not a file a writer made). */
    CHECK(atomic_file_remove_stale(path) == 0);
    struct stat st;
    CHECK(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode));
    unlink(tmp);

    /* A regular file at this process's own pid is a dead run's: removed. */
    put(tmp, "half a file");
    CHECK(atomic_file_remove_stale(path) == 1);
    CHECK(lstat(tmp, &st) != 0 && errno == ENOENT);
    CHECK(atomic_write_file(path, write_text, "header\n", why, sizeof why) == 0);
    CHECK(holds(path, "header\n"));

    /* A folder by a dead pid's temporary name stays. */
    char dead[400];
    snprintf(dead, sizeof dead, "%s.tmp.999999999", path);
    CHECK(mkdir(dead, 0700) == 0);
    CHECK(atomic_file_remove_stale(path) == 0);
    CHECK(rmdir(dead) == 0);

    /* A lock file: never through a link, never a file with a second name. */
    char lock[320], hard[320];
    snprintf(lock, sizeof lock, "%s.lock", path);
    snprintf(hard, sizeof hard, "%s/hard", dir);
    CHECK(symlink(victim, lock) == 0);
    CHECK(atomic_file_open_lock(lock) == -1 && errno == ELOOP);
    unlink(lock);
    CHECK(link(victim, lock) == 0);
    CHECK(atomic_file_open_lock(lock) == -1 && errno == EPERM);
    CHECK(holds(victim, "keep\n"));
    unlink(lock);
    int fd = atomic_file_open_lock(lock);
    CHECK(fd >= 0);
    close(fd);
    unlink(lock);
    unlink(hard);
    unlink(victim);
    unlink(path);
    rmdir(dir);
    return check_finish("test_file_links");
}
