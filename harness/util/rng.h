/* A small, fast, seedable generator (splitmix64): the same seed gives the
 * same weights and data on every machine and backend. */
#ifndef ACCUBENCH_RNG_H
#define ACCUBENCH_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t state;
} rng;

static inline uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline float rng_uniform(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((rng_next(r) >> 40) * (1.0 / 16777216.0));
}

static inline int rng_below(rng *r, int n)
{
    return (int)((rng_next(r) >> 33) % (uint64_t)n);
}

#endif
