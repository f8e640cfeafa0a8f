/* Per-element math shared by every backend.
 *
 * The CPU backend loops over these bodies; the CUDA backend launches
 * grid-stride kernels around the same bodies. What the CPU tests prove about
 * the math therefore holds for the GPU. Under gcc the CUDA qualifiers are
 * empty macros. */
#ifndef ACCUBENCH_ELEMENTWISE_H
#define ACCUBENCH_ELEMENTWISE_H

#include <math.h>

#include "optimizer_hparams.h"

#ifdef __CUDACC__
#define EW_FN static inline __host__ __device__
#else
#define EW_FN static inline
#endif

/* exp and tanh written out (Cephes single-precision algorithms, about 2 ulp)
 * rather than called from libm: branch-free, so a CPU compiler vectorises
 * the loops around them, and the GPU computes the very same function. */
EW_FN float ew_exp(float x)
{
    /* Ternaries, not fminf/fmaxf: those stay library calls in a CPU loop. */
    x = x < -87.3f ? -87.3f : x > 88.7f ? 88.7f : x;
    /* x = n ln2 + r, |r| <= ln2/2; ln2 split in two for an exact product. */
    float fn = x * 1.44269504088896341f;
    int n = (int)(fn + 0.5f) - (fn < -0.5f); /* round to nearest */
    float r = x - (float)n * 0.693359375f + (float)n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    union { float f; int i; } scale;
    scale.i = (n + 127) << 23;
    return p * scale.f;
}

EW_FN float ew_tanh(float x)
{
    float ax = fabsf(x);
    /* Small |x|: odd polynomial; else 1 - 2 / (exp(2|x|) + 1). */
    float z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z -
                     5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
                   3.33332819422e-1f) * z * x + x;
    float big = 1.0f - 2.0f / (ew_exp(2.0f * ax) + 1.0f);
    big = x < 0.0f ? -big : big;
    return ax < 0.625f ? small : big;
}

/* GELU, tanh approximation (as GPT-2 and llm.c use). */
#define EW_GELU_SCALE 0.7978845608028654f /* sqrt(2/pi) */
#define EW_GELU_CUBIC 0.044715f

EW_FN float ew_gelu(float x)
{
    float inner = EW_GELU_SCALE * (x + EW_GELU_CUBIC * x * x * x);
    return 0.5f * x * (1.0f + ew_tanh(inner));
}

/* d gelu(x) / dx, the exact derivative of the approximation above. */
EW_FN float ew_gelu_grad(float x)
{
    float inner = EW_GELU_SCALE * (x + EW_GELU_CUBIC * x * x * x);
    float t = ew_tanh(inner);
    float sech2 = 1.0f - t * t;
    float dinner = EW_GELU_SCALE * (1.0f + 3.0f * EW_GELU_CUBIC * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * sech2 * dinner;
}

/* Softmax cross-entropy for one example: logits[0..classes) in `stride`
 * steps. Returns the example's loss and writes (softmax - onehot) * scale
 * into dlogits. An invalid (padding) example contributes nothing: loss 0 and
 * a zero gradient. The max-subtraction keeps exp() finite for any logits. */
EW_FN float ew_softmax_xent(const float *logits, float *dlogits, int classes,
                            int label, int valid, float scale)
{
    if (!valid) {
        for (int c = 0; c < classes; c++)
            dlogits[c] = 0.0f;
        return 0.0f;
    }
    float maxv = logits[0];
    for (int c = 1; c < classes; c++)
        maxv = logits[c] > maxv ? logits[c] : maxv;
    float sum = 0.0f;
    for (int c = 0; c < classes; c++)
        sum += ew_exp(logits[c] - maxv);
    float log_sum = logf(sum);
    for (int c = 0; c < classes; c++) {
        float p = ew_exp(logits[c] - maxv - log_sum);
        dlogits[c] = (p - (c == label ? 1.0f : 0.0f)) * scale;
    }
    return log_sum + maxv - logits[label];
}

/* AdamW (decoupled weight decay) on one parameter. */
EW_FN void ew_adamw(float *w, float g, float *m, float *v, const adamw_hparams *h)
{
    float mi = h->beta1 * *m + (1.0f - h->beta1) * g;
    float vi = h->beta2 * *v + (1.0f - h->beta2) * g * g;
    *m = mi;
    *v = vi;
    float mhat = mi / h->bias_correction1;
    float vhat = vi / h->bias_correction2;
    *w -= h->lr * (mhat / (sqrtf(vhat) + h->eps) + h->weight_decay * *w);
}

/* Plain SGD with decoupled weight decay. */
EW_FN void ew_sgd(float *w, float g, float lr, float weight_decay)
{
    *w -= lr * (g + weight_decay * *w);
}

/* bf16 <-> fp32 by bit manipulation, round to nearest even, NaN kept NaN.
 * Shared so that the CPU tests can reason about the GPU's rounding. */
EW_FN unsigned short ew_f32_to_bf16_bits(float f)
{
    union { float f; unsigned int u; } x;
    x.f = f;
    if ((x.u & 0x7fffffffu) > 0x7f800000u)
        return (unsigned short)((x.u >> 16) | 0x40u); /* quiet NaN */
    unsigned int rounding = 0x7fffu + ((x.u >> 16) & 1u);
    return (unsigned short)((x.u + rounding) >> 16);
}

EW_FN float ew_bf16_bits_to_f32(unsigned short b)
{
    union { float f; unsigned int u; } x;
    x.u = (unsigned int)b << 16;
    return x.f;
}

#endif
