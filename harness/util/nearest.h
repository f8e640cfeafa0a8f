/* "did you mean ...": the known name nearest to a mistyped one, by edit
 * distance (a swap of two neighbours counts as one edit), ignoring case. */
#ifndef ACCUBENCH_NEAREST_H
#define ACCUBENCH_NEAREST_H

#include <stddef.h>

/* Edits (insert, delete, substitute, swap two neighbours) from a to b,
 * case ignored; names longer than 63 characters count as far apart. */
int edit_distance(const char *a, const char *b);

/* Keeps `candidate` in *best when it is close to `typed` and nearer than
 * what *best holds (*best_d, start it at INT_MAX); returns whether it did. */
int nearest_consider(const char *typed, const char *candidate, const char **best,
                      int *best_d);

/* Whether a name at distance d is near enough to `typed` to be what was
 * meant: a few edits, fewer than the name's own length. */
int nearest_is_close(const char *typed, const char *candidate, int d);

/* The nearest of the names in `list` (split at ',', '|', ';' and spaces;
 * words holding ':' or '=' are templates, not names) when it is close, else
 * NULL. The name is copied into out. */
const char *nearest_in_list(const char *typed, const char *list, char *out, size_t n);

/* Appends "; did you mean 'NAME'?" to why when `list` holds a close name. */
void nearest_suggest(char *why, size_t n, const char *typed, const char *list);

#endif
