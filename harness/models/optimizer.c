#include "optimizer.h"

/* The optimizers, a row each: name and description. */
static const axis_row OPTIMIZERS[] = {
    [OPT_ADAMW] = {"adamw", "AdamW with decoupled weight decay"},
    [OPT_SGD] = {"sgd", "plain SGD"},
};
_Static_assert(sizeof OPTIMIZERS / sizeof OPTIMIZERS[0] == OPT_COUNT, "a row per kind");

const axis optimizer_axis = AXIS_OF("optimizer", OPTIMIZERS);

/* Where the update runs, a row each. */
static const axis_row PLACES[] = {
    [OPT_AT_STEP] = {"step", "over the whole vector after the window"},
    [OPT_AT_BACKWARD] = {"backward", "per range as the last backward finishes it"},
};
_Static_assert(sizeof PLACES / sizeof PLACES[0] == OPT_AT_COUNT, "a row per place");

const axis optimizer_at_axis = AXIS_OF("optimizer-at", PLACES);
