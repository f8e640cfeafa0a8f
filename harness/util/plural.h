/* Counts in messages: "1 row", "3 rows". */
#ifndef ACCUBENCH_PLURAL_H
#define ACCUBENCH_PLURAL_H

/* The noun for a count of n: `one` for exactly 1, `many` otherwise (0 rows,
 * 2 rows). Both forms are given, so irregular nouns and verbs ("was" /
 * "were") need nothing more:
 *     printf("%zu %s written", n, plural(n, "row", "rows")); */
static inline const char *plural(long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

#endif
