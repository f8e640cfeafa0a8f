#include "optimizer.h"

#include "model_need.h"
#include "optimizer_hparams.h"

/* The optimizers, a row each: name and description, the state it keeps.
 * SGD takes its numbers in the call and keeps nothing. */
static const optimizer_info OPTIMIZERS[] = {
    [OPT_ADAMW] = {{"adamw", "AdamW with decoupled weight decay"}, 2, sizeof(adamw_hparams)},
    [OPT_SGD] = {{"sgd", "plain SGD"}, 0, 0},
};
_Static_assert(sizeof OPTIMIZERS / sizeof OPTIMIZERS[0] == OPT_COUNT, "a row per kind");

const axis optimizer_axis = AXIS_OF("optimizer", OPTIMIZERS);

const optimizer_info *optimizer_info_of(optimizer_kind k)
{
    return &OPTIMIZERS[k];
}

size_t optimizer_state_bytes(optimizer_kind k, size_t weight_bytes, int *saturated)
{
    const optimizer_info *o = optimizer_info_of(k);
    if (!o->moments)
        return 0;
    if (weight_bytes > (MEMORY_NEED_MAX - o->hparams_bytes) / (size_t)o->moments) {
        *saturated = 1;
        return MEMORY_NEED_MAX;
    }
    return (size_t)o->moments * weight_bytes + o->hparams_bytes;
}

/* Where the update runs, a row each. */
static const axis_row PLACES[] = {
    [OPT_AT_STEP] = {"step", "over the whole vector after the window"},
    [OPT_AT_BACKWARD] = {"backward", "per range as the last backward finishes it"},
};
_Static_assert(sizeof PLACES / sizeof PLACES[0] == OPT_AT_COUNT, "a row per place");

const axis optimizer_at_axis = AXIS_OF("optimizer-at", PLACES);
