/* A config's step time predicted from those measured (eta_step_ms,
 * eta_step.c): a line through a model's micro-batches, another model
 * scaled by the two models' ratio. */
#include <math.h>

#include "check.h"
#include "eta.h"
#include "eta_items.h"

/* Micro-batches not measured, of a model measured at two: a pass as a
 * fixed cost plus a cost per example through the measured ones (10 ms +
 * 1 ms an example here), not the nearest one's time per FLOP (4x16's,
 * which would give 64x1 224 ms, three times its 74). */
static void test_pass_line(void)
{
    eta_item items[] = {
        {.flops = 64e9, .micro = 1, .accum = 64},
        {.flops = 64e9, .micro = 4, .accum = 16},
        {.flops = 64e9, .micro = 64, .accum = 1},
        {.flops = 64e9, .micro = 2, .accum = 32, .mode = 1},
        {.flops = 256e9, .micro = 64, .accum = 1, .model = 1}, /* 4x the FLOPs an example */
    };
    not_run(items, 5);
    eta e = {.items = items, .n = 5};
    eta_record(&e, 0, 64 * 11, 11, 1.0);
    CHECK_NEAR(eta_step_ms(&e, 2), 704, 1e-9); /* one measured: its rate per FLOP */
    eta_record(&e, 1, 16 * 14, 14, 1.0);
    CHECK_NEAR(eta_step_ms(&e, 2), 74, 1e-9);
    /* a model not measured at all: the other one's line, by FLOPs */
    CHECK_NEAR(eta_step_ms(&e, 4), 4 * 74, 1e-9);
    /* another mode has a line of its own: none yet, the nearest rate */
    CHECK_NEAR(eta_step_ms(&e, 3), 704, 1e-9);
    /* a line falling with the micro-batch is no cost per example: flat */
    eta_record(&e, 1, 16 * 9, 9, 1.0);
    CHECK_NEAR(eta_step_ms(&e, 2), 10, 1e-9);
}

/* A config timed twice is one point of the line: 4x16's second arm (20 ms
 * a pass against its first's 14) leaves the line through 1 and 4 examples
 * as it was (64x1 at 74 ms); as a point of its own it would pull it up. */
static void test_second_arm_one_point(void)
{
    eta_item items[] = {
        {.flops = 64e9, .micro = 1, .accum = 64},
        {.flops = 64e9, .micro = 4, .accum = 16},
        {.flops = 64e9, .micro = 4, .accum = 16, .arm = 2},
        {.flops = 64e9, .micro = 64, .accum = 1},
    };
    not_run(items, 4);
    eta e = {.items = items, .n = 4};
    eta_record(&e, 0, 64 * 11, 11, 1.0);
    eta_record(&e, 1, 16 * 14, 14, 1.0);
    eta_record(&e, 2, 16 * 20, 20, 1.0);
    CHECK_NEAR(eta_step_ms(&e, 3), 74, 1e-9);
}

/* Beyond the micro-batches a model's line was fitted on, another model
 * measured at that micro-batch carries the shape: model 1's passes at 1
 * and 4 examples, 110 and 108 ms, are its fixed cost and noise, a flat
 * line that puts its 64x1 at 109 ms; model 0 measured at 64, by the two
 * models' ratio at 4 (shrunk by the 4 octaves to 64), puts it at 411. */
static void test_line_reach(void)
{
    eta_item items[] = {
        {.flops = 64e9, .micro = 1, .accum = 64},
        {.flops = 64e9, .micro = 4, .accum = 16},
        {.flops = 64e9, .micro = 64, .accum = 1},
        {.flops = 256e9, .micro = 1, .accum = 64, .model = 1},
        {.flops = 256e9, .micro = 4, .accum = 16, .model = 1},
        {.flops = 256e9, .micro = 64, .accum = 1, .model = 1},
        {.flops = 256e9, .micro = 2, .accum = 32, .model = 1},
    };
    not_run(items, 7);
    eta e = {.items = items, .n = 7};
    eta_record(&e, 0, 64 * 11, 11, 1.0); /* 10 ms + 1 ms an example */
    eta_record(&e, 1, 16 * 14, 14, 1.0);
    eta_record(&e, 2, 74, 74, 1.0);
    eta_record(&e, 3, 64 * 110, 110, 1.0);
    eta_record(&e, 4, 16 * 108, 108, 1.0);
    double ratio = (16 * 108 / 256e9) / (16 * 14 / 64e9);
    CHECK_NEAR(eta_step_ms(&e, 5), 74 * 4 * pow(ratio, 0.5), 1e-9);
    /* within them, the line: 109 ms a pass */
    CHECK_NEAR(eta_step_ms(&e, 6), 32 * 109, 1e-9);
}

/* A step is K passes and one optimizer update, whose cost (the
 * parameters', whatever the split) the line takes in as a pass's share,
 * update / K = update x micro / E: at one effective batch that share is
 * itself linear in the micro-batch, so the line through two timed splits
 * gives every other split of that batch its one update exactly, however
 * large a share of the step it is (1 s on passes of 10 ms + 1 ms an
 * example here; model M's measured update on 2 cores was 0.14-0.35 s, 2-18%
 * of its step: docs/time-left.md). */
static void test_update_in_the_line(void)
{
    const double update = 1000;
    eta_item items[] = {
        {.flops = 64e9, .micro = 4, .accum = 16},
        {.flops = 64e9, .micro = 16, .accum = 4},
        {.flops = 64e9, .micro = 1, .accum = 64},
        {.flops = 64e9, .micro = 8, .accum = 8},
        {.flops = 64e9, .micro = 64, .accum = 1},
    };
    not_run(items, 5);
    eta e = {.items = items, .n = 5};
    for (int i = 0; i < 2; i++) {
        double pass = 10 + items[i].micro;
        eta_record(&e, i, update + items[i].accum * pass, pass, 1.0);
    }
    for (int i = 2; i < 5; i++)
        CHECK_NEAR(eta_step_ms(&e, i), update + items[i].accum * (10.0 + items[i].micro), 1e-9);
}

int main(void)
{
    test_pass_line();
    test_second_arm_one_point();
    test_line_reach();
    test_update_in_the_line();
    return check_finish("test_eta_step");
}
