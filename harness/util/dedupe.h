/* Lists the user gives (--effective 64,64, --model S,S): an entry named
 * twice runs once. One rule for every list option: the first copy stays,
 * in the order given, and the caller says so in a note. */
#ifndef ACCUBENCH_DEDUPE_H
#define ACCUBENCH_DEDUPE_H

#include <stddef.h>

/* Removes from `items` (n of `size` bytes each) every item equal, by
 * `same`, to an earlier one, keeping the order of the rest. Returns the new
 * count (less than n when something was dropped). */
int dedupe_keep_first(void *items, int n, size_t size,
                      int (*same)(const void *a, const void *b));

/* `same` for ints and for plain values compared byte for byte. */
int dedupe_same_int(const void *a, const void *b);

#endif
