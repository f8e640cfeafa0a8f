/* The attention table and its one parser (attention_kind.h), which both
 * backends read their variable through: each row's name parses to its
 * row whatever the default, an unset variable is the default, and a bad
 * value (a misspelling, another case, set but empty) is refused with the
 * one line both backends print, naming the variable, the value, the rows
 * and the default, and leaves the answer as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_kind.h"
#include "check.h"

/* A variable of the test's own: no backend reads it. */
#define VAR "ACCUBENCH_TEST_ATTENTION"

static void test_rows(void)
{
    CHECK(attention_axis.count == ATTENTION_ROWS);
    CHECK(strcmp(attention_name(ATTENTION_FUSED), "fused") == 0);
    CHECK(strcmp(attention_name(ATTENTION_UNFUSED), "unfused") == 0);
    CHECK(axis_find(&attention_axis, "fused") == ATTENTION_FUSED);
    CHECK(axis_find(&attention_axis, "unfused") == ATTENTION_UNFUSED);
    /* the CSV's `# attention:` words, made from the row */
    char line[128];
    attention_kind k = ATTENTION_FUSED;
    axis_describe(&attention_axis, &k, 1, line, sizeof line);
    CHECK(strcmp(line, "fused (one op a pass, no scores stored)") == 0);
    k = ATTENTION_UNFUSED;
    axis_describe(&attention_axis, &k, 1, line, sizeof line);
    CHECK(strcmp(line, "unfused (permutes, strided-batched GEMMs, causal softmax)") == 0);
}

static void test_unset_is_default(void)
{
    unsetenv(VAR);
    char why[256] = "";
    for (attention_kind d = 0; d < ATTENTION_ROWS; d++) {
        attention_kind out = -1;
        CHECK(attention_from_env(VAR, d, &out, why, sizeof why) == 0 && out == d);
        CHECK(why[0] == '\0');
    }
}

static void test_each_row_whatever_the_default(void)
{
    char why[256] = "";
    for (attention_kind k = 0; k < ATTENTION_ROWS; k++)
        for (attention_kind d = 0; d < ATTENTION_ROWS; d++) {
            setenv(VAR, attention_name(k), 1);
            attention_kind out = -1;
            CHECK(attention_from_env(VAR, d, &out, why, sizeof why) == 0 && out == k);
        }
    unsetenv(VAR);
}

/* The exact line, so that the CPU's and CUDA's stay one message. */
static void test_bad_value(void)
{
    static const char *bad[] = {"flash", "Fused", "fused ", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (attention_kind d = 0; d < ATTENTION_ROWS; d++) {
            setenv(VAR, bad[i], 1);
            char why[256], want[256];
            attention_kind out = 7;
            CHECK(attention_from_env(VAR, d, &out, why, sizeof why) == -1 && out == 7);
            snprintf(want, sizeof want,
                     VAR "='%s': needs fused or unfused (unset it for %s, this backend's "
                         "default)", bad[i], attention_name(d));
            CHECK(strcmp(why, want) == 0);
            CHECK(strchr(why, '\n') == NULL);
            /* without a place for the reason: refused all the same */
            CHECK(attention_from_env(VAR, d, &out, NULL, 0) == -1 && out == 7);
        }
    /* a short buffer is cut, never overrun */
    setenv(VAR, "flash", 1);
    char cut[12];
    attention_kind out;
    CHECK(attention_from_env(VAR, ATTENTION_FUSED, &out, cut, sizeof cut) == -1 &&
          strlen(cut) == sizeof cut - 1 && strncmp(cut, VAR, sizeof cut - 1) == 0);
    unsetenv(VAR);
}

int main(void)
{
    test_rows();
    test_unset_is_default();
    test_each_row_whatever_the_default();
    test_bad_value();
    return check_finish("test_attention_kind");
}
