#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int parse_int(const char *what, const char *s, long long min, long long max,
              long long *out, char *why, size_t why_len)
{
    char *end;
    errno = 0;
    if (!s || !*s || isspace((unsigned char)*s)) {
        snprintf(why, why_len, "%s needs a whole number, got '%s'", what, s ? s : "");
        return -1;
    }
    long long v = strtoll(s, &end, 10);
    if (*end != '\0') {
        snprintf(why, why_len, "%s must be a whole number, got '%s'", what, s);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        snprintf(why, why_len, "%s must be between %lld and %lld, got '%s'", what, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int parse_real(const char *what, const char *s, double min, double max, double *out,
               char *why, size_t why_len)
{
    char *end;
    errno = 0;
    if (!s || !*s || isspace((unsigned char)*s)) {
        snprintf(why, why_len, "%s needs a number, got '%s'", what, s ? s : "");
        return -1;
    }
    double v = strtod(s, &end);
    const char *digits = s + (*s == '-' || *s == '+');
    /* decimal, as the whole numbers are: strtod's hex (0x1p-3) is no
     * spelling anyone means for a rate or a time */
    if (*end != '\0' || isnan(v) || (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))) {
        snprintf(why, why_len, "%s must be a (decimal) number, got '%s'", what, s);
        return -1;
    }
    if (errno == ERANGE && fabs(v) < 1) { /* 1e-320: inside the range, but no double holds it whole */
        snprintf(why, why_len, "%s: '%s' is too small for a double (below %g)", what, s,
                 2.2250738585072014e-308);
        return -1;
    }
    if (errno == ERANGE || v < min || v > max) {
        snprintf(why, why_len, "%s must be between %g and %g, got '%s'", what, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* "1.5" of a unit of 2^shift bytes: a fraction needs a unit (a byte is
 * whole), and comes to the nearest byte. -1 malformed; -2 a size above
 * zero that comes to 0 bytes (0 would mean no cap: 0.0001K is not that). */
static int fraction_bytes(const char *number, unsigned shift, uint64_t *out)
{
    char *end;
    /* decimal, as parse_real is: strtod's hex (0x1.8K) is no size anyone
     * types, and parse_int refuses 0x2G */
    if (!shift || !isdigit((unsigned char)*number) || strpbrk(number, "xX"))
        return -1;
    errno = 0;
    double v = strtod(number, &end);
    double bytes = v * (double)((uint64_t)1 << shift);
    if (*end || errno == ERANGE || !(bytes < 9.2e18))
        return -1;
    *out = (uint64_t)llround(bytes);
    return v > 0 && *out == 0 ? -2 : 0;
}

int parse_bytes(const char *what, const char *s, uint64_t *out, char *why, size_t why_len)
{
    char number[64], inner[200];
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len >= sizeof number) {
        snprintf(why, why_len, "%s needs a size in bytes (K, M, G, T suffixes), got '%s'", what,
                 s ? s : "");
        return -1;
    }
    memcpy(number, s, len + 1);
    /* 2GiB is 2G: the units are binary either way */
    if (len > 3 && tolower((unsigned char)number[len - 2]) == 'i' &&
        (number[len - 1] == 'B' || number[len - 1] == 'b') &&
        strchr("KMGTkmgt", number[len - 3]))
        number[len -= 2] = '\0';
    unsigned shift = 0;
    char suffix = (char)toupper((unsigned char)number[len - 1]);
    switch (suffix) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: suffix = '\0'; break;
    }
    if (shift)
        number[len - 1] = '\0';
    if (strchr(number, '.')) {
        int rc = fraction_bytes(number, shift, out);
        if (rc == 0)
            return 0;
        if (rc == -2)
            snprintf(why, why_len, "%s '%s' rounds to 0 bytes, and 0 means no cap: give a "
                     "size of a byte or more, or 0", what, s);
        else
            snprintf(why, why_len, "%s needs a size in bytes (K, M, G, T suffixes; a fraction "
                     "with one), got '%s'", what, s);
        return -1;
    }
    long long v, max = (long long)(INT64_MAX >> shift);
    /* the reason names what was typed, suffix and all, not the digits alone */
    if (parse_int(what, number, 0, max, &v, inner, sizeof inner)) {
        if (*number && !isspace((unsigned char)*number) && strspn(number, "0123456789") ==
                                                                strlen(number))
            snprintf(why, why_len, "%s must be at most %lld%.1s (2^63 - 1 bytes), got '%s'",
                     what, max, &suffix, s);
        else
            snprintf(why, why_len, "%s needs a size in bytes (K, M, G, T suffixes), got '%s'",
                     what, s);
        return -1;
    }
    *out = (uint64_t)v << shift;
    return 0;
}

/* Puts back the commas split_list replaced before `end`, so that a
 * reason can echo the list as it was typed. */
static void unsplit(char *s, const char *end)
{
    for (char *p = s; p < end; p++)
        if (*p == '\0')
            *p = ',';
}

int split_list(const char *what, char *s, char **items, int max, char *why, size_t why_len)
{
    int n = 0;
    char *p = s;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p == '\0' || n == max) {
            int empty = *p == '\0';
            unsplit(s, comma ? comma + 1 : p);
            if (!empty)
                snprintf(why, why_len, "%s has more than %d items, got '%s'", what, max, s);
            else
                snprintf(why, why_len, "%s has an empty item, got '%s'", what, s);
            return -1;
        }
        items[n++] = p;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

char *trim_blanks(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}
