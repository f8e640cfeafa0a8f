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
    /* Ternaries, not fminf/fmaxf: those stay library calls in a CPU loop.
     * Past 89 every float overflows and below -104 every one underflows to
     * 0, so clamping there loses nothing (and takes the infinities); a NaN
     * becomes 0 for the arithmetic, since its cast to int below would be
     * INT_MIN and its exponent a shift of a negative value, and is given
     * back at the end. */
    int is_nan = x != x;
    float c = x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;
    c = is_nan ? 0.0f : c;
    /* c = n ln2 + r, |r| <= ln2/2; ln2 split in two for an exact product. */
    float fn = c * 1.44269504088896341f;
    int n = (int)(fn + 0.5f) - (fn < -0.5f); /* round to nearest */
    float r = c - (float)n * 0.693359375f + (float)n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* 2^n as two normal powers of two (n in [-150, 128], each half in
     * [-75, 64]): p * 2^half is exact, and the second product rounds once,
     * to infinity above the float range and to a subnormal or 0 below it.
     * Within the range this is p * 2^n, bit for bit. */
    int half = n / 2;
    union { float f; int i; } s1, s2;
    s1.i = (half + 127) << 23;
    s2.i = (n - half + 127) << 23;
    float e = p * s1.f * s2.f;
    return is_nan ? x : e;
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

/* 0.5 (1 + tanh(u)) is the logistic sigmoid of 2u: one exponential and one
 * division, where tanh took an exponential, a division and a polynomial
 * (both of its branches run in a vector loop). In (0, 1), so no
 * cancellation near u = 0; exp(-2u) overflowing to infinity gives 0. */
EW_FN float ew_gelu_sigmoid(float x)
{
    float inner = EW_GELU_SCALE * (x + EW_GELU_CUBIC * x * x * x);
    return 1.0f / (1.0f + ew_exp(-2.0f * inner));
}

EW_FN float ew_gelu(float x)
{
    return x * ew_gelu_sigmoid(x);
}

/* d gelu(x) / dx, the exact derivative of the approximation above:
 * s + x s (1 - s) 2 du/dx, s the sigmoid of 2u (0.5 (1 - tanh^2 u) =
 * 2 s (1 - s)). */
EW_FN float ew_gelu_grad(float x)
{
    float s = ew_gelu_sigmoid(x);
    float dinner = EW_GELU_SCALE * (1.0f + 3.0f * EW_GELU_CUBIC * x * x);
    return s + 2.0f * x * s * (1.0f - s) * dinner;
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

/* AdamW (decoupled weight decay) on one parameter, arranged as PyTorch's
 * fused AdamW arranges it: the bias corrections folded into two scalars of
 * the step (lr / bc1 and 1 / sqrt(bc2), which a loop over the parameters
 * computes once), so that each parameter costs one square root and one
 * division rather than three divisions, and the CPU's update runs at the
 * memory's pace. Mathematically lr * (mhat / (sqrt(vhat) + eps) + wd * w). */
EW_FN void ew_adamw(float *w, float g, float *m, float *v, const adamw_hparams *h)
{
    float mi = h->beta1 * *m + (1.0f - h->beta1) * g;
    float vi = h->beta2 * *v + (1.0f - h->beta2) * g * g;
    *m = mi;
    *v = vi;
    float step_size = h->lr / h->bias_correction1;
    float inv_sqrt_bc2 = 1.0f / sqrtf(h->bias_correction2);
    float denom = sqrtf(vi) * inv_sqrt_bc2 + h->eps;
    *w -= step_size * mi / denom + h->lr * h->weight_decay * *w;
}

/* Plain SGD with decoupled weight decay. */
EW_FN void ew_sgd(float *w, float g, float lr, float weight_decay)
{
    *w -= lr * (g + weight_decay * *w);
}

/* ------------------------------------------------------------ transformer
 *
 * The per-row ops (LayerNorm, causal softmax) reduce over a column and then
 * write every element from the reduction. Each is written here as its
 * pieces: the per-element terms that are summed, the scalars computed from
 * the sums, and the per-element output. A backend sums the terms in its own
 * order (the CPU one after the other, the GPU across a warp's lanes); every
 * other operation is the same function on both. The ew_*_column functions
 * put the pieces together for a whole fp32 column, one element after the
 * other: the CPU backend's bodies. */

/* LayerNorm's epsilon, PyTorch's default (nn.LayerNorm, GPT-2). */
#define EW_LAYERNORM_EPS 1e-5f

/* 1 / sqrt(variance + eps) from the sum of squared deviations over dim
 * elements: the biased variance, as PyTorch normalises. */
EW_FN float ew_layernorm_rstd(float sq_dev_sum, int dim)
{
    return 1.0f / sqrtf(sq_dev_sum / (float)dim + EW_LAYERNORM_EPS);
}

/* y = xhat * gamma + beta, xhat = (x - mean) * rstd. */
EW_FN float ew_layernorm_xhat(float x, float mean, float rstd)
{
    return (x - mean) * rstd;
}

EW_FN float ew_layernorm_out(float x, float mean, float rstd, float gamma, float beta)
{
    return ew_layernorm_xhat(x, mean, rstd) * gamma + beta;
}

/* The input gradient of one element, from g = dy * gamma (the gradient on
 * xhat), the column means of g and of g * xhat:
 * dx = rstd (g - mean(g) - xhat mean(g xhat)). */
EW_FN float ew_layernorm_dx(float g, float xhat, float rstd, float g_mean, float gx_mean)
{
    return rstd * (g - g_mean - xhat * gx_mean);
}

/* LayerNorm forward of one column x[0..dim): y, and the column's mean and
 * rstd. Two passes (mean, then squared deviations), so that a large mean
 * costs no precision in the variance. */
EW_FN void ew_layernorm_column(const float *x, const float *gamma, const float *beta,
                               float *y, float *mean_out, float *rstd_out, int dim)
{
    float sum = 0.0f;
    for (int i = 0; i < dim; i++)
        sum += x[i];
    float mean = sum / (float)dim;
    float sq = 0.0f;
    for (int i = 0; i < dim; i++) {
        float d = x[i] - mean;
        sq += d * d;
    }
    float rstd = ew_layernorm_rstd(sq, dim);
    for (int i = 0; i < dim; i++)
        y[i] = ew_layernorm_out(x[i], mean, rstd, gamma[i], beta[i]);
    *mean_out = mean;
    *rstd_out = rstd;
}

/* LayerNorm backward of one column: dx[0..dim) += the input gradient.
 * (The parameter gradients sum over columns: the backend's job.) */
EW_FN void ew_layernorm_backward_column(const float *dy, const float *x, const float *gamma,
                                        float mean, float rstd, float *dx, int dim)
{
    float g_sum = 0.0f, gx_sum = 0.0f;
    for (int i = 0; i < dim; i++) {
        float g = dy[i] * gamma[i];
        g_sum += g;
        gx_sum += g * ew_layernorm_xhat(x[i], mean, rstd);
    }
    float g_mean = g_sum / (float)dim, gx_mean = gx_sum / (float)dim;
    for (int i = 0; i < dim; i++)
        dx[i] += ew_layernorm_dx(dy[i] * gamma[i], ew_layernorm_xhat(x[i], mean, rstd), rstd,
                                 g_mean, gx_mean);
}

/* RMSNorm (the Llama's): y = x rstd gamma, rstd = 1 / sqrt(mean(x^2) +
 * eps), no mean taken and no bias. eps is Llama 3's rms_norm_eps. */
#define EW_RMSNORM_EPS 1e-5f

EW_FN float ew_rmsnorm_rstd(float sq_sum, int dim)
{
    return 1.0f / sqrtf(sq_sum / (float)dim + EW_RMSNORM_EPS);
}

/* The input gradient of one element from g = dy * gamma, xhat = x rstd
 * and the column mean of g xhat: dx = rstd (g - xhat mean(g xhat)). */
EW_FN float ew_rmsnorm_dx(float g, float xhat, float rstd, float gx_mean)
{
    return rstd * (g - xhat * gx_mean);
}

/* RMSNorm forward of one fp32 column: y, and the column's rstd. */
EW_FN float ew_rmsnorm_column(const float *x, const float *gamma, float *y, int dim)
{
    float sq = 0.0f;
    for (int i = 0; i < dim; i++)
        sq += x[i] * x[i];
    float rstd = ew_rmsnorm_rstd(sq, dim);
    for (int i = 0; i < dim; i++)
        y[i] = x[i] * rstd * gamma[i];
    return rstd;
}

/* RMSNorm backward of one column: dx[0..dim) += the input gradient. */
EW_FN void ew_rmsnorm_backward_column(const float *dy, const float *x, const float *gamma,
                                      float rstd, float *dx, int dim)
{
    float gx_sum = 0.0f;
    for (int i = 0; i < dim; i++)
        gx_sum += dy[i] * gamma[i] * x[i] * rstd;
    float gx_mean = gx_sum / (float)dim;
    for (int i = 0; i < dim; i++)
        dx[i] += ew_rmsnorm_dx(dy[i] * gamma[i], x[i] * rstd, rstd, gx_mean);
}

/* SwiGLU (the Llama's MLP): h = silu(gate) up, silu(g) = g sigmoid(g).
 * exp(-g) overflowing to infinity gives a sigmoid of 0, as it should. */
EW_FN float ew_sigmoid(float x)
{
    return 1.0f / (1.0f + ew_exp(-x));
}

EW_FN float ew_swiglu(float gate, float up)
{
    return gate * ew_sigmoid(gate) * up;
}

/* d h / d gate, over dh: dh up silu'(g), silu'(g) = s (1 + g (1 - s)). */
EW_FN float ew_swiglu_dgate(float gate, float up, float dh)
{
    float sg = ew_sigmoid(gate);
    return dh * up * sg * (1.0f + gate * (1.0f - sg));
}

EW_FN float ew_swiglu_dup(float gate, float dh)
{
    return dh * gate * ew_sigmoid(gate);
}

/* Rotary position embedding, Hugging Face's convention (rotate_half): the
 * head's element e and e + hd/2 (e < hd/2) turn by pos * inv_freq(e),
 * inv_freq(e) = 1 / theta^(2e / hd), held in fp32 as LlamaRotaryEmbedding
 * holds it. It is worked out in double and rounded once, so that the CPU
 * and the GPU hold the same float: their powf differ by up to 4 ulp
 * (CUDA's bound), and the angle multiplies that by the position, 1e-4
 * radians at position 2047, ten times the fp32 check's tolerance. */
EW_FN float ew_rotary_inv_freq(int e, int hd, float theta)
{
    return (float)(1.0 / pow((double)theta, (double)(2 * e) / (double)hd));
}

EW_FN float ew_rotary_angle(int pos, int e, int hd, float theta)
{
    return (float)pos * ew_rotary_inv_freq(e, hd, theta);
}

/* (a, b) = (a cos - b sin, b cos + a sin): the forward with sin, the
 * backward (the transpose) with -sin. */
EW_FN void ew_rotate(float *a, float *b, float cosv, float sinv)
{
    float x1 = *a, x2 = *b;
    *a = x1 * cosv - x2 * sinv;
    *b = x2 * cosv + x1 * sinv;
}

/* Causal softmax of query i's column (keys j = 0..t-1): keys j <= i are
 * seen. The scale multiplies the scores before the max is taken, so that
 * any sign of scale is right. */
EW_FN float ew_causal_softmax_exp(float score, float scale, float scaled_max)
{
    return ew_exp(score * scale - scaled_max);
}

/* p[j] from its exponential term and 1 / the column's sum; exactly 0 above
 * the diagonal (j > i), whatever the score there. */
EW_FN float ew_causal_softmax_prob(float e, float inv_sum, int j, int i)
{
    return j <= i ? e * inv_sum : 0.0f;
}

/* dscores[j] = scale p[j] (dp[j] - sum_j' p[j'] dp[j']); 0 above the diagonal. */
EW_FN float ew_causal_softmax_dscore(float p, float dp, float dot, float scale, int j, int i)
{
    return j <= i ? scale * p * (dp - dot) : 0.0f;
}

/* Query i's column of t scores into probabilities. Scores above the
 * diagonal are never read. The exponentials wait in probs for the sum: one
 * ew_exp per score, not two, in a loop of its own that the compiler
 * vectorises. */
EW_FN void ew_causal_softmax_column(const float *scores, float *probs, float scale, int i,
                                    int t)
{
    float maxv = scores[0] * scale;
    for (int j = 1; j <= i; j++)
        maxv = scores[j] * scale > maxv ? scores[j] * scale : maxv;
    for (int j = 0; j <= i; j++)
        probs[j] = ew_causal_softmax_exp(scores[j], scale, maxv);
    float sum = 0.0f;
    for (int j = 0; j <= i; j++)
        sum += probs[j];
    float inv_sum = 1.0f / sum;
    for (int j = 0; j < t; j++)
        probs[j] = j <= i ? ew_causal_softmax_prob(probs[j], inv_sum, j, i) : 0.0f;
}

/* Query i's column of the backward pass. dscores may alias dprobs: every
 * dprobs[j] is read (for the dot product) before any dscores[j] is written,
 * and then each element is read just before it is overwritten. */
EW_FN void ew_causal_softmax_backward_column(const float *probs, const float *dprobs,
                                             float *dscores, float scale, int i, int t)
{
    float dot = 0.0f;
    for (int j = 0; j <= i; j++)
        dot += probs[j] * dprobs[j];
    for (int j = 0; j < t; j++)
        dscores[j] = ew_causal_softmax_dscore(probs[j], dprobs[j], dot, scale, j, i);
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

/* f as a bf16 would hold it, in fp32: the same rounding as the bf16
 * weight copy, so that an accumulator rounded with it holds what a bf16
 * buffer would (backend_ops.round_bf16). */
EW_FN float ew_round_bf16(float f)
{
    return ew_bf16_bits_to_f32(ew_f32_to_bf16_bits(f));
}

#endif
