/* Steps to target and the S(B) fit (goodput.h): the interpolation between
 * logged steps, a diverged or never-reaching curve, exact points of a known
 * S_min and E_min recovered, and sets the relation does not fit refused
 * with the right reason. */
#include <math.h>
#include <stdlib.h>
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
    /* reached within the first step: one step, never a fraction of one
     * (0.5 by the line), which would be a time to target under the step */
    CHECK_NEAR(steps_to_target(loss, 4, 3.5), 1, 1e-12);
    /* the first crossing counts, not a later one */
    const double bumpy[] = {4, 4, 2, 3, 1};
    CHECK_NEAR(steps_to_target(bumpy, 5, 2.5), 1.75, 1e-12);
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

/* The fit's standard errors: none from exact points; from noisy ones the
 * least-squares errors of the intercept and slope ((X'X)^-1 RSS / (n - 2),
 * worked out apart from the code) and B_crit's by the delta method. */
static void test_fit_errors(void)
{
    const double b[] = {8, 16, 32, 64};
    double s[4];
    goodput_fit f;
    for (int i = 0; i < 4; i++)
        s[i] = 100 + 3200 / b[i];
    goodput_fit_of(b, s, 4, NULL, &f);
    CHECK(f.dof == 2 && f.s_min_se < 1e-9 && f.e_min_se < 1e-6 && f.b_crit_se < 1e-9);
    const double noisy[] = {506, 296, 195, 153}; /* the same, off by +6, -4, -5, +3 */
    goodput_fit_of(b, noisy, 4, NULL, &f);
    CHECK(f.status == GOODPUT_FIT_OK);
    CHECK_NEAR(f.s_min, 96.7391304348, 1e-8);
    CHECK_NEAR(f.e_min, 3255.65217391, 1e-6);
    CHECK_NEAR(f.s_min_se, 4.87325171016, 1e-8);
    CHECK_NEAR(f.e_min_se, 67.6580303713, 1e-8);
    CHECK_NEAR(f.b_crit_se, 2.30051020156, 1e-8);
    /* the prediction's error: both parts summed, (1 + 32/64) 5 + (100/64) 4 */
    CHECK_NEAR(goodput_predicted_se(100, 5, 32, 4, 64), 13.75, 1e-12);
    CHECK(isnan(goodput_predicted_se(100, NAN, 32, 4, 64)));
    CHECK(isnan(goodput_predicted_se(100, 5, NAN, NAN, 64)));
    /* B_crit / B_simple: 40 +- 8 over 20 +- 2 is 2, +- 2 (0.2 + 0.1) */
    goodput_series gs = {.fit = {.status = GOODPUT_FIT_OK, .b_crit = 40, .b_crit_se = 8},
                         .b_simple = 20, .b_simple_err = 2};
    double ratio_err;
    CHECK_NEAR(goodput_crit_ratio(&gs, &ratio_err), 2, 1e-12);
    CHECK_NEAR(ratio_err, 0.6, 1e-12);
    gs.fit.status = GOODPUT_FIT_RESIDUALS; /* no B_crit claimed: no ratio */
    CHECK(isnan(goodput_crit_ratio(&gs, &ratio_err)) && isnan(ratio_err));
    /* two points: no errors (no residual is left to measure them) */
    goodput_fit_of(b, noisy, 2, NULL, &f);
    CHECK(isnan(f.s_min_se) && isnan(f.e_min_se) && isnan(f.b_crit_se));
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
 * past the threshold's edge is said not yet separated from it, one whose
 * interval lies inside the band the same within 2%, and both are counted
 * as ties; one clearly slower is not. */
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
    CHECK(strstr(text, "E = 16 takes 1.15x [0.46..1.72] as long, not yet separated from the "
                       "least by the rule (threshold 2%)"));
    goodput_slower_text(&s, 32, text, sizeof text);
    CHECK(strstr(text, "E = 32 takes 2.00x [1.97..2.03] as long") && !strstr(text, "separated") &&
          !strstr(text, "the same"));
    CHECK(goodput_tied_count(&s) == 1);
    p[1].time_lo = 11.4, p[1].time_hi = 11.6;
    CHECK(goodput_tied_count(&s) == 0);
    /* inside the band: a tie the rule resolves as the same, said so */
    p[1] = (goodput_point){.e = 16, .time_s = 10.1, .time_lo = 10.09, .time_hi = 10.11};
    p[0].time_lo = 9.99, p[0].time_hi = 10.01;
    goodput_slower_text(&s, 16, text, sizeof text);
    CHECK(strstr(text, "E = 16 takes 1.010x [1.008..1.012] as long, the same as the least within "
                       "2% by the rule") && !strstr(text, "separated"));
    CHECK(goodput_tied_count(&s) == 1);
    s.best = -1;
    CHECK(goodput_tied_count(&s) == 0);
}

/* A timed row of the test series at E = e split micro, with a noise
 * scale b +- err (NAN: none). */
static csv_row series_row(long long e, long long micro, double b, double err)
{
    csv_row r;
    memset(&r, 0, sizeof r);
    r.status = "ok", r.backend = "cpu", r.model = "tiny", r.dtype = "fp32", r.mode = "async";
    r.reduction = "sum", r.sync = "", r.recompute = "none", r.shard = "";
    r.effective_batch = e, r.micro_batch = micro, r.accum_steps = e / micro;
    r.devices = 1, r.arm = 1, r.mem_need_bytes = 1000;
    r.step_ms_median = 2, r.step_ms_ci_lo = 1.5, r.step_ms_ci_hi = 3;
    r.grad_noise_scale = b, r.grad_noise_scale_err = err;
    return r;
}

/* Three curves of the test series at E = 256, 512 and 1024, their losses
 * falling 0.1, 0.2 and 0.3 a step from 4 (ct->c to free). */
static void three_curves(curves_table *ct)
{
    static double loss[3][10];
    ct->c = calloc(3, sizeof(read_curve));
    ct->n = 3;
    for (int i = 0; i < 3; i++) {
        read_curve *c = &ct->c[i];
        strcpy(c->backend, "cpu"), strcpy(c->model, "tiny"), strcpy(c->dtype, "fp32");
        strcpy(c->mode, "async"), strcpy(c->reduction, "sum"), strcpy(c->recompute, "none");
        c->effective_batch = 256 << i, c->micro_batch = 128, c->accum_steps = 2 << i;
        c->devices = 1, c->arm = 1, c->lr = 0.1, c->steps = 10, c->loss = loss[i];
        for (int t = 0; t < 10; t++)
            loss[i][t] = 4 - t * (i + 1) * 0.1;
    }
}

/* The series' B_simple from rows that share their windows: two splits of
 * one E read the same examples, and a second row carrying the same
 * estimate adds no information, so the error stays the row's own (pooled
 * as if independent it came out sqrt(2) tighter). */
static void test_rows_pooled_as_correlated(void)
{
    curves_table ct;
    three_curves(&ct);
    csv_row rows[] = {
        series_row(256, 128, 60, 12),
        series_row(256, 64, 60, 12), /* the same estimate again */
        series_row(512, 128, NAN, NAN),
    };
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    CHECK(goodput_build(&ct, rows, 3, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK_NEAR(s->b_simple, 60, 1e-9);
        CHECK_NEAR(s->b_simple_err, 12, 1e-9);
        CHECK(s->b_simple_rows == 2);
        goodput_free(s, n);
    }
    free(ct.c);
}

/* The time's interval covers what its step's interval does: over the
 * steps for a row timed alone, over its rounds' medians (the round the
 * unit) for a row timed in rounds, and the words say which. */
static void test_cover_by_round_or_step(void)
{
    curves_table ct;
    three_curves(&ct);
    csv_row rows[] = {series_row(256, 128, NAN, NAN)};
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    char text[200];
    rows[0].samples = 40, rows[0].rounds = 3; /* 40 steps over 3 rounds: [min, max] of 3 */
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK_NEAR(s->p[0].time_cover, 0.75, 1e-12);
        goodput_cover_text(&s->p[0], text, sizeof text);
        CHECK(!strcmp(text, " (a 75% interval: the step timed in 3 rounds)"));
        goodput_free(s, n);
    }
    rows[0].samples = 3, rows[0].rounds = 0; /* timed alone, 3 steps */
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        goodput_cover_text(&s->p[0], text, sizeof text);
        CHECK(!strcmp(text, " (a 75% interval: the step timed 3 times)"));
        goodput_free(s, n);
    }
    rows[0].samples = 3, rows[0].rounds = 12; /* 12 rounds: the full 95% */
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].time_cover >= 0.95);
        goodput_cover_text(&s->p[0], text, sizeof text);
        CHECK(!*text);
        goodput_free(s, n);
    }
    free(ct.c);
}

/* The narrowed windows at a curve's end are a few losses or one: a curve
 * flat at 2 with one lucky last window (its final loss 1.99) does not
 * reach a target of 1.9 there, and an E whose own final loss is the
 * default target still reaches it, at its last whole window (a curve
 * shorter than one is read whole). */
static void test_lucky_last_window(void)
{
    CHECK(smooth_whole_steps(64, 16) == 48 && smooth_whole_steps(64, 0) == 64);
    CHECK(smooth_whole_steps(10, 16) == 10 && smooth_whole_steps(1, 16) == 1);
    CHECK(smooth_whole_steps(33, 16) == 17 && smooth_whole_steps(32, 16) == 32);
    static double flat[64], falling[64], short_curve[10];
    for (int t = 0; t < 64; t++) {
        flat[t] = 2 + (t % 2 ? 0.05 : -0.05);
        falling[t] = 4 - 0.05 * t;
    }
    flat[0] = 3, flat[1] = 2.5, flat[63] = 1.8; /* it starts above its final loss */
    for (int t = 0; t < 10; t++)
        short_curve[t] = 3 - 0.1 * t;
    curves_table ct;
    three_curves(&ct);
    ct.c[0].effective_batch = 8, ct.c[0].micro_batch = 4, ct.c[0].accum_steps = 2;
    ct.c[0].steps = 64, ct.c[0].loss = flat;
    ct.c[1].steps = 64, ct.c[1].loss = falling;
    goodput_request req = {.target = 1.9, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    CHECK(goodput_build(&ct, NULL, 0, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].e == 8 && s->p[0].final > req.target);
        CHECK(isnan(s->p[0].steps)); /* it was 62.25, from the last window alone */
        goodput_free(s, n);
    }
    req.target = NAN; /* the highest final loss: E = 8's own, at step 63 - 16 */
    CHECK(goodput_build(&ct, NULL, 0, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].sets_target && s->p[0].steps <= 47 && s->p[0].steps > 0);
        goodput_free(s, n);
    }
    ct.c[0].steps = 10, ct.c[0].loss = short_curve; /* shorter than a window of E = 8 */
    CHECK(goodput_build(&ct, NULL, 0, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].sets_target && s->p[0].steps > 0 && s->p[0].steps <= 9);
        goodput_free(s, n);
    }
    free(ct.c);
}

/* Nothing to be least among, and nothing timed at all: one timed E is
 * no least; no row, a target no curve reaches, or one met at the start
 * give plan's one line (and its exit 1), each saying which. */
static void test_none_or_one_timed(void)
{
    curves_table ct;
    three_curves(&ct);
    csv_row rows[] = {series_row(256, 128, NAN, NAN)};
    goodput_series *s;
    size_t n;
    char why[600];
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    CHECK(s->p[0].time_s > 0 && s->best == -1); /* timed, but alone */
    CHECK(!s->p[0].sets_target && !s->p[1].sets_target); /* --target-loss: none sets it */
    CHECK(goodput_none_timed_text(s, n, why, sizeof why) == -1 && !*why);
    CHECK(!strcmp(goodput_untimed_why(&s->p[1]), "has no timed row in the CSV"));
    goodput_free(s, n);
    req.mem_cap = 10; /* the row needs 1000 bytes */
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    CHECK(goodput_none_timed_text(s, n, why, sizeof why) == 0 && strstr(why, "within the cap"));
    CHECK(!strcmp(goodput_untimed_why(&s->p[0]), "has no timed split within the cap"));
    goodput_free(s, n);
    /* a measured peak over the cap is over it, whatever the need says,
     * as plan --recommend --goal step holds the same row */
    req.mem_cap = 1500, rows[0].mem_peak_bytes = 2000;
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    CHECK(!s->p[0].fast && !(s->p[0].time_s > 0));
    goodput_free(s, n);
    rows[0].mem_peak_bytes = 0;
    req.mem_cap = -1;
    CHECK(goodput_build(&ct, rows, 0, &req, &s, &n) == 0 && n == 1);
    CHECK(goodput_none_timed_text(s, n, why, sizeof why) == 0 &&
          strstr(why, "none of the 3 effective batches that reach the target loss 3.5 has a "
                      "timed row in the CSV"));
    goodput_free(s, n);
    req.target = NAN; /* the default: E = 256 ends highest, and sets it */
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    CHECK(s->p[0].sets_target && !s->p[1].sets_target && !s->p[2].sets_target);
    goodput_free(s, n);
    req.target = 0.5;
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    CHECK(goodput_none_timed_text(s, n, why, sizeof why) == 0 &&
          strstr(why, "no effective batch reaches the target loss 0.5"));
    goodput_free(s, n);
    req.target = 4;
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    CHECK(goodput_none_timed_text(s, n, why, sizeof why) == 0 && strstr(why, "at step 0"));
    goodput_free(s, n);
    free(ct.c);
}

/* Every curve diverged: none has a final loss, so no default target is
 * set, and a target that is not a number is reached by none. It was met
 * at step 0 by every curve ("loss > nan" is false), and plan and the
 * report said the target loss nan lay at or above every starting loss. */
static void test_every_curve_diverged(void)
{
    const double loss[] = {4, 3, 2, 1};
    CHECK(isnan(steps_to_target(loss, 4, NAN)));
    curves_table ct;
    three_curves(&ct);
    for (size_t i = 0; i < ct.n; i++)
        for (int t = 2 + (int)i; t < ct.c[i].steps; t++)
            ct.c[i].loss[t] = NAN; /* diverged at step 1 + i */
    csv_row rows[] = {series_row(256, 128, NAN, NAN)};
    goodput_request req = {.target = NAN, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    char why[600];
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(isnan(s->target) && s->at_start == 0);
        for (size_t j = 0; j < s->n; j++)
            CHECK(isnan(s->p[j].steps) && isnan(s->p[j].final) && !(s->p[j].time_s > 0));
        CHECK(goodput_no_target_why(s) && strstr(goodput_no_target_why(s), "diverged"));
        CHECK(goodput_at_start_text(s, why, sizeof why) == -1);
        CHECK(goodput_none_timed_text(s, n, why, sizeof why) == 0 &&
              strstr(why, "every effective batch's curve diverged") && !strstr(why, "nan"));
        goodput_free(s, n);
    }
    /* the curves' own, given back for the tests after */
    for (size_t i = 0; i < ct.n; i++)
        for (int t = 0; t < ct.c[i].steps; t++)
            ct.c[i].loss[t] = 4 - t * ((int)i + 1) * 0.1;
    free(ct.c);
}

/* A best rate at an edge of its grid brackets nothing: the point says
 * which edge, and one line names every such E for plan and the report;
 * a best rate between two others, or a single rate, is no edge. Three
 * rates at each of E = 256 and 512, the one that falls fastest kept. */
static void test_best_rate_at_grid_edge(void)
{
    static double loss[6][10];
    static const double rate[3] = {0.1, 0.2, 0.4};
    curves_table ct = {.c = calloc(6, sizeof(read_curve)), .n = 6};
    /* the rate of fastest fall: E = 256 its largest, E = 512 its middle */
    int best[2] = {2, 1};
    for (int i = 0; i < 6; i++) {
        read_curve *c = &ct.c[i];
        strcpy(c->backend, "cpu"), strcpy(c->model, "tiny"), strcpy(c->dtype, "fp32");
        strcpy(c->mode, "async"), strcpy(c->reduction, "sum"), strcpy(c->recompute, "none");
        c->effective_batch = 256 << (i / 3), c->micro_batch = 128;
        c->accum_steps = c->effective_batch / 128, c->devices = 1, c->arm = 1;
        c->lr = rate[i % 3], c->steps = 10, c->loss = loss[i];
        for (int t = 0; t < 10; t++)
            loss[i][t] = 4 - t * (i % 3 == best[i / 3] ? 0.2 : 0.1);
    }
    csv_row rows[] = {series_row(256, 128, NAN, NAN), series_row(512, 128, NAN, NAN)};
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    char text[1200];
    CHECK(goodput_build(&ct, rows, 2, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].lrs == 3 && s->p[0].lr == 0.4 && s->p[0].lr_edge == 1);
        CHECK(s->p[1].lrs == 3 && s->p[1].lr == 0.2 && s->p[1].lr_edge == 0);
        CHECK(!strcmp(goodput_lr_edge_word(&s->p[0]), "its largest"));
        CHECK(!*goodput_lr_edge_word(&s->p[1]));
        CHECK(goodput_lr_edge_text(s, text, sizeof text) == 0 &&
              strstr(text, "the best rate of E = 256 is the largest of its grid: ") &&
              strstr(text, "its steps to target may be too many"));
        goodput_free(s, n);
    }
    best[0] = 0, best[1] = 0; /* both their smallest */
    for (int i = 0; i < 6; i++)
        for (int t = 0; t < 10; t++)
            loss[i][t] = 4 - t * (i % 3 == best[i / 3] ? 0.2 : 0.1);
    CHECK(goodput_build(&ct, rows, 2, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].lr_edge == -1 && s->p[1].lr_edge == -1);
        CHECK(goodput_lr_edge_text(s, text, sizeof text) == 0 &&
              strstr(text, "the best rate of E = 256 and 512 is the smallest of its grid: ") &&
              strstr(text, "their steps to target may be too many"));
        goodput_free(s, n);
    }
    ct.n = 1; /* one rate alone: no grid, no edge */
    CHECK(goodput_build(&ct, rows, 2, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].lrs == 1 && s->p[0].lr_edge == 0);
        CHECK(goodput_lr_edge_text(s, text, sizeof text) == -1 && !*text);
        goodput_free(s, n);
    }
    free(ct.c);
}

/* Rates of one E from runs of another --train-steps (appended to one
 * file) compare over the steps both ran: 0.01 falls faster and is ahead
 * at every step of its 4, the 0.001 curve ran 10 and ends lower; the
 * longer curve's final loss won the grid for its length. */
static void test_rates_over_common_steps(void)
{
    static double fast[4], slow[10];
    curves_table ct = {.c = calloc(2, sizeof(read_curve)), .n = 2};
    for (int i = 0; i < 2; i++) {
        read_curve *c = &ct.c[i];
        strcpy(c->backend, "cpu"), strcpy(c->model, "tiny"), strcpy(c->dtype, "fp32");
        strcpy(c->mode, "async"), strcpy(c->reduction, "sum"), strcpy(c->recompute, "none");
        c->effective_batch = 256, c->micro_batch = 128, c->accum_steps = 2;
        c->devices = 1, c->arm = 1;
    }
    ct.c[0].lr = 0.001, ct.c[0].steps = 10, ct.c[0].loss = slow;
    ct.c[1].lr = 0.01, ct.c[1].steps = 4, ct.c[1].loss = fast;
    for (int t = 0; t < 10; t++)
        slow[t] = 4 - 0.1 * t;
    for (int t = 0; t < 4; t++)
        fast[t] = 4 - 0.3 * t;
    csv_row rows[] = {series_row(256, 128, NAN, NAN)};
    goodput_request req = {.target = 3.5, .mem_cap = -1};
    goodput_series *s;
    size_t n;
    CHECK(goodput_build(&ct, rows, 1, &req, &s, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(s->p[0].lrs == 2 && s->p[0].lr == 0.01);
        goodput_free(s, n);
    }
    free(ct.c);
}

/* The noise scale along a curve in plain decimals, as the rest of the
 * line: an error of 254 is "254", never "2.5e+02" beside "221". */
static void test_noise_text_plain(void)
{
    double noise[3] = {221.4, NAN, 4567.8}, err[3] = {254.2, NAN, 0.53};
    read_curve c = {.steps = 3, .noise = noise, .noise_err = err};
    goodput_point p = {.curve = &c};
    char text[200];
    CHECK(goodput_noise_text(&p, text, sizeof text) == 0);
    CHECK(!strcmp(text, "step 0: 221 +- 254, step 2: 4568 +- 0.53"));
    if (strcmp(text, "step 0: 221 +- 254, step 2: 4568 +- 0.53"))
        printf("got: %s\n", text);
}

/* Each line's cells, counted by its commas. */
static int cells(const char *line)
{
    int n = 1;
    for (; *line && *line != '\n'; line++)
        n += *line == ',';
    return n;
}

/* The charts' tables write a text cell as the run's CSV does: a model
 * whose name holds commas (a custom shape) keeps every row as wide as its
 * header, and each row ends with its series' key columns. */
static void test_tables_keep_their_columns(void)
{
    double loss[2] = {3, 2};
    read_curve c = {.backend = "cpu", .model = "mlp:hidden=32,layers=2", .dtype = "fp32",
                    .mode = "async", .recompute = "none", .grad_dtype = "bf16", .devices = 1,
                    .steps = 2, .loss = loss};
    goodput_point p = {.e = 8, .lr = 0.5, .steps = 1, .time_s = NAN, .time_lo = NAN,
                       .time_hi = NAN, .pred_steps = NAN, .pred_time_s = NAN,
                       .pred_steps_se = NAN, .time_cover = NAN, .curve = &c};
    goodput_series s = {.key = &c, .target = 2.5, .p = &p, .n = 1, .best = -1,
                        .b_simple = NAN, .b_simple_err = NAN};
    for (int curves = 0; curves < 2; curves++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        CHECK(f != NULL);
        if (!f)
            return;
        if (curves)
            goodput_write_curves(f, &s, 1);
        else
            goodput_write_table(f, &s, 1);
        fclose(f);
        const char *row = strchr(text, '\n');
        CHECK(row && strstr(text, "," GOODPUT_KEY_HEADER "\n") == row - strlen(GOODPUT_KEY_HEADER) - 1);
        int rows = 0;
        for (; row && row[1]; row = strchr(row + 1, '\n')) {
            rows++;
            CHECK(cells(row + 1) == cells(text));
            CHECK(!strncmp(row + 1, "1,mlp:hidden=32;layers=2,8,", 27));
            const char *end = strchr(row + 1, '\n');
            const char *key = ",cpu,fp32,async,1,,none,,bf16"; /* sync and shard empty */
            CHECK(end && end - row > (long)strlen(key) &&
                  !strncmp(end - strlen(key), key, strlen(key)));
        }
        CHECK(rows == (curves ? 2 : 1));
        free(text);
    }
}

int main(void)
{
    test_rates_over_common_steps();
    test_interpolation();
    test_exact_points();
    test_fit_errors();
    test_refused();
    test_least_and_its_ties();
    test_rows_pooled_as_correlated();
    test_none_or_one_timed();
    test_every_curve_diverged();
    test_lucky_last_window();
    test_cover_by_round_or_step();
    test_best_rate_at_grid_edge();
    test_noise_text_plain();
    test_tables_keep_their_columns();
    return check_finish("test_goodput");
}
