/* The memory need on hostile shapes: every dimension at or near its limit
 * makes products past 2^64, and the need must never wrap into a small
 * number that "fits". It saturates at MEMORY_NEED_MAX and says so
 * (memory_need.saturated); below that it stays exact, the sum of its
 * parts. */
#include <stdint.h>

#include "check.h"
#include "model_need.h"
#include "test_spec.h"

/* About 4.5e20 bytes at micro 2^20: 96 layers of 1024 heads' 32768^2
 * attention scores, far past 2^64 (where attention is not fused). */
#define HUGE_GPT "gpt:d=1024,layers=96,heads=1024,seq=32768,vocab=2"

static void test_huge_shape_saturates(void)
{
    model_spec s = test_spec(HUGE_GPT);
    memory_need n;
    model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 1 << 20, 1 << 20, 3, &n);
    CHECK(n.saturated);
    CHECK(n.total == MEMORY_NEED_MAX);
    CHECK(n.total <= (size_t)INT64_MAX); /* the CSV's column is signed */
    /* Fused attention keeps no scores: about 2.3e17 bytes, exact. */
    s.fused_attention = 1;
    model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 1 << 20, 1 << 20, 3, &n);
    CHECK(!n.saturated && n.total > (size_t)1 << 57 && n.total < (size_t)1 << 58);
    CHECK(n.total == n.weights + n.master_copy + n.gradients + n.optimizer_state +
                         n.activations + n.loss_sum + n.inputs);
}

/* Growing the micro-batch never makes the need smaller: no wraparound at
 * any size, and the need is flagged exactly when it reached the cap. */
static void test_need_grows_with_micro(void)
{
    model_spec s = test_spec(HUGE_GPT);
    size_t before = 0;
    for (int micro = 1; micro <= 1 << 20; micro *= 2) {
        memory_need n;
        model_memory_need(&s, DTYPE_BF16, OPT_ADAMW, micro, 1 << 20, 3, &n);
        CHECK(n.total >= before);
        CHECK(n.saturated == (n.total == MEMORY_NEED_MAX));
        if (!n.saturated)
            CHECK(n.total == n.weights + n.master_copy + n.gradients + n.optimizer_state +
                                 n.activations + n.loss_sum + n.inputs);
        before = n.total;
    }
    CHECK(before == MEMORY_NEED_MAX);
}

/* An ordinary shape is not flagged. */
static void test_small_shape_exact(void)
{
    model_spec s = test_spec("gpt-tiny");
    memory_need n;
    model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 4, 16, 3, &n);
    CHECK(!n.saturated);
    CHECK(n.total > 0 && n.total < MEMORY_NEED_MAX);
}

int main(void)
{
    test_huge_shape_saturates();
    test_need_grows_with_micro();
    test_small_shape_exact();
    return check_finish("test_memory_limits");
}
