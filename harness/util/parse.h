/* Strict parsing of numbers and lists from the command line and profiles:
 * a value is whole, in range, and nothing trails it, or it is refused with a
 * reason that names it. */
#ifndef ACCUBENCH_PARSE_H
#define ACCUBENCH_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0, or -1 with a reason in why ("... must be ..."). */
int parse_int(const char *what, const char *s, long long min, long long max,
              long long *out, char *why, size_t why_len);
int parse_real(const char *what, const char *s, double min, double max, double *out,
               char *why, size_t why_len);
/* Bytes with an optional K, M, G or T suffix (powers of 1024; KiB .. TiB
 * say the same), a fraction with one (1.5G, to the nearest byte); 0 is
 * allowed (a cap of 0 is no cap), a fraction that rounds to 0 bytes
 * (0.0001K) is not: it would read as no cap. The reason echoes the text
 * whole. */
int parse_bytes(const char *what, const char *s, uint64_t *out, char *why, size_t why_len);

/* Splits a comma list in place into at most `max` non-empty items. Returns
 * the count, or -1 with a reason (an empty item, too many items). */
/* s without its leading blanks and tabs, its trailing ones and line ends
 * cut off in place. */
char *trim_blanks(char *s);

int split_list(const char *what, char *s, char **items, int max, char *why, size_t why_len);

#endif
