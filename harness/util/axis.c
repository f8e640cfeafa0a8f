#include "axis.h"

#include <stdio.h>
#include <string.h>

const axis_row *axis_row_at(const axis *a, int i)
{
    if (i < 0 || i >= a->count)
        return NULL;
    return (const axis_row *)((const char *)a->rows + (size_t)i * a->row_size);
}

const char *axis_name(const axis *a, int i)
{
    const axis_row *r = axis_row_at(a, i);
    return r ? r->name : "?";
}

int axis_find(const axis *a, const char *s)
{
    for (int i = 0; i < a->count; i++)
        if (strcmp(axis_row_at(a, i)->name, s) == 0)
            return i;
    return -1;
}

const char *axis_names(const axis *a, char *out, size_t len, const char *sep)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < a->count && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? sep : "", axis_name(a, i));
    return out;
}

int axis_parse(const axis *a, const char *key, const char *s, int *out, char *why,
               size_t why_len)
{
    int i = axis_find(a, s);
    if (i < 0) {
        char known[512];
        snprintf(why, why_len, "unknown %s '%s' (known: %s)", key ? key : a->what, s,
                 axis_names(a, known, sizeof known, ", "));
        return -1;
    }
    *out = i;
    return 0;
}

void axis_describe(const axis *a, const int *which, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        const axis_row *r = axis_row_at(a, which[i]);
        used += (size_t)snprintf(out + used, len - used, "%s%s (%s)", i ? "; " : "",
                                 r ? r->name : "?", r ? r->description : "?");
    }
}
