/* The paired comparison (paired.h): the ratio per round and its interval,
 * and the rule that turns the interval into a verdict. */
#include <math.h>

#include "check.h"
#include "paired.h"
#include "rng.h"

/* Rounds in which both configs slow down together: the ratio stays. */
static void test_common_disturbance_cancels(void)
{
    double a[12], b[12];
    for (int i = 0; i < 12; i++) {
        double load = i < 6 ? 2.0 : 1.0; /* half the rounds under a busy loop */
        a[i] = 10.0 * load * (1 + 0.01 * (i % 3));
        b[i] = 15.0 * load * (1 + 0.01 * ((i + 1) % 3));
    }
    paired_ratio p;
    CHECK(paired_ratio_of(b, a, 12, &p) == 0);
    CHECK(p.rounds == 12);
    CHECK_NEAR(p.ratio, 1.5, 0.02);
    CHECK(p.lo <= p.ratio && p.ratio <= p.hi);
    CHECK(p.hi / p.lo < 1.05);
    CHECK(paired_judge(&p, PAIRED_THRESHOLD) == PAIRED_SLOWER);
    CHECK(paired_ratio_of(a, b, 12, &p) == 0);
    CHECK(paired_judge(&p, PAIRED_THRESHOLD) == PAIRED_FASTER);
}

/* A against itself with noise: never faster or slower. */
static void test_aa_is_never_separated(void)
{
    rng r = {42};
    int separated = 0;
    for (int trial = 0; trial < 200; trial++) {
        double a[8], b[8];
        for (int i = 0; i < 8; i++) {
            double load = 1 + rng_uniform(&r, 0, 1); /* shared by both arms */
            a[i] = 10 * load * (1 + rng_uniform(&r, -0.03f, 0.03f));
            b[i] = 10 * load * (1 + rng_uniform(&r, -0.03f, 0.03f));
        }
        paired_ratio p;
        CHECK(paired_ratio_of(b, a, 8, &p) == 0);
        paired_verdict v = paired_judge(&p, PAIRED_THRESHOLD);
        CHECK(v != PAIRED_UNKNOWN);
        separated += !paired_indistinguishable(v);
    }
    CHECK(separated <= 2);
}

static void test_equal_and_undecided(void)
{
    paired_ratio p = {.rounds = 10, .ratio = 1.0, .lo = 0.99, .hi = 1.01};
    CHECK(paired_judge(&p, 0.02) == PAIRED_EQUAL);
    CHECK(paired_rounds_to_separate(&p, 0.02) == 0);
    p = (paired_ratio){.rounds = 10, .ratio = 1.06, .lo = 0.98, .hi = 1.14};
    CHECK(paired_judge(&p, 0.02) == PAIRED_UNDECIDED);
    /* half-width 0.076 in log, room log(1.06) - log(1.02) = 0.038: 4x the rounds */
    size_t need = paired_rounds_to_separate(&p, 0.02);
    CHECK(need >= 35 && need <= 45);
    p = (paired_ratio){.rounds = 10, .ratio = 1.3, .lo = 1.25, .hi = 1.36};
    CHECK(paired_judge(&p, 0.02) == PAIRED_SLOWER);
    p = (paired_ratio){.rounds = 0, .ratio = NAN, .lo = NAN, .hi = NAN};
    CHECK(paired_judge(&p, 0.02) == PAIRED_UNKNOWN);
}

/* Missing or non-positive figures are left out of the pairs. */
static void test_missing_pairs(void)
{
    double a[4] = {10, NAN, 10, 0}, b[4] = {12, 12, -1, 12};
    paired_ratio p;
    CHECK(paired_ratio_of(b, a, 4, &p) == 0);
    CHECK(p.rounds == 1);
    CHECK_NEAR(p.ratio, 1.2, 1e-12);
    double none[2] = {NAN, NAN};
    CHECK(paired_ratio_of(none, a, 2, &p) == -1);
    CHECK(isnan(p.ratio));
}

/* Apart: the widest ratio the two intervals allow. */
static void test_unpaired(void)
{
    paired_ratio p = ratio_of_intervals(10, 9.8, 10.2, 13, 12.8, 13.3);
    CHECK_NEAR(p.ratio, 1.3, 1e-12);
    CHECK_NEAR(p.lo, 12.8 / 10.2, 1e-12);
    CHECK_NEAR(p.hi, 13.3 / 9.8, 1e-12);
    CHECK(paired_judge(&p, PAIRED_THRESHOLD) == PAIRED_SLOWER);
    p = ratio_of_intervals(10, NAN, NAN, 13, 12, 14);
    CHECK(paired_judge(&p, PAIRED_THRESHOLD) == PAIRED_UNKNOWN);
}

int main(void)
{
    test_common_disturbance_cancels();
    test_aa_is_never_separated();
    test_equal_and_undecided();
    test_missing_pairs();
    test_unpaired();
    return check_finish("paired");
}
