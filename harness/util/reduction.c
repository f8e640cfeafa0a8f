/* The loss normalisation of a window: the correct one and the two bugs
 * frameworks shipped, a row each (see reduction.h). */
#include "reduction.h"

#include <stdio.h>

/* The window's sum over its valid items: one scale for every micro-batch. */
static float by_window(int valid_in_micro, int valid_in_window, int accum)
{
    (void)valid_in_micro, (void)accum;
    return valid_in_window ? 1.0f / (float)valid_in_window : 0.0f;
}

/* Each micro-batch's mean, then / K: wrong when the counts differ. */
static float mean_of_means(int valid_in_micro, int valid_in_window, int accum)
{
    (void)valid_in_window;
    return valid_in_micro ? 1.0f / ((float)valid_in_micro * (float)accum) : 0.0f;
}

/* Each micro-batch's mean, never divided by K: K times too large. */
static float micro_mean(int valid_in_micro, int valid_in_window, int accum)
{
    (void)valid_in_window, (void)accum;
    return valid_in_micro ? 1.0f / (float)valid_in_micro : 0.0f;
}

/* Each row: name and description, exact, the scale. */
static const reduction_info REDUCTIONS[] = {
    [REDUCTION_SUM] = {{"sum", "the window's loss summed, divided by its valid items"},
                       1, by_window},
    [REDUCTION_MEAN_OF_MEANS] = {{"mean-of-means", "bug: the mean of each micro-batch, "
                                  "divided by K"}, 0, mean_of_means},
    [REDUCTION_NO_SCALE] = {{"no-scale", "bug: the mean of each micro-batch, never divided "
                             "by K"}, 0, micro_mean},
};

const axis reduction_axis = AXIS_OF("reduction", REDUCTIONS);

const reduction_info *reduction_info_of(reduction r)
{
    return (const reduction_info *)axis_row_at(&reduction_axis, r);
}

int reduction_exact_named(const char *name)
{
    int r = axis_find(&reduction_axis, name);
    return r >= 0 && reduction_info_of(r)->exact;
}

const char *reduction_exact_list(char *out, size_t len)
{
    size_t used = 0;
    int n = 0, exact = 0;
    for (int r = 0; r < REDUCTION_COUNT; r++)
        exact += reduction_info_of(r)->exact;
    out[0] = '\0';
    for (int r = 0; r < REDUCTION_COUNT && used < len; r++) {
        if (!reduction_info_of(r)->exact)
            continue;
        n++;
        const char *sep = n == 1 ? "" : n == exact ? " and " : ", ";
        used += (size_t)snprintf(out + used, len - used, "%s%s", sep, reduction_name(r));
    }
    if (used < len)
        snprintf(out + used, len - used, exact == 1 ? " is right" : " are right");
    return out;
}

float loss_scale(reduction r, int valid_in_micro, int valid_in_window, int accum_steps)
{
    const reduction_info *ri = reduction_info_of(r);
    return ri ? ri->scale(valid_in_micro, valid_in_window, accum_steps) : 0.0f;
}

void reduction_scales(reduction r, const int *valid, int accum, float *scales)
{
    int window = 0;
    for (int k = 0; k < accum; k++)
        window += valid[k];
    for (int k = 0; k < accum; k++)
        scales[k] = loss_scale(r, valid[k], window, accum);
    scales[accum] = by_window(window, window, 1); /* the full batch, the reference */
}
