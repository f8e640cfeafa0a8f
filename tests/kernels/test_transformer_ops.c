/* The CPU backend's transformer ops (LayerNorm, causal softmax, embeddings,
 * residual add, the heads' arrangement) through the harness's wrappers, against float64 references
 * written here from the definitions (not from elementwise.h), and each
 * backward pass against central finite differences of the float64 forward.
 *
 * Tolerances. The ops compute in fp32 (unit roundoff 6e-8); a column's sums
 * over at most a few hundred terms carry a relative error of a few 1e-7 on
 * random data, so a relative L2 error of 1e-5 against float64 leaves a
 * margin of ten and more, while a real bug (a missing term, a wrong scale,
 * a transposed index) is off by 1e-2 or more. The finite differences run in
 * float64 with h = 1e-5 on inputs of order one: truncation error ~h^2 =
 * 1e-10 and cancellation ~1e-16 / h = 1e-11, both far below the fp32 error
 * of the op they judge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dispatch.h"
#include "rng.h"
#include "test_cpu_backend.h"

#define FD_H 1e-5
#define TOL 1e-5

static rng r = {2024};

static float *randoms(size_t n, float lo, float hi)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(&r, lo, hi);
    return v;
}

static double *doubles(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

/* Relative L2 error of got against want (absolute when want is all zero). */
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

/* ------------------------------------------------------------ LayerNorm */

/* y = (x - mean) / sqrt(var + 1e-5) * gamma + beta per column, biased var. */
static void ln_ref(const double *x, const double *gamma, const double *beta, double *y,
                   double *mean, double *rstd, int dim, int rows)
{
    for (int c = 0; c < rows; c++) {
        const double *xc = x + (size_t)c * dim;
        double mu = 0, var = 0;
        for (int i = 0; i < dim; i++)
            mu += xc[i];
        mu /= dim;
        for (int i = 0; i < dim; i++)
            var += (xc[i] - mu) * (xc[i] - mu);
        var /= dim;
        double rs = 1.0 / sqrt(var + 1e-5);
        for (int i = 0; i < dim; i++)
            y[(size_t)c * dim + i] = (xc[i] - mu) * rs * gamma[i] + beta[i];
        if (mean)
            mean[c] = mu;
        if (rstd)
            rstd[c] = rs;
    }
}

/* The loss the finite differences differentiate: sum w * y. */
static double ln_loss(const double *x, const double *gamma, const double *beta,
                      const float *w, int dim, int rows)
{
    size_t n = (size_t)dim * rows;
    double *y = doubles(n), loss = 0;
    ln_ref(x, gamma, beta, y, NULL, NULL, dim, rows);
    for (size_t i = 0; i < n; i++)
        loss += w[i] * y[i];
    free(y);
    return loss;
}

/* Central difference of ln_loss along every element of v (x, gamma or beta). */
static void ln_fd(double *x, double *gamma, double *beta, double *v, size_t nv,
                  const float *w, int dim, int rows, double *grad)
{
    for (size_t i = 0; i < nv; i++) {
        double keep = v[i];
        v[i] = keep + FD_H;
        double up = ln_loss(x, gamma, beta, w, dim, rows);
        v[i] = keep - FD_H;
        double down = ln_loss(x, gamma, beta, w, dim, rows);
        v[i] = keep;
        grad[i] = (up - down) / (2 * FD_H);
    }
}

/* The input gradient by the Jacobian of one column, written out:
 * dy_k/dx_i = gamma_k rstd (delta_ki - 1/dim - xhat_k xhat_i / dim). */
static void ln_dx_ref(const double *x, const double *gamma, const float *dy, int dim,
                      int rows, double *dx)
{
    double *xhat = doubles((size_t)dim), *unused = doubles((size_t)dim);
    double *zero = doubles((size_t)dim), *one = doubles((size_t)dim);
    for (int i = 0; i < dim; i++)
        one[i] = 1;
    for (int c = 0; c < rows; c++) {
        double rs;
        ln_ref(x + (size_t)c * dim, one, zero, xhat, unused, &rs, dim, 1);
        for (int i = 0; i < dim; i++) {
            double s = 0;
            for (int k = 0; k < dim; k++)
                s += dy[(size_t)c * dim + k] * gamma[k] * rs *
                     ((k == i) - 1.0 / dim - xhat[k] * xhat[i] / dim);
            dx[(size_t)c * dim + i] = s;
        }
    }
    free(xhat);
    free(unused);
    free(zero);
    free(one);
}

static void test_layernorm(backend *b, int dim, int rows, float offset, int finite_diff)
{
    size_t n = (size_t)dim * rows;
    float *x = randoms(n, offset - 2, offset + 2), *gamma = randoms((size_t)dim, 0.5f, 1.5f);
    float *beta = randoms((size_t)dim, -0.5f, 0.5f), *dy = randoms(n, -1, 1);
    float *y = randoms(n, -9, 9), *mean = randoms((size_t)rows, -9, 9);
    float *rstd = randoms((size_t)rows, -9, 9);
    /* The gradients start non-zero: the op adds into them. */
    float *dx0 = randoms(n, -1, 1), *dg0 = randoms((size_t)dim, -1, 1);
    float *db0 = randoms((size_t)dim, -1, 1);
    float *dx = malloc(n * 4), *dg = malloc((size_t)dim * 4), *db = malloc((size_t)dim * 4);
    memcpy(dx, dx0, n * 4);
    memcpy(dg, dg0, (size_t)dim * 4);
    memcpy(db, db0, (size_t)dim * 4);

    double *xd = doubles(n), *gd = doubles((size_t)dim), *bd = doubles((size_t)dim);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    for (int i = 0; i < dim; i++) {
        gd[i] = gamma[i];
        bd[i] = beta[i];
    }
    double *y_ref = doubles(n), *mean_ref = doubles((size_t)rows);
    double *rstd_ref = doubles((size_t)rows);
    ln_ref(xd, gd, bd, y_ref, mean_ref, rstd_ref, dim, rows);

    CHECK(bk_layernorm_forward(b, x, gamma, beta, y, mean, rstd, dim, rows) == BK_OK);
    CHECK(rel_l2(y, y_ref, n) < TOL);
    CHECK(rel_l2(mean, mean_ref, (size_t)rows) < TOL);
    CHECK(rel_l2(rstd, rstd_ref, (size_t)rows) < TOL);

    /* The backward reads the forward's mean and rstd (fp32, as the model
     * keeps them). */
    CHECK(bk_layernorm_backward(b, dy, x, gamma, mean, rstd, dx, dg, db, dim, rows) == BK_OK);
    double *dx_ref = doubles(n), *dg_ref = doubles((size_t)dim), *db_ref = doubles((size_t)dim);
    ln_dx_ref(xd, gd, dy, dim, rows, dx_ref);
    for (int c = 0; c < rows; c++)
        for (int i = 0; i < dim; i++) {
            size_t k = (size_t)c * dim + i;
            double xhat = (xd[k] - mean_ref[c]) * rstd_ref[c];
            dg_ref[i] += dy[k] * xhat;
            db_ref[i] += dy[k];
        }
    /* Take away what the gradients started from: the rest is the op's. */
    float *dx_op = malloc(n * 4), *dg_op = malloc((size_t)dim * 4),
          *db_op = malloc((size_t)dim * 4);
    for (size_t i = 0; i < n; i++)
        dx_op[i] = (float)((double)dx[i] - dx0[i]);
    for (int i = 0; i < dim; i++) {
        dg_op[i] = (float)((double)dg[i] - dg0[i]);
        db_op[i] = (float)((double)db[i] - db0[i]);
    }
    /* The subtraction costs up to one ulp of the starting value: held to
     * the same relative error over the whole vector. */
    CHECK(rel_l2(dx_op, dx_ref, n) < 2 * TOL);
    CHECK(rel_l2(dg_op, dg_ref, (size_t)dim) < 2 * TOL);
    CHECK(rel_l2(db_op, db_ref, (size_t)dim) < 2 * TOL);

    if (finite_diff) {
        double *fd = doubles(n);
        ln_fd(xd, gd, bd, xd, n, dy, dim, rows, fd);
        CHECK(rel_l2(dx_op, fd, n) < 2 * TOL);
        ln_fd(xd, gd, bd, gd, (size_t)dim, dy, dim, rows, fd);
        CHECK(rel_l2(dg_op, fd, (size_t)dim) < 2 * TOL);
        ln_fd(xd, gd, bd, bd, (size_t)dim, dy, dim, rows, fd);
        CHECK(rel_l2(db_op, fd, (size_t)dim) < 2 * TOL);
        free(fd);
    }
    free(x), free(gamma), free(beta), free(dy), free(y), free(mean), free(rstd);
    free(dx0), free(dg0), free(db0), free(dx), free(dg), free(db);
    free(xd), free(gd), free(bd), free(y_ref), free(mean_ref), free(rstd_ref);
    free(dx_ref), free(dg_ref), free(db_ref), free(dx_op), free(dg_op), free(db_op);
}

/* One feature: x - mean is 0, so y = beta and no gradient reaches x. */
static void test_layernorm_dim1(backend *b)
{
    float x[3] = {5, -2, 0.5f}, gamma = 3, beta = 0.25f, y[3], mean[3], rstd[3];
    float dy[3] = {1, 2, 3}, dx[3] = {0}, dg = 0, db = 0;
    CHECK(bk_layernorm_forward(b, x, &gamma, &beta, y, mean, rstd, 1, 3) == BK_OK);
    for (int c = 0; c < 3; c++) {
        CHECK(y[c] == 0.25f);
        CHECK(mean[c] == x[c]);
        CHECK_NEAR(rstd[c], 1 / sqrt(1e-5), 1e-2);
    }
    CHECK(bk_layernorm_backward(b, dy, x, &gamma, mean, rstd, dx, &dg, &db, 1, 3) == BK_OK);
    CHECK(dx[0] == 0 && dx[1] == 0 && dx[2] == 0);
    CHECK(dg == 0 && db == 6);
}

/* ------------------------------------------------------- causal softmax */

/* p[j, i] = exp(scale s[j, i]) / sum_{j' <= i} exp(scale s[j', i]), j <= i. */
static void softmax_ref(const double *s, double *p, double scale, int t, int count)
{
    for (size_t c = 0; c < (size_t)count * t; c++) {
        int i = (int)(c % (size_t)t);
        const double *col = s + c * t;
        double m = -INFINITY, sum = 0;
        for (int j = 0; j <= i; j++)
            m = fmax(m, scale * col[j]);
        for (int j = 0; j <= i; j++)
            sum += exp(scale * col[j] - m);
        for (int j = 0; j < t; j++)
            p[c * t + j] = j <= i ? exp(scale * col[j] - m) / sum : 0;
    }
}

static double softmax_loss(const double *s, const float *w, double scale, int t, int count)
{
    size_t n = (size_t)count * t * t;
    double *p = doubles(n), loss = 0;
    softmax_ref(s, p, scale, t, count);
    for (size_t i = 0; i < n; i++)
        loss += w[i] * p[i];
    free(p);
    return loss;
}

/* The softmax gradient against a reference. Scores of order one: relative
 * error TOL. Scores spread far apart (range > 10) make each column nearly
 * one-hot, and then ds = scale p (dp - sum p dp) is a difference of numbers
 * of size |dp| that nearly cancel: fp32 can only promise an absolute error
 * of a few ulps of |scale dp| <= |scale| per seen key. */
static int backward_close(const float *ds, const double *want, size_t n, int t, float scale,
                          float range)
{
    if (range <= 10)
        return rel_l2(ds, want, n) < TOL;
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs(ds[i] - want[i]));
    return worst < 4.0 * t * 6e-8 * fabs(scale);
}

static void test_causal_softmax(backend *b, int t, int count, float scale, float range,
                                int finite_diff)
{
    size_t n = (size_t)count * t * t;
    float *s = randoms(n, -range, range), *p = randoms(n, -9, 9);
    float *dp = randoms(n, -1, 1), *ds = randoms(n, -9, 9);
    double *sd = doubles(n), *p_ref = doubles(n);
    /* Above the diagonal the scores are NaN or +-1e30 (which a max or a
     * sum over them would not survive): the op must never read them. The
     * gradients there are large: the op must ignore them. */
    const float unseen[3] = {NAN, 1e30f, -1e30f};
    for (size_t c = 0; c < (size_t)count * t; c++)
        for (int j = (int)(c % (size_t)t) + 1; j < t; j++) {
            s[c * t + j] = unseen[j % 3];
            dp[c * t + j] = 1e3f;
        }
    for (size_t i = 0; i < n; i++)
        sd[i] = s[i];
    softmax_ref(sd, p_ref, scale, t, count);

    CHECK(bk_causal_softmax_forward(b, s, p, scale, t, count) == BK_OK);
    CHECK(rel_l2(p, p_ref, n) < TOL);
    int above_zero = 1;
    double worst_sum = 0;
    for (size_t c = 0; c < (size_t)count * t; c++) {
        int i = (int)(c % (size_t)t);
        double sum = 0;
        for (int j = 0; j < t; j++) {
            if (j > i)
                above_zero &= p[c * t + j] == 0.0f; /* exactly zero, not NaN */
            sum += p[c * t + j];
        }
        worst_sum = fmax(worst_sum, fabs(sum - 1));
    }
    CHECK(above_zero);
    CHECK(worst_sum < 1e-5); /* about t ulps of the largest term at most */

    /* Backward from the op's own probabilities (as the model runs it). The
     * reference: ds_k = sum_j dp_j dp_j/ds_k, dp_j/ds_k = scale p_j
     * (delta_jk - p_k), over the seen keys. */
    CHECK(bk_causal_softmax_backward(b, p, dp, ds, scale, t, count) == BK_OK);
    double *ds_ref = doubles(n);
    for (size_t c = 0; c < (size_t)count * t; c++) {
        int i = (int)(c % (size_t)t);
        for (int k = 0; k <= i; k++) {
            double g = 0;
            for (int j = 0; j <= i; j++)
                g += dp[c * t + j] * scale * p_ref[c * t + j] *
                     ((j == k) - p_ref[c * t + k]);
            ds_ref[c * t + k] = g;
        }
    }
    CHECK(backward_close(ds, ds_ref, n, t, scale, range));
    above_zero = 1;
    for (size_t c = 0; c < (size_t)count * t; c++)
        for (int j = (int)(c % (size_t)t) + 1; j < t; j++)
            above_zero &= ds[c * t + j] == 0.0f;
    CHECK(above_zero);

    /* In place over dprobs: the same numbers, bit for bit. */
    float *inplace = malloc(n * 4);
    memcpy(inplace, dp, n * 4);
    CHECK(bk_causal_softmax_backward(b, p, inplace, inplace, scale, t, count) == BK_OK);
    CHECK(memcmp(inplace, ds, n * 4) == 0);

    if (finite_diff) {
        /* d/ds of sum_{j <= i} dp p, the seen entries only. */
        double *fd = doubles(n);
        for (size_t k = 0; k < n; k++) {
            if ((int)(k % (size_t)t) > (int)((k / (size_t)t) % (size_t)t))
                continue; /* above the diagonal: no dependence, fd stays 0 */
            double keep = sd[k];
            sd[k] = keep + FD_H;
            double up = softmax_loss(sd, dp, scale, t, count);
            sd[k] = keep - FD_H;
            double down = softmax_loss(sd, dp, scale, t, count);
            sd[k] = keep;
            fd[k] = (up - down) / (2 * FD_H);
        }
        CHECK(backward_close(ds, fd, n, t, scale, range));
        free(fd);
    }
    free(s), free(p), free(dp), free(ds), free(sd), free(p_ref), free(ds_ref), free(inplace);
}

/* ----------------------------------------------------------- embeddings */

static void test_embedding(backend *b, int dim, int vocab, int t, int batch, int same_token)
{
    size_t cols = (size_t)t * batch, n = cols * dim;
    size_t nte = (size_t)dim * vocab, npe = (size_t)dim * t;
    float *wte = randoms(nte, -1, 1), *wpe = randoms(npe, -1, 1), *out = randoms(n, -9, 9);
    float *dout = randoms(n, -1, 1);
    float *dwte0 = randoms(nte, -1, 1), *dwpe0 = randoms(npe, -1, 1);
    float *dwte = malloc(nte * 4), *dwpe = malloc(npe * 4);
    memcpy(dwte, dwte0, nte * 4);
    memcpy(dwpe, dwpe0, npe * 4);
    int *tokens = malloc(cols * sizeof *tokens);
    /* Few distinct ids (or one): every id repeats within a micro-batch. */
    for (size_t c = 0; c < cols; c++)
        tokens[c] = same_token ? vocab - 1 : rng_below(&r, vocab < 5 ? vocab : 5) * 3 % vocab;

    CHECK(bk_embedding_forward(b, tokens, wte, wpe, out, dim, t, batch) == BK_OK);
    double *want = doubles(n);
    for (size_t c = 0; c < cols; c++)
        for (int i = 0; i < dim; i++)
            want[c * dim + i] = (double)wte[(size_t)tokens[c] * dim + i] +
                                wpe[(c % (size_t)t) * dim + i];
    CHECK(rel_l2(out, want, n) < 1e-7); /* one rounding of an exact sum */

    CHECK(bk_embedding_backward(b, tokens, dout, dwte, dwpe, dim, t, batch) == BK_OK);
    /* The reference: for each entry of the tables, the sum over the columns
     * that read it; and the finite difference of L = sum dout * out, which
     * is linear, so h = 1 is exact up to rounding. */
    double *gte = doubles(nte), *gpe = doubles(npe);
    for (int v = 0; v < vocab; v++)
        for (int i = 0; i < dim; i++) {
            double g = 0;
            for (size_t c = 0; c < cols; c++)
                g += tokens[c] == v ? dout[c * dim + i] : 0;
            gte[(size_t)v * dim + i] = g + dwte0[(size_t)v * dim + i];
        }
    for (int p = 0; p < t; p++)
        for (int i = 0; i < dim; i++) {
            double g = 0;
            for (int q = 0; q < batch; q++)
                g += dout[((size_t)q * t + p) * dim + i];
            gpe[(size_t)p * dim + i] = g + dwpe0[(size_t)p * dim + i];
        }
    CHECK(rel_l2(dwte, gte, nte) < TOL);
    CHECK(rel_l2(dwpe, gpe, npe) < TOL);

    if (dim * vocab <= 4096) {
        double *fd = doubles(nte);
        for (size_t e = 0; e < nte; e++) {
            double up = 0, down = 0;
            for (size_t c = 0; c < cols; c++)
                for (int i = 0; i < dim; i++) {
                    size_t k = (size_t)tokens[c] * dim + i;
                    double base = (double)wte[k] + wpe[(c % (size_t)t) * dim + i];
                    up += dout[c * dim + i] * (base + (k == e));
                    down += dout[c * dim + i] * (base - (k == e));
                }
            fd[e] = (up - down) / 2 + dwte0[e];
        }
        CHECK(rel_l2(dwte, fd, nte) < TOL);
        free(fd);
    }
    free(wte), free(wpe), free(out), free(dout), free(dwte0), free(dwpe0), free(dwte);
    free(dwpe), free(tokens), free(want), free(gte), free(gpe);
}

/* ------------------------------------------------------------ residual */

static void test_add(backend *b, size_t n)
{
    float *y = randoms(n, -1, 1), *x = randoms(n, -1, 1);
    double *want = doubles(n);
    for (size_t i = 0; i < n; i++)
        want[i] = (float)((double)y[i] + x[i]); /* fp32 addition is correctly rounded */
    CHECK(bk_add(b, y, x, n) == BK_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += (double)y[i] != want[i];
    CHECK(wrong == 0);
    /* y += y doubles y: the op allows the alias. */
    CHECK(bk_add(b, y, y, n) == BK_OK);
    wrong = 0;
    for (size_t i = 0; i < n; i++)
        wrong += (double)y[i] != 2 * want[i];
    CHECK(wrong == 0);
    free(y), free(x), free(want);
}

/* ------------------------------------------------------ head arrangement */

/* The tokens' [parts * heads * hd x batch * t] into per-head [hd x t]
 * blocks and back, against the index formula written out here; dst starts
 * as NaN, so an element the op never writes fails. */
static void test_permute_heads(backend *b, int hd, int heads, int t, int batch, int parts)
{
    size_t width = (size_t)parts * heads * hd, n = width * (size_t)batch * t;
    float *x = randoms(n, -1, 1), *y = malloc(n * sizeof *y), *back = malloc(n * sizeof *back);
    for (size_t i = 0; i < n; i++)
        y[i] = back[i] = NAN;
    CHECK(bk_permute_heads(b, x, y, hd, heads, t, batch, parts, 0) == BK_OK);
    size_t wrong = 0;
    for (int p = 0; p < parts; p++)
        for (int q = 0; q < batch; q++)
            for (int h = 0; h < heads; h++)
                for (int i = 0; i < t; i++)
                    for (int e = 0; e < hd; e++) {
                        size_t blk = (((size_t)p * batch + q) * heads + h) * t * hd +
                                     (size_t)i * hd + e;
                        size_t tok = ((size_t)q * t + i) * width + ((size_t)p * heads + h) * hd + e;
                        wrong += !(y[blk] == x[tok]);
                    }
    CHECK(wrong == 0);
    CHECK(bk_permute_heads(b, y, back, hd, heads, t, batch, parts, 1) == BK_OK);
    CHECK(memcmp(back, x, n * sizeof *x) == 0);
    free(x), free(y), free(back);
}

/* Softmax cross-entropy over `classes` (below and above the op's vector
 * width, with a tail) for `count` examples, one in three padding, against
 * float64: each loss, their sum, and (softmax - onehot) * scale. */
static void test_softmax_xent(backend *b, int classes, int count, float range)
{
    size_t n = (size_t)classes * (size_t)count;
    float *l = randoms(n, -range, range), *dl = randoms(n, 5, 6), loss = 1.5f;
    float scale = 0.125f;
    int *labels = malloc((size_t)count * sizeof *labels);
    int *valid = malloc((size_t)count * sizeof *valid);
    double *want = doubles(n), want_loss = 1.5;
    for (int j = 0; j < count; j++) {
        labels[j] = (j * 7919) % classes;
        valid[j] = j % 3 != 1;
        const float *x = l + (size_t)j * classes;
        double mx = x[0], sum = 0;
        for (int c = 1; c < classes; c++)
            mx = x[c] > mx ? x[c] : mx;
        for (int c = 0; c < classes; c++)
            sum += exp(x[c] - mx);
        for (int c = 0; c < classes && valid[j]; c++)
            want[(size_t)j * classes + c] = (exp(x[c] - mx) / sum - (c == labels[j])) * scale;
        if (valid[j])
            want_loss += log(sum) + mx - x[labels[j]];
    }
    CHECK(bk_softmax_xent(b, l, dl, labels, valid, &scale, &loss, classes, count) == BK_OK);
    CHECK(rel_l2(dl, want, n) < TOL);
    CHECK_NEAR(loss, want_loss, TOL * fabs(want_loss));
    for (int j = 0; j < count; j++)
        for (int c = 0; c < classes && !valid[j]; c++)
            CHECK(dl[(size_t)j * classes + c] == 0.0f);
    free(l), free(dl), free(labels), free(valid), free(want);
}

int main(void)
{
    /* The ops' splits between threads: by column, by feature. */
    backend *b = test_cpu_backend();
    if (!b)
        return 1;
    test_layernorm(b, 13, 5, 0, 1);
    test_layernorm(b, 64, 7, 10, 1); /* a mean far from zero */
    test_layernorm(b, 96, 1500, 0, 0); /* split between threads both ways */
    test_layernorm(b, 70, 1100, 3, 0); /* four vector blocks and a tail of 6 */
    test_layernorm_dim1(b);
    test_causal_softmax(b, 1, 3, 1, 1, 1);
    test_causal_softmax(b, 7, 3, 0.35f, 3, 1);
    test_causal_softmax(b, 5, 2, -1, 100, 1); /* the max is over the scaled scores */
    test_causal_softmax(b, 64, 48, 0.125f, 8, 0); /* split between threads */
    test_embedding(b, 5, 7, 4, 3, 0);
    test_embedding(b, 6, 3, 5, 4, 1); /* one token everywhere */
    test_embedding(b, 1024, 50, 64, 4, 0); /* split between threads */
    test_add(b, 1000);
    test_add(b, 300007);
    test_permute_heads(b, 1, 1, 1, 1, 1);
    test_permute_heads(b, 4, 3, 5, 2, 3);   /* q, k, v: three parts */
    test_permute_heads(b, 8, 4, 16, 3, 1);  /* one part: the heads' outputs */
    test_permute_heads(b, 64, 12, 64, 5, 3); /* split between threads */
    test_softmax_xent(b, 2, 5, 1);
    test_softmax_xent(b, 37, 9, 4);      /* a tail past the vector lanes */
    test_softmax_xent(b, 2048, 70, 30);  /* the gpt-cpu vocabulary; split between threads */
    test_softmax_xent(b, 1000, 3, 200);  /* logits far apart: the max matters */
    b->ops->destroy(b);
    return check_finish("test_transformer_ops");
}
