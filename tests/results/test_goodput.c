/* Steps to target and the S(B) fit (goodput.h): the interpolation between
 * logged steps, a diverged or never-reaching curve, exact points of a known
 * S_min and E_min recovered, and sets the relation does not fit refused
 * with the right reason. */
#include <math.h>

#include <string.h>

#include "check.h"
#include "goodput.h"
#include "goodput_table.h"

static void test_interpolation(void)
{
    const double loss[] = {4, 3, 2, 1};
    CHECK_NEAR(steps_to_target(loss, 4, 2.5), 1.5, 1e-12);
    CHECK_NEAR(steps_to_target(loss, 4, 3), 1, 1e-12);    /* reached exactly at a step */
    CHECK_NEAR(steps_to_target(loss, 4, 5), 0, 1e-12);    /* already there */
    CHECK_NEAR(steps_to_target(loss, 4, 1.25), 2.75, 1e-12);
    CHECK(isnan(steps_to_target(loss, 4, 0.5)));          /* never reached */
    /* the first crossing counts, not a later one */
    const double bumpy[] = {4, 2, 3, 1};
    CHECK_NEAR(steps_to_target(bumpy, 4, 2.5), 0.75, 1e-12);
    /* a curve that diverged before the target is not counted */
    const double gone[] = {4, 3, NAN, NAN};
    CHECK(isnan(steps_to_target(gone, 4, 2)));
    CHECK_NEAR(final_loss(loss, 4, 0), 1, 0);
    CHECK_NEAR(final_loss(loss, 4, 1), 2, 1e-12); /* the mean of the last three */
    CHECK(isnan(final_loss(gone, 4, 1)));
    /* the centered mean narrows alike at both ends: a straight line stays put */
    const double line[] = {10, 9, 8, 7, 6, 5};
    double sm[7];
    smooth_curve(line, 6, 2, sm);
    for (int t = 0; t < 6; t++)
        CHECK_NEAR(sm[t], line[t], 1e-12);
    /* and noise about it shrinks: +-1 alternating, width 5 -> +-0.2 inside */
    const double zig[] = {1, -1, 1, -1, 1, -1, 1};
    smooth_curve(zig, 7, 2, sm);
    CHECK_NEAR(sm[3], -0.2, 1e-12);
    CHECK_NEAR(sm[0], 1, 0);
    CHECK(goodput_smooth_half(8) == 16 && goodput_smooth_half(256) == 0);
}

static void test_exact_points(void)
{
    /* S = 100 + 3200 / B: S_min 100, E_min 3200, B_crit 32 */
    const double b[] = {8, 16, 32, 64, 128};
    double s[5], resid[5];
    for (int i = 0; i < 5; i++)
        s[i] = 100 + 3200 / b[i];
    goodput_fit f;
    goodput_fit_of(b, s, 5, resid, &f);
    CHECK(f.status == GOODPUT_FIT_OK);
    CHECK_NEAR(f.s_min, 100, 1e-9);
    CHECK_NEAR(f.e_min, 3200, 1e-7);
    CHECK_NEAR(f.b_crit, 32, 1e-9);
    CHECK(f.max_resid < 1e-12);
    for (int i = 0; i < 5; i++)
        CHECK(fabs(resid[i]) < 1e-12);
    /* three points are enough; the prediction from B_simple = B_crit is the line */
    goodput_fit_of(b, s, 3, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_OK);
    CHECK_NEAR(goodput_predicted_steps(f.s_min, 32, 64), s[3], 1e-9);
}

static void test_refused(void)
{
    const double b[] = {8, 16, 32, 64};
    goodput_fit f;
    /* two points: numbers, but no test of the relation */
    const double two[] = {500, 300};
    goodput_fit_of(b, two, 2, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_TOO_FEW);
    CHECK(f.e_min > 0);
    /* steps that grow with B: a negative slope in 1/B */
    const double up[] = {100, 150, 200, 260};
    goodput_fit_of(b, up, 4, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_SLOPE);
    CHECK(isnan(f.b_crit));
    /* falling faster than 1/B: the intercept goes negative */
    const double steep[] = {1000, 400, 100, 20};
    goodput_fit_of(b, steep, 4, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_INTERCEPT);
    /* a point far off the line */
    const double off[] = {500, 300, 400, 125};
    goodput_fit_of(b, off, 4, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_RESIDUALS);
    CHECK(f.max_resid > GOODPUT_RESID_BOUND);
    /* every point at one batch */
    const double same_b[] = {16, 16, 16}, s3[] = {100, 110, 90};
    goodput_fit_of(same_b, s3, 3, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_SAME_B);
    CHECK(*goodput_fit_why(GOODPUT_FIT_TOO_FEW));
}

/* The least time to target beside the others: one whose interval reaches
 * within the threshold is said not to be separated from it, and counted;
 * one clearly slower is not. */
static void test_least_and_its_ties(void)
{
    goodput_point p[3] = {
        {.e = 8, .time_s = 10, .time_lo = 9.9, .time_hi = 10.1},
        {.e = 16, .time_s = 11.5, .time_lo = 4.6, .time_hi = 17}, /* 1.15x [0.46..1.72] */
        {.e = 32, .time_s = 20, .time_lo = 19.9, .time_hi = 20.1},
    };
    goodput_series s = {.p = p, .n = 3, .best = 0};
    char text[300];
    goodput_slower_text(&s, 16, text, sizeof text);
    CHECK(strstr(text, "E = 16 takes 1.15x [0.46..1.72] as long") && strstr(text, "not separated"));
    goodput_slower_text(&s, 32, text, sizeof text);
    CHECK(strstr(text, "E = 32 takes 2.00x [1.97..2.03] as long") && !strstr(text, "not separated"));
    CHECK(goodput_tied_count(&s) == 1);
    p[1].time_lo = 11.4, p[1].time_hi = 11.6;
    CHECK(goodput_tied_count(&s) == 0);
    s.best = -1;
    CHECK(goodput_tied_count(&s) == 0);
}

int main(void)
{
    test_interpolation();
    test_exact_points();
    test_refused();
    test_least_and_its_ties();
    return check_finish("test_goodput");
}
