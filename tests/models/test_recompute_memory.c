/* What recomputation frees and what it costs, worked out by hand for
 * preset S and the gpt-cpu shape (profiles/gpt-cpu.profile), against
 * model_memory_need and model_recompute_flops; and which kinds can run
 * which recompute value (their registry rows). That the need is what is
 * allocated, to the byte, under every value, is the contract test's. */
#include <string.h>

#include "check.h"
#include "model.h"
#include "test_spec.h"

static memory_need need_at(model_spec s, recompute r, int micro)
{
    memory_need n;
    s.recompute = r;
    model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, micro, 256, 2, &n);
    return n;
}

static double flops_at(model_spec s, recompute r, int examples)
{
    s.recompute = r;
    return model_recompute_flops(&s, examples);
}

/* Preset S at micro 64, fp32: a [1024 x 64] activation is 262,144 bytes.
 *   none:  5 z + 4 h + 2 gradient buffers = 11 of them = 2,883,584
 *   gelu:  the 4 hidden h recomputed:        7          = 1,835,008
 *   block: the 4 hidden z recomputed:        7          = 1,835,008
 * (a block of the MLP is one hidden layer: it keeps z or h, the same
 * bytes). Over 64 examples, gelu recomputes 4 x 1024 x 64 GELU elements
 * (8 FLOPs each: 2,097,152); block 4 GEMMs of 2 x 1024 x 1024 x 64
 * (536,870,912). Only the activations change. */
static void test_mlp_s(void)
{
    model_spec s = test_spec("S");
    memory_need none = need_at(s, RECOMPUTE_NONE, 64), gelu = need_at(s, RECOMPUTE_GELU, 64),
                block = need_at(s, RECOMPUTE_BLOCK, 64);
    CHECK(none.activations == 2883584);
    CHECK(gelu.activations == 1835008);
    CHECK(block.activations == 1835008);
    CHECK(none.total - gelu.total == 2883584 - 1835008);
    CHECK(gelu.total == block.total);
    CHECK(none.weights == gelu.weights && none.inputs == block.inputs);
    CHECK(flops_at(s, RECOMPUTE_NONE, 64) == 0);
    CHECK(flops_at(s, RECOMPUTE_GELU, 64) == 2097152.0);
    CHECK(flops_at(s, RECOMPUTE_BLOCK, 64) == 536870912.0);
    /* The useful work is the same whatever is recomputed. */
    model_spec g = s;
    g.recompute = RECOMPUTE_BLOCK;
    CHECK(model_flops_per_step(&g, 64) == model_flops_per_step(&s, 64));
}

/* gpt:d=128,layers=4,heads=4,seq=64,vocab=2048 at micro 4 (N = 256
 * tokens), fp32: u = [128 x 256] = 131,072 bytes; LayerNorm statistics
 * 2,048; scores [64 x 64 x 4 x 4] = 262,144. The head runs in chunks of
 * 2 sequences (128 tokens, decoder_head.c): its input and input gradient
 * [128 x 128] 65,536 each, statistics 1,024, logits and their gradient
 * [2048 x 128] 1,048,576 each: 2,229,248.
 *   model-wide: 11 u + head + scores              = 3,933,184
 *   a block:    16 u + 2 statistics + probabilities = 2,363,392
 *   none:  3,933,184 + 4 x 2,363,392              = 13,386,752
 *   gelu:  each block without its GELU output (4 u) = 11,289,600
 *   block: block 0's buffers serve every block; the others keep their
 *          output (u) alone: 3,933,184 + 2,363,392 + 3 u = 6,689,792
 * Over 16 sequences (1,024 tokens), gelu recomputes 4 d GELU elements a
 * token and block (8 FLOPs each: 16,777,216); block also each block's
 * forward but its last projection, 16 d^2 + 4 d T FLOPs a token
 * (1,207,959,552). */
static void test_gpt_cpu(void)
{
    model_spec s = test_spec("gpt:d=128,layers=4,heads=4,seq=64,vocab=2048");
    CHECK(need_at(s, RECOMPUTE_NONE, 4).activations == 13386752);
    CHECK(need_at(s, RECOMPUTE_GELU, 4).activations == 11289600);
    CHECK(need_at(s, RECOMPUTE_BLOCK, 4).activations == 6689792);
    CHECK(flops_at(s, RECOMPUTE_NONE, 16) == 0);
    CHECK(flops_at(s, RECOMPUTE_GELU, 16) == 16777216.0);
    CHECK(flops_at(s, RECOMPUTE_BLOCK, 16) == 1207959552.0 + 16777216.0);
}

/* The activations grow linearly with the micro-batch under each value;
 * a GPT's fall none > gelu > block from 2 blocks on (one block: block
 * keeps what none does, its one block being the buffers every block
 * shares), an MLP's none > gelu = block. */
static void test_order_and_linear_in_micro(void)
{
    const char *shapes[] = {"gpt-tiny", "gpt:d=64,layers=1,heads=2,seq=16,vocab=64", "S",
                            "mlp:hidden=32,layers=1,classes=4"};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        model_spec s = test_spec(shapes[i]);
        size_t at2[RECOMPUTE_ROWS];
        for (recompute r = 0; r < RECOMPUTE_ROWS; r++) {
            size_t one = need_at(s, r, 1).activations, three = need_at(s, r, 3).activations;
            CHECK(three == 3 * one);
            at2[r] = need_at(s, r, 2).activations;
        }
        CHECK(at2[RECOMPUTE_NONE] > at2[RECOMPUTE_GELU]);
        if (strcmp(s.kind->name, "mlp") == 0)
            CHECK(at2[RECOMPUTE_GELU] == at2[RECOMPUTE_BLOCK]);
        else if (s.dims[1] > 1)
            CHECK(at2[RECOMPUTE_GELU] > at2[RECOMPUTE_BLOCK]);
        else
            CHECK(at2[RECOMPUTE_BLOCK] == at2[RECOMPUTE_NONE]);
    }
}

/* The registry's rows say what each kind can run: the MLP and the GPT
 * every value, the linear classifier none alone, and a refusal names the
 * kind and what it can run. */
static void test_capabilities(void)
{
    char why[200];
    model_spec m = test_spec("S"), g = test_spec("gpt-tiny"),
               l = test_spec("linear:in=8,classes=3");
    for (recompute r = 0; r < RECOMPUTE_ROWS; r++) {
        m.recompute = g.recompute = l.recompute = r;
        CHECK(model_can_recompute(&m, why, sizeof why));
        CHECK(model_can_recompute(&g, why, sizeof why));
        CHECK(model_can_recompute(&l, why, sizeof why) == (r == RECOMPUTE_NONE));
    }
    l.recompute = RECOMPUTE_GELU;
    CHECK(!model_can_recompute(&l, why, sizeof why));
    CHECK(strcmp(why, "model kind linear cannot recompute gelu (it can: none)") == 0);
    l.recompute = RECOMPUTE_NONE;
    CHECK(flops_at(l, RECOMPUTE_NONE, 8) == 0);
}

int main(void)
{
    test_mlp_s();
    test_gpt_cpu();
    test_order_and_linear_in_micro();
    test_capabilities();
    return check_finish("test_recompute_memory");
}
