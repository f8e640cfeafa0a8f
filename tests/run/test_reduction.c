/* The loss normalisation: what each reduction makes of a window whose
 * micro-batches hold different numbers of valid items. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "reduction.h"

/* A row's rule as the dump and --list-reductions write it for the peer. */
static void test_rule(void)
{
    char rule[64];
    CHECK(!strcmp(reduction_rule(REDUCTION_SUM, rule, sizeof rule), "1/window"));
    CHECK(!strcmp(reduction_rule(REDUCTION_MEAN_OF_MEANS, rule, sizeof rule), "1/(micro*k)"));
    CHECK(!strcmp(reduction_rule(REDUCTION_NO_SCALE, rule, sizeof rule), "1/micro"));
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

/* Every row that says it is exact gives the window weight 1 and each valid
 * item the same weight (1 / the window's items) on uneven windows: the
 * full-batch gradient. A row that says it is not gives something else on
 * at least one of them (else it is not a bug to demonstrate). */
static void test_exact_rows(void)
{
    static const int windows[][5] = {
        {4, 3, 0, 4, 1}, {3, 5, 5, 2}, {2, 1, 7}, {5, 6, 6, 6, 6}, {1, 9},
    }; /* each: K, then the valid items of its micro-batches */
    for (int r = 0; r < REDUCTION_COUNT; r++) {
        const reduction_info *ri = reduction_info_of(r);
        int all_full = 1;
        for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
            int accum = windows[w][0], total = 0;
            const int *valid = &windows[w][1];
            float scales[8];
            for (int k = 0; k < accum; k++)
                total += valid[k];
            reduction_scales(r, valid, accum, scales);
            CHECK_NEAR(scales[accum], 1.0 / total, 1e-8); /* the reference never changes */
            int full = 1;
            for (int k = 0; k < accum; k++)
                if (valid[k] && !(scales[k] > 0.99999 / total && scales[k] < 1.00001 / total))
                    full = 0;
            all_full &= full;
            if (ri->exact)
                CHECK(full && fabs(window_weight(valid, scales, accum) - 1.0) < 1e-5);
        }
        CHECK(ri->exact || !all_full);
        CHECK(reduction_exact_named(ri->head.name) == ri->exact);
    }
    CHECK(reduction_exact_named("no-such") == 0);
}

/* The usage text's remark names every exact row, and no other. */
static void test_help_line(void)
{
    char line[256];
    reduction_exact_list(line, sizeof line);
    int words = 0;
    for (char *save, *w = strtok_r(line, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        if (!strcmp(w, "and") || !strcmp(w, "is") || !strcmp(w, "are") || !strcmp(w, "right"))
            continue;
        int r = axis_find(&reduction_axis, w);
        CHECK(r >= 0 && reduction_info_of(r)->exact);
        words++;
    }
    int exact = 0;
    for (int r = 0; r < REDUCTION_COUNT; r++)
        exact += reduction_info_of(r)->exact;
    CHECK(words == exact && exact > 0);
}

int main(void)
{
    test_exact_rows();
    test_help_line();
    test_loss_scale();
    test_rule();
    test_uneven_split();
    return check_finish("test_reduction");
}
