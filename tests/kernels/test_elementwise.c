/* The shared per-element math against double-precision references. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "elementwise.h"

static double gelu_ref(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static void test_exp_tanh(void)
{
    double worst_exp = 0, worst_tanh = 0;
    for (double xd = -80; xd <= 80; xd += 0.01) {
        float xf = (float)xd;
        double x = xf; /* judge the function, not the rounding of its input */
        double e = exp(x), rel = fabs(ew_exp(xf) - e) / e;
        if (rel > worst_exp)
            worst_exp = rel;
        double t = tanh(x), err = fabs(ew_tanh(xf) - t) / (fabs(t) > 1e-30 ? fabs(t) : 1);
        if (err > worst_tanh)
            worst_tanh = err;
    }
    CHECK(worst_exp < 1e-6);
    CHECK(worst_tanh < 1e-6);
    CHECK(ew_exp(-1000.0f) == 0.0f);
    CHECK(ew_tanh(50.0f) == 1.0f && ew_tanh(-50.0f) == -1.0f);
    CHECK(ew_tanh(0.0f) == 0.0f);
}

/* The edges, against libm's expf: infinities, NaN, and finite inputs past
 * where exp overflows or underflows (subnormal results included). The
 * bit trick's exponent must never be formed from such an input: a NaN
 * cast to int is INT_MIN, whose shift UBSan catches. */
static void test_exp_edges(void)
{
    CHECK(ew_exp(-INFINITY) == 0.0f);
    CHECK(isinf(ew_exp(INFINITY)) && ew_exp(INFINITY) > 0);
    CHECK(isnan(ew_exp(NAN)));
    CHECK(isnan(ew_exp(-NAN)));
    CHECK(isnan(ew_tanh(NAN)));
    static const float edge[] = {88.0f, 88.5f, 88.72f, 88.73f, 89.0f, 100.0f, 1e30f,
                                 FLT_MAX, -87.0f, -87.5f, -90.0f, -95.0f, -100.0f,
                                 -103.0f, -103.9f, -104.0f, -110.0f, -1e30f, -FLT_MAX};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        float x = edge[i], got = ew_exp(x), want = expf(x);
        if (isinf(want)) {
            CHECK(isinf(got) && got > 0);
        } else if (want < FLT_MIN) { /* subnormal or 0: within a few of its steps */
            CHECK(fabsf(got - want) <= 4 * 0x1p-149f);
            CHECK(got >= 0.0f);
        } else {
            CHECK(fabsf(got - want) <= 1e-6f * want);
        }
    }
}

static void test_gelu(void)
{
    double worst = 0, worst_grad = 0;
    for (double x = -8; x <= 8; x += 0.003) {
        double err = fabs(ew_gelu((float)x) - gelu_ref(x));
        if (err > worst)
            worst = err;
        /* the derivative against a central difference of the reference */
        double h = 1e-5, fd = (gelu_ref(x + h) - gelu_ref(x - h)) / (2 * h);
        double gerr = fabs(ew_gelu_grad((float)x) - fd);
        if (gerr > worst_grad)
            worst_grad = gerr;
    }
    CHECK(worst < 2e-6);
    CHECK(worst_grad < 2e-5);
}

static void test_softmax_xent(void)
{
    float logits[5] = {1.0f, -2.0f, 0.5f, 3.0f, 0.0f}, d[5];
    float loss = ew_softmax_xent(logits, d, 5, 3, 1, 0.25f);
    double sum = 0;
    for (int c = 0; c < 5; c++)
        sum += exp(logits[c]);
    CHECK_NEAR(loss, log(sum) - 3.0, 1e-6);
    double dsum = 0;
    for (int c = 0; c < 5; c++) {
        double p = exp(logits[c]) / sum;
        CHECK_NEAR(d[c], (p - (c == 3)) * 0.25, 1e-7);
        dsum += d[c];
    }
    CHECK_NEAR(dsum, 0.0, 1e-7);
    /* padding contributes nothing */
    CHECK(ew_softmax_xent(logits, d, 5, 3, 0, 0.25f) == 0.0f);
    for (int c = 0; c < 5; c++)
        CHECK(d[c] == 0.0f);
    /* huge logits stay finite */
    float big[2] = {1e4f, -1e4f};
    loss = ew_softmax_xent(big, d, 2, 1, 1, 1.0f);
    CHECK(isfinite(loss) && loss > 1e4f * 1.99f);
}

static void test_adamw(void)
{
    adamw_hparams h = {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                       .weight_decay = 0.01f, .bias_correction1 = 0.1f,
                       .bias_correction2 = 0.001f};
    float w = 2.0f, m = 0.0f, v = 0.0f;
    ew_adamw(&w, 0.5f, &m, &v, &h);
    /* first step: mhat = g, vhat = g^2, so the update is lr * (sign(g) + wd w) */
    CHECK_NEAR(m, 0.05, 1e-7);
    CHECK_NEAR(v, 0.00025, 1e-8); /* (1 - 0.999) is inexact in fp32 */
    CHECK_NEAR(w, 2.0 - 0.1 * (1.0 + 0.01 * 2.0), 1e-6);
    /* 200 steps of varied gradients against the textbook update in double:
     * the fused arrangement changes roundings only. */
    double wd = 0.3, md = 0.0, vd = 0.0;
    float wf = 0.3f, mf = 0.0f, vf = 0.0f;
    double worst = 0.0;
    for (int t = 1; t <= 200; t++) {
        double g = 0.02 * sin(0.7 * t) + 0.001 * (t % 7) - 0.003;
        adamw_hparams ht = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
                            .weight_decay = 0.01f,
                            .bias_correction1 = (float)(1.0 - pow(0.9, t)),
                            .bias_correction2 = (float)(1.0 - pow(0.999, t))};
        md = 0.9 * md + 0.1 * g;
        vd = 0.999 * vd + 0.001 * g * g;
        double mhat = md / (1.0 - pow(0.9, t)), vhat = vd / (1.0 - pow(0.999, t));
        wd -= 1e-2 * (mhat / (sqrt(vhat) + 1e-8) + 0.01 * wd);
        ew_adamw(&wf, (float)g, &mf, &vf, &ht);
        double err = fabs(wf - wd) / fabs(wd);
        worst = err > worst ? err : worst;
    }
    CHECK(worst < 1e-5);
    if (worst >= 1e-5)
        fprintf(stderr, "  adamw over 200 steps: relative error %.3g\n", worst);
    float ws = 1.0f;
    ew_sgd(&ws, 0.5f, 0.1f, 0.0f);
    CHECK_NEAR(ws, 0.95, 1e-7);
}

static void test_bf16(void)
{
    CHECK(ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(1.0f)) == 1.0f);
    /* 1 + 2^-8 lies exactly between two bf16 values: ties go to even (1.0) */
    CHECK(ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(1.00390625f)) == 1.0f);
    CHECK(ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(1.01171875f)) == 1.015625f);
    CHECK(isnan(ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(NAN))));
    float x = 3.14159f, r = ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(x));
    CHECK(fabsf(r - x) / x < 1.0f / 256);
}

int main(void)
{
    test_exp_tanh();
    test_exp_edges();
    test_gelu();
    test_softmax_xent();
    test_adamw();
    test_bf16();
    return check_finish("test_elementwise");
}
