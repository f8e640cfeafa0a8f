/* The CPU backend's fused causal attention (attention_forward and
 * attention_backward) against a float64 reference written here from the
 * definitions, and the reference's gradient against central finite
 * differences of its forward. Shapes with one query block and with several
 * (a partial last one among them), a head dimension of 1 and odd ones, and
 * scores far apart (the max matters). Every output starts as NaN, so an
 * element the op never writes fails.
 *
 * Tolerances: as test_transformer_ops.c's. The op's sums run over at most a
 * few hundred fp32 terms, so a relative L2 error of 1e-5 against float64
 * leaves a margin of ten and more, while a real bug (a key past the query
 * seen, a block's keys cut short, a wrong scale) is off by 1e-2 or more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "rng.h"
#include "test_cpu_backend.h"

#define TOL 1e-5
#define FD_H 1e-5

static rng r = {77};

typedef struct shape {
    int hd, heads, t, batch;
} shape;

static size_t dim_of(shape s) { return (size_t)s.hd * s.heads; }
static size_t tokens_of(shape s) { return (size_t)s.t * s.batch; }

/* Element e of head h of token c of part p (0 q, 1 k, 2 v) in the qkv. */
static size_t qkv_at(shape s, int p, int h, size_t c, int e)
{
    return c * 3 * dim_of(s) + (size_t)p * dim_of(s) + (size_t)h * s.hd + (size_t)e;
}

static size_t y_at(shape s, int h, size_t c, int e)
{
    return c * dim_of(s) + (size_t)h * s.hd + (size_t)e;
}

/* The forward: y and the log-sum-exps, and with dy given, the gradient of
 * sum(dy * y) into dqkv (zeroed first). */
static void reference(shape s, double scale, const double *qkv, double *y, double *lse,
                      const float *dy, double *dqkv)
{
    int t = s.t, hd = s.hd;
    double *p = malloc((size_t)t * sizeof *p), *dp = malloc((size_t)t * sizeof *dp);
    if (dqkv)
        memset(dqkv, 0, 3 * dim_of(s) * tokens_of(s) * sizeof *dqkv);
    for (int q = 0; q < s.batch; q++)
        for (int h = 0; h < s.heads; h++)
            for (int i = 0; i < t; i++) {
                size_t ci = (size_t)q * t + i;
                double maxv = -INFINITY, sum = 0;
                for (int j = 0; j <= i; j++) {
                    double dot = 0;
                    for (int e = 0; e < hd; e++)
                        dot += qkv[qkv_at(s, 0, h, ci, e)] *
                               qkv[qkv_at(s, 1, h, (size_t)q * t + j, e)];
                    p[j] = scale * dot;
                    maxv = p[j] > maxv ? p[j] : maxv;
                }
                for (int j = 0; j <= i; j++)
                    sum += exp(p[j] - maxv);
                for (int j = 0; j <= i; j++)
                    p[j] = exp(p[j] - maxv) / sum;
                lse[(q * s.heads + h) * t + i] = maxv + log(sum);
                for (int e = 0; e < hd; e++) {
                    double acc = 0;
                    for (int j = 0; j <= i; j++)
                        acc += p[j] * qkv[qkv_at(s, 2, h, (size_t)q * t + j, e)];
                    y[y_at(s, h, ci, e)] = acc;
                }
                if (!dqkv)
                    continue;
                double pdp = 0;
                for (int j = 0; j <= i; j++) {
                    size_t cj = (size_t)q * t + j;
                    dp[j] = 0;
                    for (int e = 0; e < hd; e++) {
                        double g = dy[y_at(s, h, ci, e)];
                        dp[j] += g * qkv[qkv_at(s, 2, h, cj, e)];
                        dqkv[qkv_at(s, 2, h, cj, e)] += p[j] * g;
                    }
                    pdp += p[j] * dp[j];
                }
                for (int j = 0; j <= i; j++) {
                    size_t cj = (size_t)q * t + j;
                    double ds = scale * p[j] * (dp[j] - pdp);
                    for (int e = 0; e < hd; e++) {
                        dqkv[qkv_at(s, 0, h, ci, e)] += ds * qkv[qkv_at(s, 1, h, cj, e)];
                        dqkv[qkv_at(s, 1, h, cj, e)] += ds * qkv[qkv_at(s, 0, h, ci, e)];
                    }
                }
            }
    free(p), free(dp);
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

static float *filled(size_t n, float lo, float hi)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = lo == hi ? lo : rng_uniform(&r, lo, hi);
    return v;
}

/* The reference's gradient against central differences of its forward's
 * sum(dy * y), every element of the qkv: the reference checks itself. */
static void check_reference_gradient(shape s, double scale, double *qkv, const float *dy,
                                     const double *want)
{
    size_t n = 3 * dim_of(s) * tokens_of(s), ny = dim_of(s) * tokens_of(s);
    double *y = malloc(ny * sizeof *y), *lse = malloc(tokens_of(s) * s.heads * sizeof *lse);
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double keep = qkv[i], up = 0, down = 0;
        qkv[i] = keep + FD_H;
        reference(s, scale, qkv, y, lse, NULL, NULL);
        for (size_t k = 0; k < ny; k++)
            up += dy[k] * y[k];
        qkv[i] = keep - FD_H;
        reference(s, scale, qkv, y, lse, NULL, NULL);
        for (size_t k = 0; k < ny; k++)
            down += dy[k] * y[k];
        qkv[i] = keep;
        double fd = (up - down) / (2 * FD_H), diff = want[i] - fd;
        num += diff * diff;
        den += fd * fd;
    }
    CHECK(den > 0 && sqrt(num / den) < 1e-6);
    free(y), free(lse);
}

static void test_attention(backend *b, shape s, float range, int finite_diff)
{
    size_t d = dim_of(s), n = tokens_of(s), nqkv = 3 * d * n, nlse = n * (size_t)s.heads;
    float scale = 1.0f / sqrtf((float)s.hd);
    float *qkv = filled(nqkv, -range, range), *dy = filled(d * n, -1, 1);
    float *y = filled(d * n, NAN, NAN), *lse = filled(nlse, NAN, NAN);
    float *dqkv = filled(nqkv, NAN, NAN);
    double *q64 = calloc(nqkv, sizeof *q64), *y64 = calloc(d * n, sizeof *y64);
    double *lse64 = calloc(nlse, sizeof *lse64), *dq64 = calloc(nqkv, sizeof *dq64);
    for (size_t i = 0; i < nqkv; i++)
        q64[i] = qkv[i];
    reference(s, scale, q64, y64, lse64, dy, dq64);
    if (finite_diff)
        check_reference_gradient(s, scale, q64, dy, dq64);

    CHECK(bk_attention_forward(b, qkv, y, lse, scale, s.hd, s.heads, s.t, s.batch) == BK_OK);
    CHECK(rel_l2(y, y64, d * n) < TOL);
    CHECK(rel_l2(lse, lse64, nlse) < TOL);
    CHECK(bk_attention_backward(b, qkv, y, lse, dy, dqkv, scale, s.hd, s.heads, s.t,
                                s.batch) == BK_OK);
    double err = rel_l2(dqkv, dq64, nqkv);
    CHECK(err < TOL);
    if (!(err < TOL))
        fprintf(stderr, "  attention hd %d heads %d t %d batch %d: dqkv error %.3g\n", s.hd,
                s.heads, s.t, s.batch, err);
    free(qkv), free(dy), free(y), free(lse), free(dqkv);
    free(q64), free(y64), free(lse64), free(dq64);
}

static void test_bf16_refused(backend *b)
{
    float v[6] = {0}, lse[1];
    CHECK(b->ops->attention_forward(b, STORAGE_BF16, v, v, lse, 1, 1, 1, 1, 1) ==
          BK_UNSUPPORTED);
    CHECK(b->ops->attention_backward(b, STORAGE_BF16, v, v, lse, v, v, 1, 1, 1, 1, 1) ==
          BK_UNSUPPORTED);
}

int main(void)
{
    /* More threads than this machine may have, so that the (sequence,
     * head) units are cut between threads on any host. */
    backend *b = test_cpu_backend();
    if (!b)
        return 1;
    test_attention(b, (shape){1, 1, 1, 1}, 1, 1);
    test_attention(b, (shape){3, 2, 5, 2}, 1, 1);
    test_attention(b, (shape){1, 3, 9, 1}, 2, 1);     /* a head dimension of 1 */
    test_attention(b, (shape){5, 2, 70, 1}, 1, 1);    /* a second, partial query block */
    test_attention(b, (shape){32, 4, 64, 3}, 1, 0);   /* gpt-cpu's heads: one block */
    test_attention(b, (shape){16, 2, 130, 2}, 1, 0);  /* three blocks, the last of 2 */
    test_attention(b, (shape){8, 3, 100, 2}, 3.5f, 0); /* scores far apart */
    test_attention(b, (shape){64, 1, 1024, 1}, 1, 0);  /* GPT-2's T and head: 16 blocks */
    test_bf16_refused(b);
    b->ops->destroy(b);
    return check_finish("test_attention");
}
