/* The loss normalisation of a window: the correct one and the two bugs
 * frameworks shipped, a row each (see reduction.h). */
#include "reduction.h"

#include <stdio.h>

/* Each row: name and description, exact, what its scale divides by. */
static const reduction_info REDUCTIONS[] = {
    /* the window's sum over its valid items: one scale for every micro-batch */
    [REDUCTION_SUM] = {{"sum", "the window's loss summed, divided by its valid items"},
                       1, REDUCTION_BY_WINDOW},
    /* each micro-batch's mean, then / K: wrong when the counts differ */
    [REDUCTION_MEAN_OF_MEANS] = {{"mean-of-means", "bug: the mean of each micro-batch, "
                                  "divided by K"}, 0, REDUCTION_BY_MICRO | REDUCTION_BY_STEPS},
    /* each micro-batch's mean, never divided by K: K times too large */
    [REDUCTION_NO_SCALE] = {{"no-scale", "bug: the mean of each micro-batch, never divided "
                             "by K"}, 0, REDUCTION_BY_MICRO},
};

/* The counts a scale may divide by, in the order a rule names them. */
static const struct {
    unsigned bit;
    const char *word;
} COUNTS[] = {
    {REDUCTION_BY_WINDOW, "window"},
    {REDUCTION_BY_MICRO, "micro"},
    {REDUCTION_BY_STEPS, "k"},
};
#define N_COUNTS (int)(sizeof COUNTS / sizeof COUNTS[0])

/* 1 over the product of the counts `divides` names, in fp32 (each product
 * of small counts exact), 0 where one of them is 0. */
static float scale_of(unsigned divides, int valid_in_micro, int valid_in_window, int accum)
{
    const int value[] = {valid_in_window, valid_in_micro, accum};
    float d = 1.0f;
    for (int i = 0; i < N_COUNTS; i++)
        if (divides & COUNTS[i].bit) {
            if (!value[i])
                return 0.0f;
            d *= (float)value[i];
        }
    return 1.0f / d;
}

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
    return ri ? scale_of(ri->divides, valid_in_micro, valid_in_window, accum_steps) : 0.0f;
}

void reduction_scales(reduction r, const int *valid, int accum, float *scales)
{
    int window = 0;
    for (int k = 0; k < accum; k++)
        window += valid[k];
    for (int k = 0; k < accum; k++)
        scales[k] = loss_scale(r, valid[k], window, accum);
    /* the full batch, the reference */
    scales[accum] = scale_of(REDUCTION_BY_WINDOW, window, window, 1);
}

const char *reduction_rule(reduction r, char *out, size_t len)
{
    const reduction_info *ri = reduction_info_of(r);
    int n = 0;
    for (int i = 0; i < N_COUNTS; i++)
        n += ri && (ri->divides & COUNTS[i].bit);
    size_t used = (size_t)snprintf(out, len, "1/%s", n > 1 ? "(" : "");
    for (int i = 0, put = 0; i < N_COUNTS && used < len; i++)
        if (ri && (ri->divides & COUNTS[i].bit))
            used += (size_t)snprintf(out + used, len - used, "%s%s", put++ ? "*" : "",
                                     COUNTS[i].word);
    if (n == 0 && used < len)
        snprintf(out + used, len - used, "1");
    else if (n > 1 && used < len)
        snprintf(out + used, len - used, ")");
    return out;
}
