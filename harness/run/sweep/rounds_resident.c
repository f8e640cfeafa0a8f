/* Whether a comparison's runners may stay set up side by side between
 * its rounds (rounds.h: rounds_resident). */
#include "rounds.h"

#include "dispatch.h"
#include "dp_check.h"

/* This rank's answer to rounds_resident. */
static int resident_here(const sweep *s, const round_member *members, size_t n)
{
    if (s->mem_cap)
        return 0; /* under a cap, each config holds its own memory only */
    /* Each dtype's model state and data once (its members share them),
     * each runner's activations on top. */
    uint64_t need = 0;
    int counted[DTYPE_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        const config *c = members[i].c;
        model_spec spec = config_model_spec(c);
        (void)bk_use_dtype(s->b, c->dtype); /* its arrangement (validated: cannot fail) */
        model_spec_on(&spec, s->b);
        memory_need m;
        model_memory_need(&spec, c->dtype, c->optimizer, c->sp.micro, c->sp.global, c->buffers,
                          &m);
        uint64_t shared = m.total - m.activations;
        need += m.activations + (counted[c->dtype] ? 0 : shared);
        counted[c->dtype] = 1;
    }
    return !s->b->mem_total || need <= (uint64_t)(0.5 * (double)s->b->mem_total);
}

int rounds_resident(const sweep *s, const round_member *members, size_t n)
{
    int mine = resident_here(s, members, n);
    return s->comm ? dp_agree_all(s->comm, mine) : mine; /* one path for every rank */
}
