/* The bf16 rounding of the gradient accumulator (backend_ops.round_bf16,
 * ew_round_bf16) against a reference written apart: the two bf16 values
 * around x found by truncating its bits, the nearer one chosen in double,
 * a tie to the one whose last significand bit is 0. Edge cases by name
 * (ties both ways, NaN, infinities, overflow, subnormals, signed zero),
 * then every 65537th bit pattern of all 2^32, through the CPU backend's op
 * on a vector whose length is not a multiple of any vector width. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dispatch.h"
#include "elementwise.h"
#include "test_cpu_backend.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Round to nearest even into bf16 by value, not by the op's bit trick. */
static float reference(float x)
{
    if (isnan(x))
        return x;
    uint32_t u = bits_of(x), sign = u & 0x80000000u, mag = u & 0x7fffffffu;
    uint32_t lo = mag & 0xffff0000u, hi = lo + 0x10000u; /* hi past the top: infinity */
    if (mag == lo)
        return x; /* already a bf16 (infinity among them) */
    double d = fabs((double)x), dlo = (double)from_bits(lo);
    /* Past the largest bf16 the next step would be 2^128: infinity. */
    double dhi = hi >= 0x7f800000u ? ldexp(1.0, 128) : (double)from_bits(hi);
    uint32_t pick;
    if (d - dlo < dhi - d)
        pick = lo;
    else if (d - dlo > dhi - d)
        pick = hi;
    else
        pick = (lo >> 16) & 1u ? hi : lo;
    if (pick >= 0x7f800000u)
        pick = 0x7f800000u;
    return from_bits(sign | pick);
}

static int same(float a, float b)
{
    return (isnan(a) && isnan(b)) || bits_of(a) == bits_of(b);
}

static void check_one(float x, float want)
{
    float got = ew_round_bf16(x);
    CHECK(same(got, want));
    CHECK(same(reference(x), want));
    if (!same(got, want) || !same(reference(x), want))
        fprintf(stderr, "  %a (0x%08x): got %a, reference %a, want %a\n", (double)x,
                (unsigned)bits_of(x), (double)got, (double)reference(x), (double)want);
}

static void test_named(void)
{
    float ulp1 = ldexpf(1.0f, -7); /* bf16's step at 1: a 7-bit stored significand */
    check_one(1.0f, 1.0f);
    check_one(-2.5f, -2.5f);
    check_one(1.0f + ulp1 / 2, 1.0f);                    /* tie, to the even 1 */
    check_one(1.0f + 3 * ulp1 / 2, 1.0f + 2 * ulp1);     /* tie, to the even 1 + 2 ulp */
    check_one(-(1.0f + ulp1 / 2), -1.0f);
    check_one(1.0f + ulp1 / 2 + ldexpf(1, -20), 1.0f + ulp1); /* just past the tie: up */
    check_one(1.0f + ulp1 / 2 - ldexpf(1, -20), 1.0f);        /* just short of it: down */
    check_one(INFINITY, INFINITY);
    check_one(-INFINITY, -INFINITY);
    check_one(from_bits(0x7f7fffffu), INFINITY);  /* FLT_MAX is past bf16's top half-step */
    check_one(from_bits(0x7f7f7fffu), from_bits(0x7f7f0000u)); /* the largest bf16 */
    CHECK(bits_of(ew_round_bf16(-0.0f)) == 0x80000000u);
    CHECK(bits_of(ew_round_bf16(0.0f)) == 0u);
    /* NaN stays NaN, quiet, its sign kept, however few payload bits (a
     * truncation would make 0x7f800001 an infinity). */
    uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        float r = ew_round_bf16(from_bits(nans[i]));
        CHECK(isnan(r) && (bits_of(r) & 0x80000000u) == (nans[i] & 0x80000000u));
    }
    /* Subnormals round as the bits say: the smallest to zero, a tie to
     * the even neighbour, the largest up to the smallest normal. */
    check_one(from_bits(0x00000001u), 0.0f);
    check_one(from_bits(0x80000001u), -0.0f);
    check_one(from_bits(0x00008000u), 0.0f);
    check_one(from_bits(0x00018000u), from_bits(0x00020000u));
    check_one(from_bits(0x00010000u), from_bits(0x00010000u));
    check_one(from_bits(0x007fffffu), from_bits(0x00800000u));
}

/* The op over a sweep of bit patterns, on the CPU backend. */
static void test_op(backend *b)
{
    size_t n = 65539; /* 2^32 / 65537 and three more: no vector width divides it */
    float *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want);
    CHECK(x && want);
    if (!x || !want)
        goto done;
    for (size_t i = 0; i < n; i++) {
        x[i] = from_bits((uint32_t)(i * 65537u + i / 3));
        want[i] = reference(x[i]);
    }
    CHECK(bk_round_bf16(b, x, n) == BK_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += !same(x[i], want[i]);
    CHECK(wrong == 0);
    if (wrong)
        fprintf(stderr, "  %zu of %zu patterns rounded wrong\n", wrong, n);
    /* Rounding twice changes nothing: a bf16 accumulator held across
     * micro-batches is rounded again each time. */
    memcpy(want, x, n * sizeof *x);
    CHECK(bk_round_bf16(b, x, n) == BK_OK);
    CHECK(memcmp(want, x, n * sizeof *x) == 0);
    CHECK(bk_round_bf16(b, x, 0) == BK_OK);
done:
    free(x);
    free(want);
}

int main(void)
{
    test_named();
    backend *b = test_cpu_backend();
    CHECK(b != NULL);
    if (b) {
        test_op(b);
        b->ops->destroy(b);
    }
    return check_finish("test_round_bf16");
}
