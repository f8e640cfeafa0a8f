/* The repository's files are found the same way by every command: under
 * $ACCUBENCH_ROOT, beside the working directory, then beside the program. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "repo_path.h"

static void put(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
}

int main(void)
{
    char repo[4096], path[4200], own[4200];
    CHECK(getcwd(repo, sizeof repo) != NULL); /* the tests run from the repository */
    unsetenv("ACCUBENCH_ROOT");

    /* From the repository itself: the relative path. */
    CHECK(repo_path_find("profiles/abc.profile", NULL, path, sizeof path) == 0);
    CHECK(strcmp(path, "profiles/abc.profile") == 0);

    /* From elsewhere: beside the program (build/tests/test_repo_path, or
     * build/asan/tests/test_repo_path: two or three folders up). */
    char dir[] = "/tmp/accubench-repo-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    CHECK(repo_path_find("profiles/abc.profile", NULL, path, sizeof path) == 0);
    CHECK(access(path, R_OK) == 0 && strstr(path, "profiles/abc.profile") != NULL);
    CHECK(repo_path_find("scripts/plots.sh", NULL, path, sizeof path) == 0);
    CHECK(access(path, R_OK) == 0);

    /* Not there: -1, and the relative path for the message. */
    CHECK(repo_path_find("profiles/no-such.profile", NULL, path, sizeof path) == -1);
    CHECK(strcmp(path, "profiles/no-such.profile") == 0);

    /* The working directory's own profiles come before the program's. */
    CHECK(mkdir("profiles", 0700) == 0);
    put("profiles/abc.profile");
    CHECK(repo_path_find("profiles/abc.profile", NULL, path, sizeof path) == 0);
    CHECK(strcmp(path, "profiles/abc.profile") == 0);

    /* ACCUBENCH_ROOT comes first of all, and is passed over when it lacks the file. */
    snprintf(own, sizeof own, "%s/profiles/abc.profile", repo);
    setenv("ACCUBENCH_ROOT", repo, 1);
    CHECK(repo_path_find("profiles/abc.profile", NULL, path, sizeof path) == 0);
    CHECK(strcmp(path, own) == 0);
    setenv("ACCUBENCH_ROOT", "/nonexistent", 1);
    CHECK(repo_path_find("profiles/abc.profile", NULL, path, sizeof path) == 0);
    CHECK(strcmp(path, "profiles/abc.profile") == 0);
    unsetenv("ACCUBENCH_ROOT");

    unlink("profiles/abc.profile");
    rmdir("profiles");
    CHECK(chdir(repo) == 0);
    rmdir(dir);
    return check_finish("test_repo_path");
}
