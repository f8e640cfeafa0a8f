#include "repo_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int readable(char *out, size_t cap, const char *dir, const char *rel)
{
    int n = dir ? snprintf(out, cap, "%s/%s", dir, rel) : snprintf(out, cap, "%s", rel);
    return n >= 0 && (size_t)n < cap && access(out, R_OK) == 0;
}

int repo_path_find(const char *rel, const char *argv0, char *out, size_t cap)
{
    const char *root = getenv("ACCUBENCH_ROOT");
    if (root && *root && readable(out, cap, root, rel))
        return 0;
    if (readable(out, cap, NULL, rel))
        return 0;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0 && argv0)
        len = (ssize_t)snprintf(exe, sizeof exe, "%s", argv0);
    if (len > 0 && (size_t)len < sizeof exe) {
        exe[len] = '\0';
        /* The program's folder, then its parents: DIR/../rel each time. */
        for (int up = 0; up < 3; up++) {
            char *slash = strrchr(exe, '/');
            if (!slash)
                break;
            *slash = '\0';
            char above[4200];
            snprintf(above, sizeof above, "%s/..", exe);
            if (readable(out, cap, above, rel))
                return 0;
        }
    }
    snprintf(out, cap, "%s", rel);
    return -1;
}
