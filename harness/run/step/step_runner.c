/* The order of the gradient ranges a backward reports (see step_runner.h). */
#include "step_runner.h"

#include <stdio.h>

int step_take_range(step_runner *s, size_t offset, size_t count)
{
    if (offset + count != s->unreported) {
        snprintf(s->m->b->error, sizeof s->m->b->error,
                 "the model reported gradient range [%zu, %zu) out of order (expected one "
                 "ending at %zu)", offset, offset + count, s->unreported);
        return BK_ERROR;
    }
    s->unreported = offset;
    return BK_OK;
}
