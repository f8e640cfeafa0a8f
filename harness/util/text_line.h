/* One line of a text file, read so that what is not text costs nothing:
 * a NUL byte ends the read at once (binary data, or an endless file such
 * as /proc/self/pagemap or a pipe from /dev/zero, never grows a line
 * without end), and so does a line past a bound. */
#ifndef ACCUBENCH_TEXT_LINE_H
#define ACCUBENCH_TEXT_LINE_H

#include <stdio.h>
#include <sys/types.h>

enum {
    TEXT_LINE_END = -1,  /* end of file, or a read error (ferror tells) */
    TEXT_LINE_NUL = -2,  /* a NUL byte: not text */
    TEXT_LINE_LONG = -3, /* longer than max bytes */
    TEXT_LINE_OOM = -4,
};

/* As getline(): the line into *buf (grown as needed, NUL-terminated, its
 * '\n' kept where it has one), its length returned; or one of the above. */
ssize_t text_line_read(FILE *f, char **buf, size_t *cap, size_t max);

#endif
