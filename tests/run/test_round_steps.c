/* The steps of interleaved rounds by round (round_steps.h): a row's
 * communication is taken by the same rule over the same steps as its step
 * time, so one stalled step in a round of one step cannot make the exposed
 * communication longer than the step, nor can rounds of several steps. */
#include <math.h>
#include <stdlib.h>

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

/* Only the kept rounds' steps count, each of them, in round order; the
 * median is the kept rounds' medians' (2 and 4.5), not the pooled steps'
 * (3). */
static void test_only_the_kept_rounds(void)
{
    const double v[] = {1, 2, 3, 100, 200, 4, 5};
    const size_t at[] = {0, 3, 5, 7};
    const int kept[] = {1, 0, 1};
    double pool[7];
    CHECK(round_steps_pool(v, at, 3, kept, pool) == 5);
    CHECK(pool[0] == 1 && pool[2] == 3 && pool[3] == 4 && pool[4] == 5);
    CHECK(round_steps_medians(v, at, 3, kept, pool) == 2);
    CHECK(pool[0] == 2 && pool[1] == 4.5);
    CHECK(round_steps_median(v, at, 3, kept, pool) == 3.25);
}

/* A figure no step exceeds stays under the step time, rounds of several
 * steps of uneven levels or not: 2,000 random comparisons. (Taken pooled
 * beside a step time by round, exposed communication once read 0.783 ms
 * in a 0.766 ms step.) */
static void test_a_part_stays_under_its_step(void)
{
    srand(7);
    int over = 0;
    for (int trial = 0; trial < 2000; trial++) {
        double step[40], part[40], pool[40];
        size_t at[9] = {0};
        int kept[8], rounds = 2 + rand() % 7;
        for (int k = 0; k < rounds; k++) {
            at[k + 1] = at[k] + 1 + (size_t)(rand() % 4);
            kept[k] = rand() % 5 != 0;
            double level = 1 + rand() % 3;
            for (size_t j = at[k]; j < at[k + 1]; j++) {
                step[j] = level * (1 + (rand() % 100) / 50.0);
                part[j] = step[j] * (rand() % 101) / 100.0;
            }
        }
        double s = round_steps_median(step, at, rounds, kept, pool);
        double p = round_steps_median(part, at, rounds, kept, pool);
        over += p > s;
    }
    CHECK(over == 0);
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
    test_a_part_stays_under_its_step();
    test_untold_is_nan();
    return check_finish("test_round_steps");
}
