/* Files are written whole or not at all: the target holds the old content
 * or the new, and no temporary is left beside it either way. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "check.h"

static char dir[] = "/tmp/accubench-atomic-XXXXXX";

static int write_text(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    fputs(ctx, f);
    return 0;
}

/* Writes half its text, then fails as a writer that ran out of memory. */
static int write_half_then_fail(FILE *f, void *ctx, char *why, size_t why_len)
{
    const char *text = ctx;
    fwrite(text, 1, strlen(text) / 2, f);
    fflush(f);
    snprintf(why, why_len, "writer gave up");
    return -1;
}

static void read_back(const char *path, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* Writes half its text, is sent SIGTERM (a kill, Ctrl-C) as it writes,
 * then writes the rest. */
static int write_half_then_signalled(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    const char *text = ctx;
    size_t half = strlen(text) / 2;
    fwrite(text, 1, half, f);
    fflush(f);
    kill(getpid(), SIGTERM);
    fputs(text + half, f);
    return 0;
}

/* Entries in the folder other than . and .. */
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    char path[300], text[64], why[400];
    snprintf(path, sizeof path, "%s/out.csv", dir);

    CHECK(atomic_write_file(path, write_text, "first\n", why, sizeof why) == 0);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "first\n") == 0);
    CHECK(atomic_write_file(path, write_text, "second\n", why, sizeof why) == 0);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "second\n") == 0);
    CHECK(entries() == 1);

    /* A writer that fails: the reason is its own, the old file stands. */
    why[0] = '\0';
    CHECK(atomic_write_file(path, write_half_then_fail, "third, never whole\n", why,
                            sizeof why) == -1);
    CHECK(strcmp(why, "writer gave up") == 0);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "second\n") == 0);
    CHECK(entries() == 1);

    /* A stop signal mid-write (a program that takes it by default, as
     * report does): it ends the program only once the file is whole, and
     * no temporary, half a file, is left beside it. */
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        signal(SIGTERM, SIG_DFL);
        atomic_write_file(path, write_half_then_signalled, "fourth, whole or not at all\n", why,
                          sizeof why);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "fourth, whole or not at all\n") == 0);
    CHECK(entries() == 1);

    /* No such folder: a reason naming the file, nothing created. */
    char missing[400];
    snprintf(missing, sizeof missing, "%s/no-such-folder/out.csv", dir);
    why[0] = '\0';
    CHECK(atomic_write_file(missing, write_text, "x\n", why, sizeof why) == -1);
    CHECK(strstr(why, "no-such-folder") != NULL && strchr(why, '\n') == NULL);
    CHECK(entries() == 1);

    /* The target is a folder: the rename fails and the temporary goes. */
    char sub[320];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0);
    why[0] = '\0';
    CHECK(atomic_write_file(sub, write_text, "x\n", why, sizeof why) == -1);
    CHECK(strstr(why, "rename") != NULL);
    CHECK(entries() == 2);

    /* A set whose last file fails: the first is not renamed either, so
     * the two targets stay a matching pair; no temporary is left. */
    char second[320];
    snprintf(second, sizeof second, "%s/out.json", dir);
    CHECK(atomic_write_file(second, write_text, "second json\n", why, sizeof why) == 0);
    atomic_file_job set[] = {{path, write_text, "third\n"},
                             {second, write_half_then_fail, "third json, never whole\n"}};
    CHECK(atomic_write_files(set, 2, why, sizeof why) == -1);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "fourth, whole or not at all\n") == 0);
    read_back(second, text, sizeof text);
    CHECK(strcmp(text, "second json\n") == 0);
    CHECK(entries() == 3);
    /* And a set that succeeds renames both. */
    set[1].write = write_text;
    CHECK(atomic_write_files(set, 2, why, sizeof why) == 0);
    read_back(second, text, sizeof text);
    CHECK(strcmp(text, "third json, never whole\n") == 0);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "third\n") == 0);
    CHECK(entries() == 3);

    unlink(second);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
    return check_finish("test_atomic_file");
}
