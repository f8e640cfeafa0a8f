/* The CSV's lock as the run takes it: a planted link or hard link at
 * PATH.lock is refused with one line and the file it names is untouched;
 * a regular lock file a killed run left is taken over. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "csv_lock.h"

static char dir[] = "/tmp/accubench-lock-XXXXXX";

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    char csv[300], lockp[320], victim[300], why[400];
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    snprintf(lockp, sizeof lockp, "%s.lock", csv);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    put(victim, "precious content\n");
    csv_lock l;

    CHECK(symlink(victim, lockp) == 0);
    why[0] = '\0';
    CHECK(csv_lock_take(&l, csv, why, sizeof why) == -1);
    CHECK(strstr(why, lockp) != NULL && strchr(why, '\n') == NULL);
    CHECK(size_of(victim) == (long)strlen("precious content\n"));
    unlink(lockp);

    CHECK(link(victim, lockp) == 0);
    CHECK(csv_lock_take(&l, csv, why, sizeof why) == -1);
    CHECK(size_of(victim) == (long)strlen("precious content\n"));
    unlink(lockp);

    /* A killed run's lock file: taken, and removed on release. */
    put(lockp, "99999999\n");
    CHECK(csv_lock_take(&l, csv, why, sizeof why) == 0);
    csv_lock_release(&l);
    CHECK(access(lockp, F_OK) != 0);

    unlink(victim);
    rmdir(dir);
    return check_finish("test_csv_lock");
}
