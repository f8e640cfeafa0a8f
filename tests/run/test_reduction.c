/* The loss normalisation: what each reduction makes of a window whose
 * micro-batches hold different numbers of valid items. */
#include <string.h>

#include "check.h"
#include "reduction.h"

static void test_names(void)
{
    for (int r = 0; r < REDUCTION_COUNT; r++) {
        reduction back;
        CHECK(reduction_parse(reduction_name((reduction)r), &back) == 0 && back == (reduction)r);
        CHECK(strstr(reduction_names(), reduction_name((reduction)r)) != NULL);
    }
    reduction r;
    CHECK(reduction_parse("median", &r) == -1);
    CHECK(reduction_parse("", &r) == -1);
    CHECK(strcmp(reduction_name(REDUCTION_COUNT), "?") == 0);
}

static void test_loss_scale(void)
{
    CHECK_NEAR(loss_scale(REDUCTION_SUM, 3, 12, 4), 1.0 / 12, 1e-8);
    CHECK_NEAR(loss_scale(REDUCTION_MEAN_OF_MEANS, 3, 12, 4), 1.0 / 12, 1e-8);
    CHECK_NEAR(loss_scale(REDUCTION_MEAN_OF_MEANS, 2, 12, 4), 1.0 / 8, 1e-9);
    CHECK_NEAR(loss_scale(REDUCTION_NO_SCALE, 2, 12, 4), 1.0 / 2, 1e-9);
    CHECK(loss_scale(REDUCTION_MEAN_OF_MEANS, 0, 12, 4) == 0.0f);
    CHECK(loss_scale(REDUCTION_SUM, 0, 0, 1) == 0.0f);
}

/* The weight the whole window gets: sum over micro-batches of valid items x
 * scale. The full-batch gradient has weight 1. */
static double window_weight(const int *valid, const float *scales, int accum)
{
    double w = 0;
    for (int k = 0; k < accum; k++)
        w += valid[k] * (double)scales[k];
    return w;
}

/* E = 14 as 4 + 4 + 4 + 2 with 3, 0, 4 and 1 valid items: uneven counts,
 * an empty micro-batch and a short last one. */
static void test_uneven_split(void)
{
    const int valid[] = {3, 0, 4, 1}, accum = 4, total = 8;
    float scales[5];

    reduction_scales(REDUCTION_SUM, valid, accum, scales);
    for (int k = 0; k < accum; k++)
        CHECK_NEAR(scales[k], 1.0 / total, 1e-9); /* one scale: 1 / the window's items */
    CHECK_NEAR(window_weight(valid, scales, accum), 1.0, 1e-6);
    CHECK_NEAR(scales[accum], 1.0 / total, 1e-9);

    /* Each non-empty micro-batch weighs 1/K whatever it holds: 3 of 4 here,
     * and an item in the last micro-batch counts 3 times one in the first. */
    reduction_scales(REDUCTION_MEAN_OF_MEANS, valid, accum, scales);
    CHECK(scales[1] == 0.0f);
    CHECK_NEAR(window_weight(valid, scales, accum), 3.0 / 4, 1e-6);
    CHECK_NEAR(scales[3] / scales[0], 3.0, 1e-6);
    CHECK_NEAR(scales[accum], 1.0 / total, 1e-9); /* the reference is the same */

    /* Never divided by K: about K times too large. */
    reduction_scales(REDUCTION_NO_SCALE, valid, accum, scales);
    CHECK_NEAR(window_weight(valid, scales, accum), 3.0, 1e-6);
    CHECK_NEAR(scales[accum], 1.0 / total, 1e-9);

    /* One micro-batch: every reduction is the full batch. */
    const int one[] = {5};
    for (int r = 0; r < REDUCTION_COUNT; r++) {
        reduction_scales((reduction)r, one, 1, scales);
        CHECK_NEAR(scales[0], 1.0 / 5, 1e-7);
        CHECK(scales[0] == scales[1]);
    }
}

int main(void)
{
    test_names();
    test_loss_scale();
    test_uneven_split();
    return check_finish("test_reduction");
}
