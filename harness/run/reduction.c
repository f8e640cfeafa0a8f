/* The loss normalisation of a window: the correct one and the two bugs
 * frameworks shipped. */
#include "reduction.h"


#include "name_list.h"

static const char *const NAMES[REDUCTION_COUNT] = {
    [REDUCTION_SUM] = "sum",
    [REDUCTION_MEAN_OF_MEANS] = "mean-of-means",
    [REDUCTION_NO_SCALE] = "no-scale",
};

const char *reduction_name(reduction r)
{
    return r >= 0 && r < REDUCTION_COUNT ? NAMES[r] : "?";
}

static const char *name_at(int r) { return NAMES[r]; }

int reduction_parse(const char *s, reduction *out)
{
    int i = name_find(REDUCTION_COUNT, name_at, s);
    if (i < 0)
        return -1;
    *out = (reduction)i;
    return 0;
}

const char *reduction_names(void)
{
    static char list[64];
    return name_list(list, sizeof list, REDUCTION_COUNT, name_at, ", ");
}

float loss_scale(reduction r, int valid_in_micro, int valid_in_window, int accum_steps)
{
    switch (r) {
    case REDUCTION_SUM:
        return valid_in_window ? 1.0f / (float)valid_in_window : 0.0f;
    case REDUCTION_MEAN_OF_MEANS:
        return valid_in_micro ? 1.0f / ((float)valid_in_micro * (float)accum_steps) : 0.0f;
    case REDUCTION_NO_SCALE:
        return valid_in_micro ? 1.0f / (float)valid_in_micro : 0.0f;
    default:
        return 0.0f;
    }
}

void reduction_scales(reduction r, const int *valid, int accum, float *scales)
{
    int window = 0;
    for (int k = 0; k < accum; k++)
        window += valid[k];
    for (int k = 0; k < accum; k++)
        scales[k] = loss_scale(r, valid[k], window, accum);
    scales[accum] = loss_scale(REDUCTION_SUM, window, window, 1);
}
