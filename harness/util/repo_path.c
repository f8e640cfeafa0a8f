#include "repo_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int readable(char *out, size_t cap, const char *dir, const char *rel)
{
    int n = snprintf(out, cap, "%s/%s", dir, rel);
    return n >= 0 && (size_t)n < cap && access(out, R_OK) == 0;
}

/* The program's folder, then its parents: DIR/../rel each time. */
static int beside_program(const char *rel, char *out, size_t cap)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = '\0';
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash || slash == exe)
            break;
        *slash = '\0';
        char above[4200];
        snprintf(above, sizeof above, "%s/..", exe);
        if (readable(out, cap, above, rel))
            return 1;
    }
    return 0;
}

int repo_path_find(const char *rel, char *out, size_t cap)
{
    const char *root = getenv("ACCUBENCH_ROOT");
    if (root && root[0] == '/' && readable(out, cap, root, rel))
        return 0;
    if (beside_program(rel, out, cap))
        return 0;
#ifdef ACCUBENCH_BUILD_ROOT
    /* The folder make ran in: the tree of a program copied elsewhere. */
    if (ACCUBENCH_BUILD_ROOT[0] == '/' && readable(out, cap, ACCUBENCH_BUILD_ROOT, rel))
        return 0;
#endif
    snprintf(out, cap, "%s", rel);
    return -1;
}
