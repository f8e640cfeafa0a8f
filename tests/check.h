/* A minimal assertion kit for the unit tests: each CHECK prints where it
 * failed and counts; main returns check_finish(). */
#ifndef ACCUBENCH_TEST_CHECK_H
#define ACCUBENCH_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                            \
    do {                                                                       \
        check_count++;                                                         \
        if (!(cond)) {                                                         \
            check_failures++;                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                  \
    do {                                                                       \
        double check_a_ = (a), check_b_ = (b);                                 \
        check_count++;                                                         \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                           \
            check_failures++;                                                  \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %s = %.9g (tol %g)\n", \
                    __FILE__, __LINE__, #a, check_a_, #b, check_b_,            \
                    (double)(tol));                                            \
        }                                                                      \
    } while (0)

/* Removes a test's temporary folder and all in it (the folders come from
 * mkdtemp: no quote in their names); 0 when it is gone. */
static inline int check_remove_tree(const char *dir)
{
    char cmd[600];
    if (snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir) >= (int)sizeof cmd)
        return -1;
    return system(cmd);
}

/* Writes `text` to a fresh file under /tmp; returns its path (static: the
 * next call's file replaces it), "/nonexistent" when none could be made. */
static inline const char *check_temp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/accubench-test-XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f)
        return "/nonexistent";
    fputs(text, f);
    fclose(f);
    return path;
}

static inline int check_finish(const char *name)
{
    fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

#endif
