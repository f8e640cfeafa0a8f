/* The CPU backend's ops for the Llama-style decoder (RMSNorm, SwiGLU, the
 * rotary position embedding, the repeat of the key and value heads)
 * through the harness's wrappers, against float64 references written here
 * from the definitions (Hugging Face's LlamaRMSNorm, LlamaMLP's
 * act_fn(gate) * up, apply_rotary_pos_emb with rotate_half, repeat_kv),
 * not from elementwise.h. The nonlinear backwards are held to central
 * finite differences of the float64 forward; the linear ones (rotary,
 * repeat) to being the forward's transpose: <A x, y> = <x, A^T y>.
 *
 * Tolerances as test_transformer_ops.c's: fp32 ops on inputs of order one
 * come within a few 1e-7 of float64; 1e-5 relative L2 leaves a margin of
 * ten, while a wrong term is off by 1e-2 or more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dispatch.h"
#include "elementwise.h"
#include "llama.h"
#include "rng.h"
#include "test_cpu_backend.h"

#define FD_H 1e-5
#define TOL 1e-5

static rng r = {1234};

static float *randoms(size_t n, float lo, float hi)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(&r, lo, hi);
    return v;
}

static double rel_l2(const float *got, const double *want, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)got[i] - want[i];
        num += d * d;
        den += want[i] * want[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* -------------------------------------------------------------- RMSNorm */

/* y = x / sqrt(mean(x^2) + 1e-5) * gamma per column. */
static void rms_ref(const double *x, const double *gamma, double *y, int dim, int rows)
{
    for (int c = 0; c < rows; c++) {
        const double *xc = x + (size_t)c * dim;
        double sq = 0;
        for (int i = 0; i < dim; i++)
            sq += xc[i] * xc[i];
        double rs = 1.0 / sqrt(sq / dim + 1e-5);
        for (int i = 0; i < dim; i++)
            y[(size_t)c * dim + i] = xc[i] * rs * gamma[i];
    }
}

/* sum w * y, the loss the finite differences differentiate. */
static double rms_loss(const double *x, const double *gamma, const float *w, int dim, int rows)
{
    size_t n = (size_t)dim * rows;
    double *y = malloc(n * sizeof *y), loss = 0;
    rms_ref(x, gamma, y, dim, rows);
    for (size_t i = 0; i < n; i++)
        loss += w[i] * y[i];
    free(y);
    return loss;
}

/* d loss / d v for each element of v (x or gamma), by central differences. */
static void rms_fd(double *x, double *gamma, double *v, size_t nv, const float *w, int dim,
                   int rows, double *out)
{
    for (size_t i = 0; i < nv; i++) {
        double keep = v[i];
        v[i] = keep + FD_H;
        double up = rms_loss(x, gamma, w, dim, rows);
        v[i] = keep - FD_H;
        double down = rms_loss(x, gamma, w, dim, rows);
        v[i] = keep;
        out[i] = (up - down) / (2 * FD_H);
    }
}

static void test_rmsnorm(backend *b, int dim, int rows, int finite_diff)
{
    size_t n = (size_t)dim * rows;
    float *x = randoms(n, -2, 2), *gamma = randoms((size_t)dim, 0.5f, 1.5f);
    float *y = malloc(n * sizeof *y), *rstd = malloc((size_t)rows * sizeof *rstd);
    float *dy = randoms(n, -1, 1), *dgamma = randoms((size_t)dim, -1, 1);
    float *dx = randoms(n, -1, 1);
    float *dx0 = malloc(n * sizeof *dx0), *dgamma0 = malloc((size_t)dim * sizeof *dgamma0);
    memcpy(dx0, dx, n * sizeof *dx);
    memcpy(dgamma0, dgamma, (size_t)dim * sizeof *dgamma);
    double *xd = malloc(n * sizeof *xd), *gd = malloc((size_t)dim * sizeof *gd);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    for (int i = 0; i < dim; i++)
        gd[i] = gamma[i];
    rms_ref(xd, gd, want, dim, rows);
    CHECK(bk_rmsnorm_forward(b, x, gamma, y, rstd, dim, rows) == BK_OK);
    CHECK(rel_l2(y, want, n) < TOL);
    CHECK(bk_rmsnorm_backward(b, dy, x, gamma, rstd, dx, dgamma, dim, rows) == BK_OK);
    if (finite_diff) {
        /* The op adds into dx and dgamma: what it added is the gradient. */
        double *gx = malloc(n * sizeof *gx), *gg = malloc((size_t)dim * sizeof *gg);
        rms_fd(xd, gd, xd, n, dy, dim, rows, gx);
        rms_fd(xd, gd, gd, (size_t)dim, dy, dim, rows, gg);
        for (size_t i = 0; i < n; i++)
            dx[i] -= dx0[i];
        for (int i = 0; i < dim; i++)
            dgamma[i] -= dgamma0[i];
        CHECK(rel_l2(dx, gx, n) < 1e-4);
        CHECK(rel_l2(dgamma, gg, (size_t)dim) < 1e-4);
        free(gx);
        free(gg);
    }
    free(x), free(gamma), free(y), free(rstd), free(dy), free(dgamma), free(dx), free(dx0);
    free(dgamma0), free(xd), free(gd), free(want);
}

/* --------------------------------------------------------------- SwiGLU */

static double silu(double g) { return g / (1 + exp(-g)); }

static void test_swiglu(backend *b, size_t n)
{
    float *g = randoms(n, -8, 8), *u = randoms(n, -2, 2), *h = malloc(n * sizeof *h);
    float *dh = randoms(n, -1, 1), *dg = malloc(n * sizeof *dg), *du = malloc(n * sizeof *du);
    double *want = malloc(n * sizeof *want), *wg = malloc(n * sizeof *wg);
    double *wu = malloc(n * sizeof *wu);
    for (size_t i = 0; i < n; i++) {
        want[i] = silu(g[i]) * u[i];
        /* d(silu(g) u)/dg and /du by central differences of the float64. */
        wg[i] = dh[i] * (silu(g[i] + FD_H) - silu(g[i] - FD_H)) / (2 * FD_H) * u[i];
        wu[i] = dh[i] * silu(g[i]);
    }
    CHECK(bk_swiglu_forward(b, g, u, h, n) == BK_OK);
    CHECK(rel_l2(h, want, n) < TOL);
    CHECK(bk_swiglu_backward(b, g, u, dh, dg, du, n) == BK_OK);
    CHECK(rel_l2(dg, wg, n) < 1e-4);
    CHECK(rel_l2(du, wu, n) < TOL);
    /* dgate may be dh itself. */
    CHECK(bk_swiglu_backward(b, g, u, dh, dh, du, n) == BK_OK);
    CHECK(rel_l2(dh, wg, n) < 1e-4);
    CHECK(rel_l2(du, wu, n) < TOL);
    free(g), free(u), free(h), free(dh), free(dg), free(du), free(want), free(wg), free(wu);
}

/* --------------------------------------------------------------- rotary */

/* Hugging Face's apply_rotary_pos_emb on rows [0, heads * hd) of each
 * column: q * cos + rotate_half(q) * sin, rotate_half(q) = (-q2, q1), the
 * angle of element e (and e + hd/2) pos / theta^(2e / hd). */
static void rotary_ref(const float *x, double *y, int ld, int heads, int hd, int t, int cols,
                       double theta)
{
    int half = hd / 2;
    for (int c = 0; c < cols; c++)
        for (int h = 0; h < heads; h++)
            for (int e = 0; e < hd; e++) {
                int pair = e < half ? e + half : e - half, f = e < half ? e : e - half;
                double angle = (c % t) / pow(theta, 2.0 * f / hd);
                const float *head = x + (size_t)c * ld + (size_t)h * hd;
                double rot = e < half ? -head[pair] : head[pair];
                y[(size_t)c * ld + (size_t)h * hd + e] = head[e] * cos(angle) + rot * sin(angle);
            }
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* cols columns of sequences of t: a whole number of sequences, or not. */
static void test_rotary(backend *b, int heads, int hd, int t, int cols, int extra_rows,
                        float theta)
{
    int ld = heads * hd + extra_rows;
    size_t n = (size_t)ld * cols;
    float *x = randoms(n, -1, 1), *x0 = malloc(n * sizeof *x0), *y = randoms(n, -1, 1);
    float *y0 = malloc(n * sizeof *y0);
    double *want = malloc(n * sizeof *want);
    memcpy(x0, x, n * sizeof *x);
    memcpy(y0, y, n * sizeof *y);
    rotary_ref(x, want, ld, heads, hd, t, cols, theta);
    CHECK(bk_rotary_forward(b, x, ld, heads, hd, t, cols, theta) == BK_OK);
    /* The rows past the heads are left alone. */
    int untouched = 1;
    for (int c = 0; c < cols; c++) {
        for (int i = heads * hd; i < ld; i++)
            untouched &= x[(size_t)c * ld + i] == x0[(size_t)c * ld + i];
        for (int i = 0; i < heads * hd; i++) {
            float got = x[(size_t)c * ld + i];
            x[(size_t)c * ld + i] = (float)(got - want[(size_t)c * ld + i]);
        }
    }
    CHECK(untouched);
    double err = 0, den = 0;
    for (int c = 0; c < cols; c++)
        for (int i = 0; i < heads * hd; i++) {
            double e = x[(size_t)c * ld + i], w = want[(size_t)c * ld + i];
            err += e * e;
            den += w * w;
        }
    CHECK(sqrt(err / den) < TOL);
    /* <R x0, y0> = <x0, R^T y0>. */
    memcpy(x, x0, n * sizeof *x);
    CHECK(bk_rotary_forward(b, x, ld, heads, hd, t, cols, theta) == BK_OK);
    CHECK(bk_rotary_backward(b, y, ld, heads, hd, t, cols, theta) == BK_OK);
    double a = dot(x, y0, n), c = dot(x0, y, n);
    CHECK(fabs(a - c) < 1e-5 * (fabs(a) + 1));
    free(x), free(x0), free(y), free(y0), free(want);
}

/* Rotate_half by hand: head [1, 0, 0, 0] at position 1 and theta 10000
 * turns its first pair by 1 radian: [cos 1, 0, sin 1, 0]; the second pair
 * (frequency 1/100) of [0, 1, 0, 0] by 0.01 radian. */
static void test_rotary_by_hand(backend *b)
{
    float x[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}; /* 4 columns, t = 2 */
    CHECK(bk_rotary_forward(b, x, 4, 1, 4, 2, 4, 10000.0f) == BK_OK);
    CHECK_NEAR(x[8], 1.0f, 1e-7); /* position 0: unturned */
    CHECK_NEAR(x[12 + 1], cosf(0.01f), 1e-6);
    CHECK_NEAR(x[12 + 3], sinf(0.01f), 1e-6);
    float y[8] = {0, 0, 0, 0, 1, 0, 0, 0}; /* t = 2: the second column is position 1 */
    CHECK(bk_rotary_forward(b, y, 4, 1, 4, 2, 2, 10000.0f) == BK_OK);
    CHECK_NEAR(y[4], cosf(1.0f), 1e-6);
    CHECK_NEAR(y[5], 0.0f, 1e-7);
    CHECK_NEAR(y[6], sinf(1.0f), 1e-6);
    CHECK_NEAR(y[7], 0.0f, 1e-7);
}

/* ------------------------------------------------------------ repeat_kv */

static void test_repeat_kv(backend *b, int hd, int kv_heads, int group, int cols)
{
    int parts = 2, qd = kv_heads * group * hd, kvd = kv_heads * hd, ld = 3 * qd;
    size_t nkv = (size_t)parts * kvd * cols, nd = (size_t)ld * cols;
    float *kv = randoms(nkv, -1, 1), *dst = randoms(nd, -1, 1), *dd = randoms(nd, -1, 1);
    float *dkv = randoms(nkv, -1, 1), *dst0 = malloc(nd * sizeof *dst0);
    memcpy(dst0, dst, nd * sizeof *dst);
    /* Into rows [qd, 3 qd) of a [3 qd x cols] buffer, as the Llama's k and v. */
    CHECK(bk_repeat_kv_forward(b, kv, dst + qd, ld, hd, kv_heads, group, parts, cols) == BK_OK);
    int ok = 1;
    for (int c = 0; c < cols; c++)
        for (int i = 0; i < ld; i++) {
            float got = dst[(size_t)c * ld + i];
            if (i < qd) {
                ok &= got == dst0[(size_t)c * ld + i];
                continue;
            }
            int p = (i - qd) / qd, h = (i - qd) % qd / hd, e = (i - qd) % hd;
            size_t from = (size_t)c * parts * kvd + (size_t)p * kvd + (size_t)(h / group) * hd;
            ok &= got == kv[from + (size_t)e];
        }
    CHECK(ok);
    /* The backward is the forward's transpose: the sum over each group. */
    CHECK(bk_repeat_kv_backward(b, dd + qd, ld, dkv, hd, kv_heads, group, parts, cols) == BK_OK);
    double a = 0;
    for (int c = 0; c < cols; c++)
        for (int i = qd; i < ld; i++)
            a += (double)dst[(size_t)c * ld + i] * dd[(size_t)c * ld + i];
    CHECK(fabs(a - dot(kv, dkv, nkv)) < 1e-5 * (fabs(a) + 1));
    free(kv), free(dst), free(dd), free(dkv), free(dst0);
}

int main(void)
{
    backend *b = test_cpu_backend();
    if (!b)
        return 1;
    /* The epsilon the kernels use is the one the Llama's manifest names. */
    CHECK(EW_RMSNORM_EPS == (float)LLAMA_NORM_EPS);
    test_rmsnorm(b, 13, 5, 1);
    /* Not dim 1: there x / sqrt(x^2 + eps) is flat but for eps, and its
     * gradient is all cancellation in fp32. */
    test_rmsnorm(b, 2, 3, 1);
    test_rmsnorm(b, 96, 1500, 0); /* split between threads both ways */
    test_swiglu(b, 1000);
    test_swiglu(b, 300007); /* split between threads */
    test_rotary_by_hand(b);
    test_rotary(b, 3, 8, 5, 2 * 5, 0, 10000.0f);
    test_rotary(b, 4, 6, 7, 3 * 7, 9, 500000.0f); /* rows past the heads: the qkv's k and v */
    test_rotary(b, 8, 64, 64, 4 * 64, 0, 500000.0f); /* split between threads (by position) */
    test_rotary(b, 2, 40, 9, 13, 3, 10000.0f);  /* a sequence and 4 positions of the next */
    test_rotary(b, 2, 36, 50, 30, 0, 10000.0f); /* fewer columns than positions */
    test_rotary(b, 2, 32, 16, 16 * 300, 0, 500000.0f); /* few positions, many sequences */
    test_repeat_kv(b, 4, 2, 3, 7);
    test_repeat_kv(b, 3, 1, 4, 5); /* multi-query: one kv head */
    test_repeat_kv(b, 5, 3, 1, 4); /* group 1: a plain copy */
    test_repeat_kv(b, 64, 8, 4, 300); /* split between threads */
    b->ops->destroy(b);
    return check_finish("test_llama_ops");
}
