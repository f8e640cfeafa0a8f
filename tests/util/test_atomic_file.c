/* Files are written whole or not at all: the target holds the old content
 * or the new, and no temporary is left beside it either way. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
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

/* Set where a writer went on after the signal it sent itself. */
static char outlived[320];

/* Writes half its text, is sent SIGTERM (a kill, Ctrl-C) as it writes,
 * then either marks that it went on (outlived) or goes on writing for a
 * while (a long write), and writes the rest. */
static int half_then_signalled(FILE *f, const char *text, int slowly)
{
    size_t half = strlen(text) / 2;
    fwrite(text, 1, half, f);
    fflush(f);
    kill(getpid(), SIGTERM);
    if (slowly)
        usleep(300 * 1000);
    else
        close(open(outlived, O_WRONLY | O_CREAT, 0600));
    fputs(text + half, f);
    return 0;
}

static int write_half_then_signalled(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return half_then_signalled(f, ctx, 0);
}

static int write_half_then_signalled_slowly(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return half_then_signalled(f, ctx, 1);
}

static volatile sig_atomic_t noted;
static void note(int sig) { noted = sig; }

/* Sent SIGTERM as it writes, where the program handles it: marks whether
 * the handler ran then, not once the file was written. */
static int write_signalled_and_noted(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    kill(getpid(), SIGTERM);
    if (noted)
        close(open(outlived, O_WRONLY | O_CREAT, 0600));
    fputs(ctx, f);
    return 0;
}

static void *sleep_on(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* Runs fn in a child; its wait status. */
static int in_child(void (*fn)(const char *), const char *path)
{
    pid_t child = fork();
    if (child == 0) {
        fn(path);
        _exit(0);
    }
    int status = -1;
    if (child < 0 || waitpid(child, &status, 0) != child)
        return -1;
    return status;
}

static void write_signalled(const char *path)
{
    char why[400];
    signal(SIGTERM, SIG_DFL);
    atomic_write_file(path, write_half_then_signalled, "never whole\n", why, sizeof why);
}

/* A second thread takes the signal, as Open MPI's threads do under
 * mpirun: the calling thread blocks it. */
static void write_signalled_beside_a_thread(const char *path)
{
    char why[400];
    signal(SIGTERM, SIG_DFL);
    pthread_t t;
    if (pthread_create(&t, NULL, sleep_on, NULL))
        _exit(5);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    atomic_write_file(path, write_half_then_signalled_slowly, "never whole\n", why, sizeof why);
}

static void write_signalled_where_handled(const char *path)
{
    char why[400];
    signal(SIGTERM, note);
    if (atomic_write_file(path, write_signalled_and_noted, "fourth, with its signal noted\n",
                          why, sizeof why))
        _exit(4);
}

/* Stop signals mid-write. Where one ends the program (report's, by
 * default) it ends it at once, on whichever thread it lands, and leaves
 * the target as it was and no temporary, half a file, beside it. Where
 * the program handles it (run's), the handler runs as it comes (under
 * mpirun its SIGKILL follows at once) and the file is written whole. */
static void test_stop_signals(const char *path)
{
    char text[64];
    int status = in_child(write_signalled, path);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    CHECK(access(outlived, F_OK) != 0); /* ended at once, not after the write */
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "second\n") == 0);
    CHECK(entries() == 1);

    status = in_child(write_signalled_beside_a_thread, path);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "second\n") == 0);
    CHECK(entries() == 1);

    unlink(outlived);
    status = in_child(write_signalled_where_handled, path);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(access(outlived, F_OK) == 0); /* the handler ran mid-write */
    unlink(outlived);
    read_back(path, text, sizeof text);
    CHECK(strcmp(text, "fourth, with its signal noted\n") == 0);
    CHECK(entries() == 1);
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

    snprintf(outlived, sizeof outlived, "%s.outlived", dir);
    test_stop_signals(path);

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
    CHECK(strcmp(text, "fourth, with its signal noted\n") == 0);
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
