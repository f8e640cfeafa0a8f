/* libFuzzer target: the strict parsers of parse.h and the lists built on
 * them, over any text. The first byte picks the parser (i int, r real,
 * b bytes, s split, t trim, m round_ms, l lr-grid), the rest is its text. Beside the sanitizers, each acceptance is checked against what
 * the parser promises: parse_int and parse_real a decimal number in range,
 * parse_bytes a decimal size with a K/M/G/T suffix and the bytes it names,
 * split_list items that join back to the list (and a refusal that leaves
 * the list as typed), round_ms_parse positive finite numbers, lr_grid_parse
 * rates a float holds above 0. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lr_grid.h"
#include "paired.h"
#include "parse.h"

/* A refusal names its reason, terminated. */
static void check_why(int rc, const char *why, size_t len)
{
    if (rc != 0 && rc != -1)
        abort();
    if (rc && (!why[0] || !memchr(why, '\0', len)))
        abort();
}

/* Only decimal digits, signs, a point and an exponent: no hex, no inf. */
static int decimal_text(const char *s)
{
    return *s && strspn(s, "0123456789+-.eE") == strlen(s) && strpbrk(s, "0123456789");
}

static void fuzz_int(const char *s)
{
    char why[300] = "";
    long long v = 0;
    int rc = parse_int("n", s, -1000000, 1000000, &v, why, sizeof why);
    check_why(rc, why, sizeof why);
    if (rc == 0) {
        const char *digits = s + (*s == '+' || *s == '-');
        if (v < -1000000 || v > 1000000 || !*digits ||
            strspn(digits, "0123456789") != strlen(digits) || v != strtoll(s, NULL, 10))
            abort();
    }
}

static void fuzz_real(const char *s)
{
    char why[300] = "";
    double v = 0;
    int rc = parse_real("x", s, 0.001, 86400, &v, why, sizeof why);
    check_why(rc, why, sizeof why);
    if (rc == 0 && (!(v >= 0.001 && v <= 86400) || !decimal_text(s)))
        abort();
}

static void fuzz_bytes(const char *s)
{
    char why[300] = "";
    uint64_t v = 0;
    int rc = parse_bytes("mem-cap", s, &v, why, sizeof why);
    check_why(rc, why, sizeof why);
    if (rc)
        return;
    if (v > (uint64_t)INT64_MAX)
        abort();
    /* the number, then one of K M G T (KiB .. TiB the same), or none */
    size_t len = strlen(s);
    char number[64];
    if (len >= sizeof number)
        abort();
    memcpy(number, s, len + 1);
    if (len > 3 && tolower((unsigned char)number[len - 2]) == 'i' &&
        tolower((unsigned char)number[len - 1]) == 'b')
        number[len -= 2] = '\0';
    unsigned shift = 0;
    const char *units = "KMGT", *u = len ? strchr(units, toupper((unsigned char)number[len - 1]))
                                         : NULL;
    if (u && *u) {
        shift = 10 * (unsigned)(u - units + 1);
        number[--len] = '\0';
    }
    if (!decimal_text(number))
        abort();
    if (!strchr(number, '.')) {
        const char *digits = number + (*number == '+' || *number == '-');
        if (strspn(digits, "0123456789") != strlen(digits) ||
            v != (uint64_t)strtoull(digits, NULL, 10) << shift)
            abort();
    } else if (!shift || (double)v != (double)llround(strtod(number, NULL) * ldexp(1, (int)shift))) {
        abort();
    }
}

static void fuzz_split(const char *s)
{
    char copy[512], *items[8], why[800] = "";
    size_t len = strlen(s);
    if (len >= sizeof copy)
        return;
    memcpy(copy, s, len + 1);
    int n = split_list("list", copy, items, 8, why, sizeof why);
    if (n < 0) {
        check_why(-1, why, sizeof why);
        if (strcmp(copy, s) != 0) /* the list as typed, for the reason */
            abort();
        return;
    }
    if (n < 1 || n > 8)
        abort();
    char joined[512];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (!items[i][0] || strchr(items[i], ','))
            abort();
        used += (size_t)snprintf(joined + used, sizeof joined - used, "%s%s", i ? "," : "",
                                 items[i]);
    }
    if (used >= sizeof joined || strcmp(joined, s) != 0)
        abort();
}

static void fuzz_trim(const char *s)
{
    char copy[512];
    size_t len = strlen(s);
    if (len >= sizeof copy)
        return;
    memcpy(copy, s, len + 1);
    char *t = trim_blanks(copy);
    size_t n = strlen(t);
    if (t < copy || t > copy + len || (n && (strchr(" \t", t[0]) || strchr(" \t\r\n", t[n - 1]))))
        abort();
}

static void fuzz_round_ms(const char *s)
{
    double v[16];
    size_t n = round_ms_parse(s, v, 16);
    if (n > 16)
        abort();
    for (size_t i = 0; i < n; i++)
        if (!(v[i] > 0) || !isfinite(v[i]))
            abort();
}

static void fuzz_lr_grid(const char *s)
{
    lr_grid g;
    char why[300] = "";
    int rc = lr_grid_parse(s, &g, why, sizeof why);
    check_why(rc, why, sizeof why);
    if (rc)
        return;
    if (g.n < 0 || g.n > LR_GRID_MAX || (g.sqrt_scaled ? g.n != 0 : g.n == 0))
        abort();
    for (int i = 0; i < g.n; i++) /* the curves train and name each rate as a float */
        if (!((float)g.lr[i] > 0) || !isfinite((float)g.lr[i]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    char *text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    /* a letter names the parser (the seeds are text: 'b1.5G'), any other
     * byte picks one too */
    const char *letters = "irbstml", *at = memchr(letters, data[0], 7);
    switch (at ? (int)(at - letters) : data[0] % 7) {
    case 0: fuzz_int(text); break;
    case 1: fuzz_real(text); break;
    case 2: fuzz_bytes(text); break;
    case 3: fuzz_split(text); break;
    case 4: fuzz_trim(text); break;
    case 5: fuzz_round_ms(text); break;
    case 6: fuzz_lr_grid(text); break;
    }
    free(text);
    return 0;
}
