/* A table's rows by name: looked up, and joined into one line ("fp32, tf32,
 * bf16", "fp32|tf32|bf16") so that the messages and the usage text list
 * what a table holds, never a hand-written copy of it. */
#ifndef ACCUBENCH_NAME_LIST_H
#define ACCUBENCH_NAME_LIST_H

#include <stddef.h>

/* Writes name_at(0) .. name_at(n - 1) joined by sep into out (cut to len,
 * always terminated); returns out. */
const char *name_list(char *out, size_t len, int n, const char *(*name_at)(int i),
                      const char *sep);

/* The i with name_at(i) equal to s, or -1 when no row has that name. */
int name_find(int n, const char *(*name_at)(int i), const char *s);

#endif
