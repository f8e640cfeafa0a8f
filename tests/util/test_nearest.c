/* "did you mean": edit distance, what counts as close, and the name picked
 * out of a table's list of names. */
#include <limits.h>
#include <string.h>

#include "check.h"
#include "nearest.h"

static void test_distance(void)
{
    CHECK(edit_distance("micro", "micro") == 0);
    CHECK(edit_distance("s", "S") == 0); /* case ignored */
    CHECK(edit_distance("efective", "effective") == 1);
    CHECK(edit_distance("mirco", "micro") == 1); /* a swap is one edit */
    CHECK(edit_distance("", "abc") == 3 && edit_distance("abc", "") == 3);
    CHECK(edit_distance("kitten", "sitting") == 3);
    char huge[100];
    memset(huge, 'a', 99);
    huge[99] = '\0';
    CHECK(edit_distance(huge, "a") > 60);
}

static void test_close(void)
{
    CHECK(nearest_is_close("efective", "effective", 1));
    CHECK(!nearest_is_close("Q", "S", 1)); /* every letter changed is no typo */
    CHECK(!nearest_is_close("frobnicate", "effective", edit_distance("frobnicate", "effective")));
    const char *best = NULL;
    int d = INT_MAX;
    CHECK(nearest_consider("steps", "step", &best, &d) && !strcmp(best, "step") && d == 1);
    CHECK(!nearest_consider("steps", "seed", &best, &d) && !strcmp(best, "step"));
}

static void test_list(void)
{
    char out[64], why[200];
    CHECK(nearest_in_list("asyn", "async, sync, graph, alloc, alloc-async", out, sizeof out) &&
          !strcmp(out, "async"));
    CHECK(nearest_in_list("fp3", "auto|fp32|tf32|bf16", out, sizeof out) && !strcmp(out, "fp32"));
    /* shape templates are no names */
    CHECK(!nearest_in_list("mlp:hidden=N", "tiny, S; or mlp:hidden=N,layers=N", out, sizeof out));
    CHECK(nearest_in_list("tinny", "tiny, S; or mlp:hidden=N,layers=N", out, sizeof out) &&
          !strcmp(out, "tiny"));
    CHECK(!nearest_in_list("turbo", "async, sync, graph", out, sizeof out));
    strcpy(why, "unknown mode 'grahp'");
    nearest_suggest(why, sizeof why, "grahp", "async, sync, graph");
    CHECK(!strcmp(why, "unknown mode 'grahp'; did you mean 'graph'?"));
    strcpy(why, "unknown mode 'turbo'");
    nearest_suggest(why, sizeof why, "turbo", "async, sync, graph");
    CHECK(!strcmp(why, "unknown mode 'turbo'"));
}

int main(void)
{
    test_distance();
    test_close();
    test_list();
    return check_finish("test_nearest");
}
