/* The recomputation rows (see recompute.h). */
#include "recompute.h"

static const axis_row RECOMPUTES[] = {
    [RECOMPUTE_NONE] = {"none", "every activation the backward reads is kept"},
    [RECOMPUTE_GELU] = {"gelu", "the GELU's input kept, its output recomputed in the backward"},
    [RECOMPUTE_BLOCK] = {"block", "each block's input kept, its forward recomputed in its "
                         "backward"},
};
_Static_assert(sizeof RECOMPUTES / sizeof RECOMPUTES[0] == RECOMPUTE_ROWS, "a row each");

const axis recompute_axis = AXIS_OF("recompute", RECOMPUTES);
