/* The fuzz targets' one shared need: the readers under test take a path, so
 * each input is written to one temporary file, rewritten in place for every
 * input (no file per input), and removed when the fuzzer exits. */
#ifndef ACCUBENCH_FUZZ_INPUT_H
#define ACCUBENCH_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_path[80];

static void remove_input(void)
{
    unlink(fuzz_path);
}

/* The file holding data[0..size), or NULL when it cannot be written. */
static const char *fuzz_input_file(const uint8_t *data, size_t size, const char *suffix)
{
    char *path = fuzz_path;
    static int fd = -1;
    if (fd < 0) {
        /* In memory where there is a tmpfs: a disk write per input would
         * be most of the time. */
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof fuzz_path, "%s/accubench-fuzz-XXXXXX%s", dir, suffix);
        fd = mkstemps(path, (int)strlen(suffix));
        if (fd < 0)
            return NULL;
        atexit(remove_input);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return NULL;
    return path;
}

#endif
