/* The program's own files are found beside the program (or under
 * $ACCUBENCH_ROOT), never in the working directory: a folder the program
 * runs in is data, and its scripts/ or profiles/ must not be taken for
 * the program's. */
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
    snprintf(own, sizeof own, "%s/profiles/abc.profile", repo);

    /* From elsewhere: beside the program (build/tests/test_repo_path, or
     * build/asan/tests/test_repo_path: two or three folders up). */
    char dir[] = "/tmp/accubench-repo-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK(chdir(dir) == 0);
    CHECK(repo_path_find("profiles/abc.profile", path, sizeof path) == 0);
    CHECK(access(path, R_OK) == 0 && path[0] == '/' && strstr(path, "profiles/abc.profile"));
    CHECK(repo_path_find("scripts/plots.sh", path, sizeof path) == 0);
    CHECK(access(path, R_OK) == 0 && path[0] == '/');

    /* Not there: -1, and the relative path for the message. */
    CHECK(repo_path_find("profiles/no-such.profile", path, sizeof path) == -1);
    CHECK(strcmp(path, "profiles/no-such.profile") == 0);

    /* The working directory's own files are never the program's: a
     * planted profile or script there is not found. */
    CHECK(mkdir("profiles", 0700) == 0 && mkdir("scripts", 0700) == 0);
    put("profiles/planted.profile");
    put("scripts/plots.sh");
    CHECK(repo_path_find("profiles/planted.profile", path, sizeof path) == -1);
    CHECK(repo_path_find("scripts/plots.sh", path, sizeof path) == 0 && path[0] == '/');

    /* ACCUBENCH_ROOT comes first of all, and is passed over when it lacks
     * the file; a relative one would name the working directory again, and
     * is passed over too. */
    setenv("ACCUBENCH_ROOT", repo, 1);
    CHECK(repo_path_find("profiles/abc.profile", path, sizeof path) == 0);
    CHECK(strcmp(path, own) == 0);
    setenv("ACCUBENCH_ROOT", "/nonexistent", 1);
    CHECK(repo_path_find("profiles/abc.profile", path, sizeof path) == 0 && path[0] == '/');
    setenv("ACCUBENCH_ROOT", ".", 1);
    CHECK(repo_path_find("profiles/planted.profile", path, sizeof path) == -1);
    unsetenv("ACCUBENCH_ROOT");

    unlink("profiles/planted.profile");
    unlink("scripts/plots.sh");
    rmdir("profiles");
    rmdir("scripts");
    CHECK(chdir(repo) == 0);
    rmdir(dir);
    return check_finish("test_repo_path");
}
