/* How the loss of an accumulation window is normalised, and the scale each
 * micro-batch's gradient gets for it. The data says how many loss items
 * are valid where; this says what to divide by. */
#ifndef ACCUBENCH_REDUCTION_H
#define ACCUBENCH_REDUCTION_H

typedef enum reduction {
    REDUCTION_SUM = 0,           /* sum over the window / valid items in it */
    REDUCTION_MEAN_OF_MEANS = 1, /* bug: mean per micro-batch, then / K */
    REDUCTION_NO_SCALE = 2,      /* bug: mean per micro-batch, never / K */
    REDUCTION_COUNT
} reduction;

/* "sum", "mean-of-means", "no-scale": the CLI's, the profiles' and the
 * CSV's spelling. */
const char *reduction_name(reduction r);
/* 0 and *out, or -1 when the name is unknown. */
int reduction_parse(const char *s, reduction *out);
/* "sum, mean-of-means, no-scale" for messages. */
const char *reduction_names(void);

/* The scale one micro-batch's gradient gets: every valid item's loss
 * gradient is multiplied by it. */
float loss_scale(reduction r, int valid_in_micro, int valid_in_window, int accum_steps);

/* The scales of one window of `accum` micro-batches holding valid[k] valid
 * loss items each: scales[k] for micro-batch k, and scales[accum] for the
 * whole window as one batch (1 / its valid items: the reference the
 * gradient check compares against). scales holds accum + 1 floats. */
void reduction_scales(reduction r, const int *valid, int accum, float *scales);

#endif
