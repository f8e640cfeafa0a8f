#include "dedupe.h"

#include <string.h>

int dedupe_keep_first(void *items, int n, size_t size,
                      int (*same)(const void *a, const void *b))
{
    char *base = items;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        const char *item = base + (size_t)i * size;
        int dup = 0;
        for (int j = 0; j < kept && !dup; j++)
            dup = same(base + (size_t)j * size, item);
        if (dup)
            continue;
        if (kept != i)
            memmove(base + (size_t)kept * size, item, size);
        kept++;
    }
    return kept;
}

int dedupe_same_int(const void *a, const void *b)
{
    return *(const int *)a == *(const int *)b;
}
