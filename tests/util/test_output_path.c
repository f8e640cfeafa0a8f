/* Output paths are checked before anything is written (output_path.h), a
 * CSV has one writer (csv_lock.h), a dead writer's temporaries are removed
 * and a live one's kept (atomic_file.h), and the rows a CSV holds are
 * counted from the file itself (csv_writer.h). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "check.h"
#include "csv_lock.h"
#include "csv_writer.h"
#include "output_path.h"

static char dir[] = "/tmp/accubench-outpath-XXXXXX";

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A pid that no process has now: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

/* How many names in `dir` begin with `prefix`. */
static int entries_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void test_kinds(void)
{
    char path[400], why[600];
    /* Only checked, never written: the real device is safe to name here. */
    CHECK(output_path_check("--csv", "/dev/null", OUTPUT_FILE, why, sizeof why) == -1);
    CHECK(strstr(why, "/dev/null") && strstr(why, "character device"));
    CHECK(output_path_check("--out", "/dev/null", OUTPUT_DIR, why, sizeof why) == -1);

    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0644) == 0);
    CHECK(output_path_check("--csv", path, OUTPUT_FILE, why, sizeof why) == -1);
    CHECK(strstr(why, "FIFO") != NULL);
    CHECK(output_path_check("--out", path, OUTPUT_DIR, why, sizeof why) == -1);

    /* a folder where a file is wanted, a file where a folder is */
    CHECK(output_path_check("--csv", dir, OUTPUT_FILE, why, sizeof why) == -1);
    CHECK(strstr(why, "is a folder") != NULL);
    snprintf(path, sizeof path, "%s/file.csv", dir);
    put(path, "x\n");
    CHECK(output_path_check("--csv", path, OUTPUT_FILE, why, sizeof why) == 0);
    CHECK(output_path_check("--out", path, OUTPUT_DIR, why, sizeof why) == -1);
    CHECK(strstr(why, "regular file") != NULL);

    /* a new file in an existing folder; none in a missing one */
    snprintf(path, sizeof path, "%s/new.csv", dir);
    CHECK(output_path_check("--csv", path, OUTPUT_FILE, why, sizeof why) == 0);
    CHECK(!exists(path)); /* checked, not created */
    CHECK(entries_named(dir, ".accubench-probe") == 0); /* the trial file is gone */

    /* a folder that takes no new files, even from root: refused before a run */
    CHECK(output_path_check("--trace", "/proc/x.json", OUTPUT_FILE, why, sizeof why) == -1);
    CHECK(strstr(why, "--trace /proc/x.json") != NULL);
    snprintf(path, sizeof path, "%s/missing/new.csv", dir);
    CHECK(output_path_check("--csv", path, OUTPUT_FILE, why, sizeof why) == -1);
    CHECK(strstr(why, "does not exist") != NULL);

    /* a missing folder is made with its parents; not under a file */
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    CHECK(output_path_check("--out", path, OUTPUT_DIR, why, sizeof why) == 0);
    CHECK(exists(path));
    snprintf(path, sizeof path, "%s/file.csv/sub", dir);
    CHECK(output_path_check("--out", path, OUTPUT_DIR, why, sizeof why) == -1);
    CHECK(output_path_check("--csv", "", OUTPUT_FILE, why, sizeof why) == -1);
}

static void test_lock(void)
{
    char csv[400], lock_path[420], why[600], pid[32];
    snprintf(csv, sizeof csv, "%s/locked.csv", dir);
    snprintf(lock_path, sizeof lock_path, "%s.lock", csv);
    csv_lock first, second;
    CHECK(csv_lock_take(&first, csv, why, sizeof why) == 0);
    CHECK(exists(lock_path));
    /* flock conflicts between open files, in one process as in two */
    CHECK(csv_lock_take(&second, csv, why, sizeof why) == -1);
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    CHECK(strstr(why, csv) && strstr(why, pid));
    csv_lock_release(&second); /* not held: nothing happens */
    CHECK(exists(lock_path));
    csv_lock_release(&first);
    CHECK(!exists(lock_path));
    CHECK(csv_lock_take(&second, csv, why, sizeof why) == 0);
    csv_lock_release(&second);

    /* a lock file a killed run left is taken over */
    put(lock_path, "999999\n");
    CHECK(csv_lock_take(&first, csv, why, sizeof why) == 0);
    csv_lock_release(&first);
}

static void test_claim(void)
{
    char stem[400], a[500], b[500], c[500], why[600];
    snprintf(stem, sizeof stem, "%s/run-20260101-000000", dir);
    CHECK(csv_claim_new(stem, a, sizeof a, why, sizeof why) == 0);
    CHECK(csv_claim_new(stem, b, sizeof b, why, sizeof why) == 0);
    CHECK(csv_claim_new(stem, c, sizeof c, why, sizeof why) == 0);
    CHECK(strcmp(a, b) != 0 && strcmp(b, c) != 0 && strcmp(a, c) != 0);
    CHECK(strstr(b, "-2.csv") && strstr(c, "-3.csv"));
    CHECK(exists(a) && exists(b) && exists(c));
    snprintf(stem, sizeof stem, "%s/missing/run", dir);
    CHECK(csv_claim_new(stem, a, sizeof a, why, sizeof why) == -1);
}

static void test_stale(void)
{
    char target[400], dead[500], live[500], other[500], odd[500];
    snprintf(target, sizeof target, "%s/out.csv", dir);
    snprintf(dead, sizeof dead, "%s.tmp.%ld", target, (long)dead_pid());
    snprintf(live, sizeof live, "%s.tmp.%ld", target, (long)getppid());
    snprintf(other, sizeof other, "%s/other.csv.tmp.%ld", dir, (long)dead_pid());
    snprintf(odd, sizeof odd, "%s.tmp.12x", target);
    put(dead, "half");
    put(live, "being written");
    put(other, "not ours to judge");
    put(odd, "not a pid");
    CHECK(atomic_file_remove_stale(target) == 1);
    CHECK(!exists(dead));
    CHECK(exists(live) && exists(other) && exists(odd));
}

static void test_rows_on_disk(void)
{
    char path[400], why[600], cwd[4096];
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    put(path, "# accubench results\n# key: v\na,b\n1,2\n\n3,4\n5,6");
    CHECK(csv_rows_on_disk(path) == 3);
    put(path, "# only metadata\n");
    CHECK(csv_rows_on_disk(path) == 0);
    snprintf(path, sizeof path, "%s/none.csv", dir);
    CHECK(csv_rows_on_disk(path) == -1);

    /* The working folder deleted under a run: the write fails and the
     * count read back says nothing is on disk. */
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    snprintf(path, sizeof path, "%s/gone", dir);
    CHECK(mkdir(path, 0755) == 0 && chdir(path) == 0);
    csv_writer w;
    csv_writer_init(&w, "run.csv");
    CHECK(csv_writer_flush(&w, why, sizeof why) == 0);
    CHECK(csv_rows_on_disk("run.csv") == 0);
    CHECK(unlink("run.csv") == 0 && rmdir(path) == 0);
    CHECK(csv_writer_flush(&w, why, sizeof why) == -1);
    CHECK(csv_rows_on_disk("run.csv") == -1);
    csv_writer_free(&w);
    CHECK(chdir(cwd) == 0);
}

/* A name that fits its file system, and whose temporary (NAME.tmp.PID)
 * does not, is refused before a run measures: it was refused only at the
 * first write (the loss curves' NAME.curves.csv after the first row). */
static void test_temporary_fits(void)
{
    char path[4400], why[600];
    long name_max = pathconf(dir, _PC_NAME_MAX);
    CHECK(name_max > 20 && name_max < 4000);
    int base = snprintf(path, sizeof path, "%s/", dir);
    memset(path + base, 'n', (size_t)name_max - 4);
    snprintf(path + base + name_max - 4, sizeof path - (size_t)(base + name_max - 4), ".csv");
    CHECK(output_path_check("--csv", path, OUTPUT_FILE, why, sizeof why) == -1);
    CHECK(strstr(why, "the name is too long: with its temporary's suffix (.tmp.") != NULL);
    CHECK(!exists(path));
    /* a folder's temporary (--dump DIR/) is DIR.tmp.PID, its slash aside */
    snprintf(path + base + name_max - 4, sizeof path - (size_t)(base + name_max - 4), "/");
    CHECK(output_path_folder_takes_new("--dump", path, dir, why, sizeof why) == -1);
    /* with room for the suffix: taken */
    snprintf(path + base + name_max - 16, sizeof path - (size_t)(base + name_max - 16), ".csv");
    CHECK(output_path_check("--csv", path, OUTPUT_FILE, why, sizeof why) == 0);
    snprintf(path + base + name_max - 16, sizeof path - (size_t)(base + name_max - 16), "/");
    CHECK(output_path_folder_takes_new("--dump", path, dir, why, sizeof why) == 0);
    /* a folder asked for as itself (--out) writes no temporary of its own */
    CHECK(output_path_folder_takes_new("--out", dir, dir, why, sizeof why) == 0);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    test_kinds();
    test_lock();
    test_claim();
    test_stale();
    test_rows_on_disk();
    test_temporary_fits();
    CHECK(check_remove_tree(dir) == 0);
    return check_finish("test_output_path");
}
