/* The level of a row's interval of the median (ci_level.h): 95% over 6
 * draws or more, [min, max]'s lower coverage over 5 or fewer; the draws
 * are the rounds where the row was timed in rounds, else its steps. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "ci_level.h"

static void test_coverage(void)
{
    CHECK_NEAR(row_ci_coverage(0, 3), 0.75, 1e-12);   /* timed alone, 3 steps */
    CHECK_NEAR(row_ci_coverage(5, 400), 0.9375, 1e-12); /* 400 steps in 5 rounds */
    CHECK(row_ci_coverage(0, 400) >= 0.95);
    CHECK(row_ci_coverage(12, 36) >= 0.95);
    CHECK(isnan(row_ci_coverage(0, 0)));
}

static void test_short_text(void)
{
    char t[32];
    CHECK(!strcmp(row_ci_short_text(5, 400, t, sizeof t), " (93.8%)"));
    CHECK(!strcmp(row_ci_short_text(0, 3, t, sizeof t), " (75%)"));
    CHECK(!strcmp(row_ci_short_text(12, 36, t, sizeof t), ""));
    CHECK(!strcmp(row_ci_short_text(0, 100, t, sizeof t), ""));
    CHECK(!strcmp(row_ci_short_text(0, 0, t, sizeof t), "")); /* unknown: nothing claimed */
    CHECK(!strcmp(row_ci_level_text(5, 400, t, sizeof t), "93.8%"));
    CHECK(!strcmp(row_ci_level_text(12, 36, t, sizeof t), "95%"));
    CHECK(!strcmp(row_ci_level_text(0, 0, t, sizeof t), "95%"));
}

int main(void)
{
    test_coverage();
    test_short_text();
    return check_finish("test_ci_level");
}
