#include "nearest.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_NAME 64

int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAX_NAME || lb >= MAX_NAME)
        return INT_MAX / 2;
    /* optimal string alignment: three rows of the dynamic programme */
    int rows[3][MAX_NAME + 1], *two = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int best = prev[j - 1] + (ca != cb);
            best = prev[j] + 1 < best ? prev[j] + 1 : best;
            best = cur[j - 1] + 1 < best ? cur[j - 1] + 1 : best;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && two[j - 2] + 1 < best)
                best = two[j - 2] + 1;
            cur[j] = best;
        }
        int *t = two;
        two = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

int nearest_is_close(const char *typed, const char *candidate, int d)
{
    if (d == 0) /* only the case differs */
        return 1;
    return d <= 1 + (int)strlen(candidate) / 4 && (size_t)d < strlen(typed);
}

int nearest_consider(const char *typed, const char *candidate, const char **best, int *best_d)
{
    int d = edit_distance(typed, candidate);
    if (d >= *best_d || !nearest_is_close(typed, candidate, d))
        return 0;
    *best = candidate;
    *best_d = d;
    return 1;
}

const char *nearest_in_list(const char *typed, const char *list, char *out, size_t n)
{
    const char *seps = ",|; ", *best = NULL;
    int best_d = INT_MAX;
    char word[MAX_NAME], found[MAX_NAME] = "";
    for (const char *p = list; *p; p += strspn(p, seps)) {
        size_t len = strcspn(p, seps);
        if (len < sizeof word) {
            memcpy(word, p, len);
            word[len] = '\0';
            /* shapes (mlp:hidden=N) and the joining "or" are not names */
            if (!strpbrk(word, ":=") && strcmp(word, "or") &&
                nearest_consider(typed, word, &best, &best_d))
                snprintf(found, sizeof found, "%s", word);
        }
        p += len;
    }
    if (!best)
        return NULL;
    snprintf(out, n, "%s", found);
    return out;
}

void nearest_suggest(char *why, size_t n, const char *typed, const char *list)
{
    char name[MAX_NAME];
    size_t used = strlen(why);
    if (used + 1 < n && nearest_in_list(typed, list, name, sizeof name))
        snprintf(why + used, n - used, "; did you mean '%s'?", name);
}
