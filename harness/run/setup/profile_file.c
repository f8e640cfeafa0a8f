/* Profiles: files of `key = value` lines (profiles/NAME.profile, or a
 * path), each line an option of `accubench run` set through the one option
 * table (options_set), and the list `accubench run --profile help` shows,
 * each with the first line of its comment. */
#include "options.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"
#include "repo_path.h"
#include "text_line.h"

/* A name is one of the program's own profiles, found beside the program
 * (repo_path.h), never in the working directory; a path the user gives
 * (with a '/', or ending in .profile) is read as the file it names. */
static int find_profile(const char *name, char *path, size_t cap)
{
    size_t len = strlen(name);
    if (strchr(name, '/') || (len >= 8 && !strcmp(name + len - 8, ".profile"))) {
        snprintf(path, cap, "%s", name);
        return access(path, R_OK) == 0 ? 0 : -1;
    }
    char rel[1100];
    snprintf(rel, sizeof rel, "profiles/%s.profile", name);
    return repo_path_find(rel, path, cap);
}

/* A profile is a regular file: a directory, a device (/dev/zero) or a FIFO
 * is refused before a byte is read, and opening never waits for a writer. */
static FILE *open_profile(const char *path, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        snprintf(why, n, "cannot read profile %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, n, "profile %s is not a regular file (%s)", path,
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                              : "not a plain file");
        close(fd);
        return NULL;
    }
    /* reads block as usual from here on */
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
        snprintf(why, n, "cannot read profile %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(why, n, "cannot read profile %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

/* The keys a profile has set, each with its line: a key set twice is a
 * slip (the last line silently won), refused with both places. */
#define PROFILE_MAX_KEYS 64
/* A profile is a few lines of key = value: a longer line is not one. */
#define PROFILE_MAX_LINE (1 << 20)
typedef struct profile_keys {
    char key[PROFILE_MAX_KEYS][48];
    int line[PROFILE_MAX_KEYS];
    int n;
} profile_keys;

static int profile_key_once(profile_keys *k, const char *key, const char *path, int lineno,
                            char *why, size_t n)
{
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->key[i], key)) {
            snprintf(why, n, "%s:%d: %s is set again (first on line %d): give it once", path,
                     lineno, key, k->line[i]);
            return -1;
        }
    if (k->n < PROFILE_MAX_KEYS) {
        snprintf(k->key[k->n], sizeof k->key[0], "%s", key);
        k->line[k->n++] = lineno;
    }
    return 0;
}

/* One line of a profile: blank or a comment, or `key = value` set into o
 * (0), or the reason it is refused with its place (-1). */
static int profile_line(run_options *o, profile_keys *keys, char *start, const char *path,
                        int lineno, char *why, size_t n)
{
    char *hash = strchr(start, '#');
    if (hash)
        *hash = '\0';
    char *text = trim_blanks(start);
    if (!*text)
        return 0;
    char *eq = strchr(text, '=');
    if (!eq) {
        snprintf(why, n, "%s:%d: expected 'key = value'", path, lineno);
        return -1;
    }
    *eq = '\0';
    char *key = trim_blanks(text), *value = trim_blanks(eq + 1), reason[1024];
    if (!*key || !*value) {
        snprintf(why, n, "%s:%d: expected 'key = value'", path, lineno);
        return -1;
    }
    if (options_set(o, key, value, reason, sizeof reason)) {
        snprintf(why, n, "%s:%d: %s", path, lineno, reason);
        return -1;
    }
    return profile_key_once(keys, key, path, lineno, why, n);
}

int options_load_profile(run_options *o, const char *name, char *why, size_t n)
{
    char path[1200];
    /* a longer name is refused, never cut to another file's name */
    if (strlen(name) >= sizeof o->profile) {
        snprintf(why, n, "profile name longer than %zu characters: '%.60s...'",
                 sizeof o->profile - 1, name);
        return -1;
    }
    if (find_profile(name, path, sizeof path)) {
        if (strcmp(path, name)) /* a name: looked for in the program's tree alone */
            snprintf(why, n, "unknown profile '%s' (no file %s in accubench's tree; a "
                     "profile elsewhere is named by its path, e.g. ./%s)", name, path, path);
        else
            snprintf(why, n, "unknown profile '%s' (no such file)", name);
        return -1;
    }
    FILE *f = open_profile(path, why, n);
    if (!f)
        return -1;
    /* whole lines: one past the bound is refused, never split into two settings */
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    profile_keys keys = {.n = 0};
    while (!rc &&
           (len = text_line_read(f, &line, &line_cap, PROFILE_MAX_LINE)) != TEXT_LINE_END) {
        lineno++;
        if (len == TEXT_LINE_NUL || len == TEXT_LINE_LONG || len == TEXT_LINE_OOM) {
            snprintf(why, n, "%s:%d: %s", path, lineno,
                     len == TEXT_LINE_NUL    ? "a NUL byte in the line (not a text file?)"
                     : len == TEXT_LINE_LONG ? "a line of over 1 MiB (not a profile?)"
                                             : "out of memory");
            rc = -1;
            break;
        }
        /* an editor's UTF-8 byte-order mark before the first line */
        rc = profile_line(o, &keys,
                          lineno == 1 && !strncmp(line, "\xEF\xBB\xBF", 3) ? line + 3 : line,
                          path, lineno, why, n);
    }
    if (!rc && ferror(f)) {
        snprintf(why, n, "%s:%d: read error: %s", path, lineno + 1, strerror(errno));
        rc = -1;
    }
    /* an empty file ran the default sweep as if it were the profile */
    if (!rc && !keys.n) {
        snprintf(why, n, "profile %s sets no option (its lines are 'key = value')", path);
        rc = -1;
    }
    free(line);
    fclose(f);
    if (!rc)
        snprintf(o->profile, sizeof o->profile, "%s", name);
    return rc;
}

/* The first comment line of a profile, its one-line description; "..."
 * where its sentence goes on. */
static void profile_summary(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    char line[400];
    while (f && fgets(line, sizeof line, f)) {
        char *text = trim_blanks(line);
        if (*text == '#') {
            snprintf(out, n, "%s", trim_blanks(text + 1));
            size_t len = strlen(out);
            if (len && out[len - 1] != '.' && fgets(line, sizeof line, f) &&
                *trim_blanks(line) == '#' && len + 4 < n)
                memcpy(out + len, " ...", 5);
            break;
        }
        if (*text) /* settings before any comment: no description */
            break;
    }
    if (f)
        fclose(f);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int options_list_profiles(profile_fn each, void *ctx)
{
    char dir[1200], path[1500];
    if (repo_path_find("profiles", dir, sizeof dir))
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char *names[128];
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) && count < 128) {
        size_t len = strlen(e->d_name);
        if (len > 8 && strcmp(e->d_name + len - 8, ".profile") == 0 &&
            (names[count] = strndup(e->d_name, len - 8)))
            count++;
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof names[0], by_name);
    for (int i = 0; i < count; i++) {
        char summary[400];
        snprintf(path, sizeof path, "%s/%s.profile", dir, names[i]);
        profile_summary(path, summary, sizeof summary);
        each(names[i], summary, ctx);
        free(names[i]);
    }
    return count;
}
