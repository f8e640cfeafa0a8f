/* The median's distribution-free interval (stats.h): the order statistics
 * the binomial(n, 1/2) tails pick, checked against the sign-test table. */
#include <math.h>

#include "check.h"
#include "stats.h"

static void ranks(size_t n, double *v)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(i + 1); /* x(i) = i: the interval's ends are its ranks */
}

static void test_ranks(void)
{
    double v[100], lo, hi, cov;
    ranks(100, v);
    /* n = 100 at 95%: ranks 40 and 61 (P(X <= 39) = 0.0176, P(X <= 40) = 0.0284) */
    median_ci_sorted(v, 100, 0.95, &lo, &hi, &cov);
    CHECK(lo == 40 && hi == 61);
    CHECK_NEAR(cov, 1 - 2 * 0.0176001, 1e-4);
    /* n = 10: ranks 2 and 9, coverage 1 - 2 * 11/1024 */
    median_ci_sorted(v, 10, 0.95, &lo, &hi, &cov);
    CHECK(lo == 2 && hi == 9);
    CHECK_NEAR(cov, 1 - 22.0 / 1024, 1e-12);
    /* n = 6: [min, max] reaches 95% (1 - 2/64) */
    median_ci_sorted(v, 6, 0.95, &lo, &hi, &cov);
    CHECK(lo == 1 && hi == 6);
    CHECK_NEAR(cov, 1 - 2.0 / 64, 1e-12);
    /* n = 5: nothing reaches 95%; [min, max] with the 93.75% it has */
    median_ci_sorted(v, 5, 0.95, &lo, &hi, &cov);
    CHECK(lo == 1 && hi == 5);
    CHECK_NEAR(cov, 1 - 2.0 / 32, 1e-12);
    median_ci_sorted(v, 1, 0.95, &lo, &hi, &cov);
    CHECK(lo == 1 && hi == 1 && cov == 0);
    median_ci_sorted(v, 0, 0.95, &lo, &hi, &cov);
    CHECK(isnan(lo) && isnan(hi) && isnan(cov));
    /* a looser level, a narrower interval: n = 10 at 80% is ranks 3 and 8 */
    median_ci_sorted(v, 10, 0.80, &lo, &hi, &cov);
    CHECK(lo == 3 && hi == 8);
    /* the coverage from the count alone, for a reader of the CSV */
    CHECK_NEAR(median_ci_coverage(3, 0.95), 0.75, 1e-12);
    CHECK_NEAR(median_ci_coverage(5, 0.95), 1 - 2.0 / 32, 1e-12);
    CHECK_NEAR(median_ci_coverage(10, 0.95), 1 - 22.0 / 1024, 1e-12);
    CHECK(median_ci_coverage(1, 0.95) == 0 && isnan(median_ci_coverage(0, 0.95)));
}

static void test_in_stats(void)
{
    /* timing_stats_of carries the interval of the unsorted samples */
    double v[] = {9, 1, 8, 2, 7, 3, 6, 4, 5, 10};
    timing_stats s;
    CHECK(timing_stats_of(v, 10, &s) == 0);
    CHECK(s.ci_lo == 2 && s.ci_hi == 9 && s.ci_lo <= s.median && s.median <= s.ci_hi);
    CHECK_NEAR(s.ci_coverage, 1 - 22.0 / 1024, 1e-12);
}

int main(void)
{
    test_ranks();
    test_in_stats();
    return check_finish("test_stats");
}
