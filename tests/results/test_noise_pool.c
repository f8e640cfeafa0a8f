/* The noise scale pooled over correlated rows (noise_pool.h): copies of
 * one estimate keep its error, the error of distinct ones is the weighted
 * mean of theirs (the fully correlated bound), and an estimate without a
 * usable error is left out. */
#include <math.h>

#include "check.h"
#include "noise_pool.h"

static void test_copies_keep_their_error(void)
{
    noise_pool p = {0};
    double b, err;
    noise_pool_add(&p, 60, 12, 8);
    noise_pool_add(&p, 60, 12, 8);
    noise_pool_add(&p, 60, 12, 8);
    noise_pool_result(&p, &b, &err);
    CHECK_NEAR(b, 60, 1e-12);
    /* independent pooling would say 12 / sqrt(3) = 6.9 */
    CHECK_NEAR(err, 12, 1e-12);
}

static void test_distinct_estimates(void)
{
    noise_pool p = {0};
    double b, err;
    noise_pool_add(&p, 50, 10, 8); /* weight 1/100 */
    noise_pool_add(&p, 80, 20, 8); /* weight 1/400 */
    noise_pool_result(&p, &b, &err);
    CHECK_NEAR(b, (50 / 100.0 + 80 / 400.0) / (1 / 100.0 + 1 / 400.0), 1e-12); /* 56 */
    CHECK_NEAR(err, (10 / 100.0 + 20 / 400.0) / (1 / 100.0 + 1 / 400.0), 1e-12); /* 12 */
    /* between the least and the largest error, never under the least */
    CHECK(err >= 10 && err <= 20);
}

static void test_left_out(void)
{
    noise_pool p = {0};
    double b, err;
    noise_pool_result(&p, &b, &err);
    CHECK(isnan(b) && isnan(err));
    noise_pool_add(&p, 70, NAN, 8);
    noise_pool_add(&p, 70, 0, 8);
    noise_pool_add(&p, -5, 3, 8);
    noise_pool_add(&p, INFINITY, 3, 8);
    noise_pool_add(&p, NAN, 3, 8);
    CHECK(p.n == 0);
    noise_pool_add(&p, 40, 4, 8);
    noise_pool_result(&p, &b, &err);
    CHECK_NEAR(b, 40, 0);
    CHECK_NEAR(err, 4, 1e-12);
}

/* The pool's interval takes its fewest windows' t: unknown (a file from
 * before the column) anywhere, unknown. */
static void test_fewest_windows(void)
{
    noise_pool p = {0};
    noise_pool_add(&p, 50, 10, 16);
    noise_pool_add(&p, 60, 10, 4);
    noise_pool_add(&p, 55, 10, 8);
    CHECK(p.windows == 4);
    noise_pool_add(&p, 70, NAN, 2); /* left out: its windows too */
    CHECK(p.windows == 4);
    noise_pool_add(&p, 55, 10, -1);
    CHECK(p.windows == 0);
    noise_pool_add(&p, 55, 10, 2);
    CHECK(p.windows == 0);
}

int main(void)
{
    test_fewest_windows();
    test_copies_keep_their_error();
    test_distinct_estimates();
    test_left_out();
    return check_finish("test_noise_pool");
}
