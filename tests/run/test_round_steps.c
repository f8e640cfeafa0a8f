/* The steps of interleaved rounds pooled (round_steps.h): a row's
 * communication is the median of the same steps as its step time, so one
 * stalled step in a round of one step cannot make the exposed
 * communication longer than the step. */
#include <math.h>

#include "check.h"
#include "round_steps.h"
#include "stats.h"

/* Four rounds of one step each (a slow config's slices), the third
 * stalled in its all-reduce for 30 ms: step and exposed time both. */
static void test_a_stalled_step_stays_one_step(void)
{
    const double step[] = {0.16, 0.15, 30.2, 0.17};
    const double exposed[] = {0.04, 0.05, 30.0, 0.04};
    const size_t at[] = {0, 1, 2, 3, 4};
    const int kept[] = {1, 1, 1, 1};
    double pool[4];
    double step_ms = round_steps_median(step, at, 4, kept, pool);
    double exposed_ms = round_steps_median(exposed, at, 4, kept, pool);
    CHECK_NEAR(step_ms, 0.165, 1e-12);
    CHECK_NEAR(exposed_ms, 0.045, 1e-12);
    CHECK(exposed_ms <= step_ms);
}

/* Only the kept rounds' steps count, each of them, in round order. */
static void test_only_the_kept_rounds(void)
{
    const double v[] = {1, 2, 3, 100, 200, 4, 5};
    const size_t at[] = {0, 3, 5, 7};
    const int kept[] = {1, 0, 1};
    double pool[7];
    CHECK(round_steps_pool(v, at, 3, kept, pool) == 5);
    CHECK(pool[0] == 1 && pool[2] == 3 && pool[3] == 4 && pool[4] == 5);
    CHECK(round_steps_median(v, at, 3, kept, pool) == 3);
}

/* A figure the engine does not tell (NAN on any step) is not told; no
 * steps at all, or no figure kept, is none. */
static void test_untold_is_nan(void)
{
    const double v[] = {1, NAN, 3};
    const size_t at[] = {0, 3};
    const int kept[] = {1}, none[] = {0};
    double pool[3];
    CHECK(isnan(round_steps_median(v, at, 1, kept, pool)));
    CHECK(isnan(round_steps_median(NULL, at, 1, kept, pool)));
    CHECK(round_steps_pool(v, at, 1, none, pool) == 0);
}

int main(void)
{
    test_a_stalled_step_stays_one_step();
    test_only_the_kept_rounds();
    test_untold_is_nan();
    return check_finish("test_round_steps");
}
