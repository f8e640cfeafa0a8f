#include "name_list.h"

#include <stdio.h>
#include <string.h>

const char *name_list(char *out, size_t len, int n, const char *(*name_at)(int i),
                      const char *sep)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? sep : "", name_at(i));
    return out;
}

int name_find(int n, const char *(*name_at)(int i), const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name_at(i), s) == 0)
            return i;
    return -1;
}
