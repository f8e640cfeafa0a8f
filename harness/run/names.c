#include "names.h"

#include <string.h>

static const char *const OPTIMIZERS[] = {"adamw", "sgd"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

const char *optimizer_name(optimizer_kind k)
{
    return k >= 0 && k < COUNT(OPTIMIZERS) ? OPTIMIZERS[k] : "?";
}

#define PARSER(fn, type, table)                   \
    int fn(const char *s, type *out)              \
    {                                             \
        int i = lookup(table, COUNT(table), s);   \
        if (i < 0)                                \
            return -1;                            \
        *out = (type)i;                           \
        return 0;                                 \
    }
PARSER(optimizer_parse, optimizer_kind, OPTIMIZERS)
