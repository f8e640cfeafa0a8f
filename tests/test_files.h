/* Small files for tests: written whole, read back whole. */
#ifndef ACCUBENCH_TEST_FILES_H
#define ACCUBENCH_TEST_FILES_H

#include <stdio.h>

/* `text` as the whole of `path` (nothing written where it cannot open). */
static inline void test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The first MiB of `path`, NUL-terminated, in a buffer the next call
 * reuses (never freed); NULL when it cannot be opened. */
static inline char *test_slurp(const char *path)
{
    static char buf[1 << 20];
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#endif
