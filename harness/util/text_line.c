/* One line of a text file, bounded (see text_line.h). */
#include "text_line.h"

#include <stdlib.h>

ssize_t text_line_read(FILE *f, char **buf, size_t *cap, size_t max)
{
    size_t len = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF) {
        if (c == '\0')
            return TEXT_LINE_NUL;
        if (len >= max)
            return TEXT_LINE_LONG;
        if (len + 2 > *cap) { /* the byte and the terminating NUL */
            size_t grown = *cap ? *cap * 2 : 256;
            char *p = realloc(*buf, grown);
            if (!p)
                return TEXT_LINE_OOM;
            *buf = p;
            *cap = grown;
        }
        (*buf)[len++] = (char)c;
        if (c == '\n')
            break;
    }
    if (!len)
        return TEXT_LINE_END;
    (*buf)[len] = '\0';
    return (ssize_t)len;
}
