/* The costed time left (eta.h): a config's seconds from its step time and
 * budget, and configs not yet run costed from those measured. */
#include <math.h>

#include "check.h"
#include "eta.h"

static const eta_costs COSTS = {.budget_s = 2, .warmup = 2, .min_samples = 5,
                                .max_samples = 1000, .trace_steps = 0, .max_step_s = 10};

static void test_config_s(void)
{
    /* a 100 ms step of K = 4 (25 ms passes): 3 + 5 passes, 2 steps of
     * gradient check, 2 of warm-up, 20 + 1 timed in the 2 s budget */
    double s = eta_config_s(&COSTS, 100, 25, 4);
    CHECK_NEAR(s, 8 * 0.025 + 2 * 0.1 + 2 * 0.1 + 21 * 0.1, 1e-9);
    /* a 1 s step: the budget allows 2, the floor is 3 timed */
    CHECK_NEAR(eta_config_s(&COSTS, 1000, 250, 4), 8 * 0.25 + 2 + 2 + 4, 1e-9);
    /* a step over --max-step-s is skipped after its probe passes */
    CHECK_NEAR(eta_config_s(&COSTS, 64000, 1000, 64), 3.0, 1e-9);
    eta_costs fixed = COSTS;
    fixed.steps = 10;
    CHECK_NEAR(eta_config_s(&fixed, 100, 25, 4), 8 * 0.025 + 0.2 + 0.2 + 1.0, 1e-9);
}

static void test_estimates(void)
{
    /* models 0 (1 GFLOP) and 1 (4 GFLOP) at micro-batches 8 and 16 */
    eta_item items[] = {
        {.flops = 1e9, .micro = 8, .accum = 8, .model = 0},
        {.flops = 1e9, .micro = 16, .accum = 4, .model = 0},
        {.flops = 4e9, .micro = 8, .accum = 8, .model = 1},
        {.flops = 4e9, .micro = 16, .accum = 4, .model = 1},
    };
    for (int i = 0; i < 4; i++)
        items[i].step_ms = items[i].pass_ms = items[i].wall_s = NAN;
    eta e = {.items = items, .n = 4, .c = COSTS};
    CHECK(isnan(eta_step_ms(&e, 0)) && isnan(eta_left_s(&e, 0, 0, NAN)));
    eta_record(&e, 0, 200, 25, 1.0);
    eta_record(&e, 1, 100, 25, 1.0);
    CHECK(eta_step_ms(&e, 0) == 200); /* measured */
    /* model 1 not measured: model 0's rate at its micro-batch, by FLOPs */
    CHECK_NEAR(eta_step_ms(&e, 2), 800, 1e-9);
    CHECK_NEAR(eta_step_ms(&e, 3), 400, 1e-9);
    /* model 1 at 8 measured at half model 0's time per FLOP: at 16, one
     * octave away, the ratio shrinks toward 1 by the power 1 / 1.25 */
    eta_record(&e, 2, 400, 50, 2.0);
    double at16 = 400 * pow(0.5, 0.8);
    CHECK_NEAR(eta_step_ms(&e, 3), at16, 1e-9);
    /* the time left is the prediction scaled by the finished configs'
     * actual over predicted time */
    double k = (1.0 + 1.0 + 2.0) / (eta_config_s(&COSTS, 200, 25, 8) +
                                    eta_config_s(&COSTS, 100, 25, 4) +
                                    eta_config_s(&COSTS, 400, 50, 8));
    CHECK_NEAR(eta_left_s(&e, 3, 0, NAN), k * eta_config_s(&COSTS, at16, NAN, 4), 1e-9);
    /* the running config's own pass: K passes a step; what it ran is off */
    CHECK_NEAR(eta_left_s(&e, 3, 0.5, 60),
               fmax(0, k * eta_config_s(&COSTS, 240, 60, 4) - 0.5), 1e-9);
    CHECK(eta_left_s(&e, 3, 1e6, 60) == 0);
    /* a config skipped after its probe passes tells its step as K passes */
    eta_record(&e, 3, NAN, 5000, 20.0);
    CHECK_NEAR(eta_step_ms(&e, 3), 20000, 1e-9);
}

int main(void)
{
    test_config_s();
    test_estimates();
    return check_finish("test_eta");
}
