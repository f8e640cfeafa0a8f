/* The CUDA backend's per-column kernels, their very source
 * (kernels/cuda/cuda_transformer.cuh, cuda_llama_ops.cuh, cuda_norm_regs.cuh), run on the host
 * by cuda_emulation.h against float64 written here from the definitions:
 * LayerNorm and RMSNorm forward and backward (a warp a column; the
 * parameters' gradients reduced across a block in shared memory, in one
 * pass or in chunks and a second pass), the causal softmax forward and
 * backward (16-byte rows and element by element; the backward in place
 * too), in fp32 and bf16 storage. Columns shorter than a warp and several
 * of its turns long, fewer columns than a block's warps and more than the
 * grid holds (the grid-stride loops wrap), feature counts off the
 * reduction's 32. Every output starts as NaN, the scores above the
 * diagonal are NaN (never to be used), and the gradients that are added
 * to start random. Built and run by e2e_cuda_kernels_emulated.sh. */
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_emulation.h"

#include "elementwise.h"

#include "cuda_llama_ops.cuh"
#include "cuda_norm_regs.cuh"
#include "cuda_transformer.cuh"

#include "emulation_check.h"

/* Blocks of a warp-per-column kernel over `cols` columns, `warps` a block,
 * at most `cap` (the device caps a grid-stride loop's grid). */
static unsigned col_blocks(size_t cols, unsigned warps, unsigned cap)
{
    size_t b = (cols + warps - 1) / warps;
    return (unsigned)std::max<size_t>(1, std::min<size_t>(b, cap));
}

/* The column reductions' split, as reduce_chunks makes it: chunk_cols
 * columns a chunk, and the chunks that then cover cols. */
static int chunk_split(int cols, int want, int *chunk_cols)
{
    *chunk_cols = (cols + want - 1) / want;
    return (cols + *chunk_cols - 1) / *chunk_cols;
}

static std::vector<float> randoms(std::mt19937 &rng, size_t n, float lo, float hi)
{
    std::vector<float> x(n);
    std::vector<double> d(n);
    fill(rng, lo, hi, x, d);
    return x;
}

static std::vector<double> dbl(const std::vector<float> &x) { return widen(x); }

/* ---------------------------------------------------------- LayerNorm */

/* With regs the register kernels (cuda_norm_regs.cuh) at column_regs's
 * vectors a lane make y, the statistics and dx, else the loop kernels. */
template <class T>
static int layernorm(int dim, int rows, int chunks_want, unsigned cap, bool regs, unsigned seed)
{
    constexpr int V = 16 / sizeof(T);
    const int nv = regs ? column_regs(dim, V) : 0;
    const size_t n = (size_t)dim * rows;
    std::mt19937 rng(seed);
    std::vector<T> x(n), dy(n);
    std::vector<double> xd(n), dyd(n);
    fill(rng, -2.0f, 3.0f, x, xd); /* a mean away from 0 */
    fill(rng, -1.0f, 1.0f, dy, dyd);
    std::vector<float> gamma = randoms(rng, dim, 0.5f, 1.5f), beta = randoms(rng, dim, -1, 1);
    std::vector<float> dx0 = randoms(rng, n, -0.5f, 0.5f), dg0 = randoms(rng, dim, -1, 1),
                       db0 = randoms(rng, dim, -1, 1);

    std::vector<T> y = nans<T>(n);
    std::vector<float> mean(rows, NAN), rstd(rows, NAN), dx = dx0, dg = dg0, db = db0;
    const unsigned g = col_blocks(rows, ROW_WARPS, cap);
    emu_launch(g, ROW_THREADS, 0, [&] {
        if (!with_column_regs(nv, [&](auto c) {
                norm_forward_regs_kernel<T, V, decltype(c)::value, true>(
                    x.data(), gamma.data(), beta.data(), y.data(), mean.data(), rstd.data(), dim,
                    (size_t)rows);
            }))
            layernorm_forward_kernel<T>(x.data(), gamma.data(), beta.data(), y.data(),
                                        mean.data(), rstd.data(), dim, (size_t)rows);
    });
    emu_launch(g, ROW_THREADS, 0, [&] {
        if (!with_column_regs(nv, [&](auto c) {
                norm_dx_regs_kernel<T, V, decltype(c)::value, true>(
                    dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(), dx.data(), dim,
                    (size_t)rows);
            }))
            layernorm_dx_kernel<T>(dy.data(), x.data(), gamma.data(), mean.data(), rstd.data(),
                                   dx.data(), dim, (size_t)rows);
    });
    int chunk_cols, chunks = chunk_split(rows, chunks_want, &chunk_cols);
    std::vector<float> partial(2 * (size_t)chunks * dim, NAN);
    float *part = chunks > 1 ? partial.data() : nullptr;
    const unsigned gx = (unsigned)((dim + LP_FEATURES - 1) / LP_FEATURES);
    emu_launch(dim3(gx, (unsigned)chunks), dim3(LP_FEATURES, LP_LANES), 0, [&] {
        layernorm_param_partial_kernel<T>(dy.data(), x.data(), mean.data(), rstd.data(),
                                          dg.data(), db.data(), part, dim, rows, chunk_cols);
    });
    if (part)
        emu_launch(col_blocks(dim, EW_THREADS, cap), EW_THREADS, 0, [&] {
            layernorm_param_finish_kernel(part, dg.data(), db.data(), dim, chunks);
        });

    std::vector<double> ry(n), rm(rows), rr(rows), rdx = dbl(dx0), rdg = dbl(dg0),
                                                  rdb = dbl(db0);
    for (int c = 0; c < rows; c++) {
        const double *xc = &xd[(size_t)c * dim], *gc = &dyd[(size_t)c * dim];
        double mu = 0, var = 0, gm = 0, gxm = 0;
        for (int i = 0; i < dim; i++)
            mu += xc[i] / dim;
        for (int i = 0; i < dim; i++)
            var += (xc[i] - mu) * (xc[i] - mu) / dim;
        double rs = 1 / sqrt(var + EW_LAYERNORM_EPS);
        rm[c] = mu;
        rr[c] = rs;
        for (int i = 0; i < dim; i++) {
            double xh = (xc[i] - mu) * rs, gi = gc[i] * gamma[i];
            ry[(size_t)c * dim + i] = xh * gamma[i] + beta[i];
            gm += gi / dim;
            gxm += gi * xh / dim;
            rdg[i] += gc[i] * xh;
            rdb[i] += gc[i];
        }
        for (int i = 0; i < dim; i++) {
            double xh = (xc[i] - mu) * rs;
            rdx[(size_t)c * dim + i] += rs * (gc[i] * gamma[i] - gm - xh * gxm);
        }
    }
    char shape[120];
    snprintf(shape, sizeof shape, "layernorm %s dim %4d rows %2d chunks %d grid %2u%s",
             storage_name<T>(), dim, rows, chunks, g, nv ? " regs" : "");
    return judge(shape,
                 {{"y", rel(widen(y), ry)}, {"mean", rel(dbl(mean), rm)},
                  {"rstd", rel(dbl(rstd), rr)}, {"dx", rel(dbl(dx), rdx)},
                  {"dgamma", rel(dbl(dg), rdg)}, {"dbeta", rel(dbl(db), rdb)}},
                 sizeof(T) == 4 ? 1e-5 : 1e-2);
}

/* ------------------------------------------------------------ RMSNorm */

template <class T>
static int rmsnorm(int dim, int rows, int chunks_want, unsigned cap, bool regs, unsigned seed)
{
    constexpr int V = 16 / sizeof(T);
    const int nv = regs ? column_regs(dim, V) : 0;
    const size_t n = (size_t)dim * rows;
    std::mt19937 rng(seed);
    std::vector<T> x(n), dy(n);
    std::vector<double> xd(n), dyd(n);
    fill(rng, -2.0f, 2.0f, x, xd);
    fill(rng, -1.0f, 1.0f, dy, dyd);
    std::vector<float> gamma = randoms(rng, dim, 0.5f, 1.5f);
    std::vector<float> dx0 = randoms(rng, n, -0.5f, 0.5f), dg0 = randoms(rng, dim, -1, 1);

    std::vector<T> y = nans<T>(n);
    std::vector<float> rstd(rows, NAN), dx = dx0, dg = dg0;
    const unsigned g = col_blocks(rows, ROW_WARPS, cap);
    emu_launch(g, ROW_THREADS, 0, [&] {
        if (!with_column_regs(nv, [&](auto c) {
                norm_forward_regs_kernel<T, V, decltype(c)::value, false>(
                    x.data(), gamma.data(), nullptr, y.data(), nullptr, rstd.data(), dim,
                    (size_t)rows);
            }))
            rmsnorm_forward_kernel<T>(x.data(), gamma.data(), y.data(), rstd.data(), dim,
                                      (size_t)rows);
    });
    emu_launch(g, ROW_THREADS, 0, [&] {
        if (!with_column_regs(nv, [&](auto c) {
                norm_dx_regs_kernel<T, V, decltype(c)::value, false>(
                    dy.data(), x.data(), gamma.data(), nullptr, rstd.data(), dx.data(), dim,
                    (size_t)rows);
            }))
            rmsnorm_dx_kernel<T>(dy.data(), x.data(), gamma.data(), rstd.data(), dx.data(), dim,
                                 (size_t)rows);
    });
    int chunk_cols, chunks = chunk_split(rows, chunks_want, &chunk_cols);
    std::vector<float> partial((size_t)chunks * dim, NAN);
    float *part = chunks > 1 ? partial.data() : nullptr;
    const unsigned gx = (unsigned)((dim + RG_FEATURES - 1) / RG_FEATURES);
    emu_launch(dim3(gx, (unsigned)chunks), dim3(RG_FEATURES, RG_LANES), 0, [&] {
        rmsnorm_gain_partial_kernel<T>(dy.data(), x.data(), rstd.data(), dg.data(), part, dim,
                                       rows, chunk_cols);
    });
    if (part)
        emu_launch(col_blocks(dim, EW_THREADS, cap), EW_THREADS, 0,
                   [&] { rmsnorm_gain_finish_kernel(part, dg.data(), dim, chunks); });

    std::vector<double> ry(n), rr(rows), rdx = dbl(dx0), rdg = dbl(dg0);
    for (int c = 0; c < rows; c++) {
        const double *xc = &xd[(size_t)c * dim], *gc = &dyd[(size_t)c * dim];
        double ms = 0, gxm = 0;
        for (int i = 0; i < dim; i++)
            ms += xc[i] * xc[i] / dim;
        double rs = 1 / sqrt(ms + EW_RMSNORM_EPS);
        rr[c] = rs;
        for (int i = 0; i < dim; i++) {
            ry[(size_t)c * dim + i] = xc[i] * rs * gamma[i];
            gxm += gc[i] * gamma[i] * xc[i] * rs / dim;
            rdg[i] += gc[i] * xc[i] * rs;
        }
        for (int i = 0; i < dim; i++)
            rdx[(size_t)c * dim + i] += rs * (gc[i] * gamma[i] - xc[i] * rs * gxm);
    }
    char shape[120];
    snprintf(shape, sizeof shape, "rmsnorm   %s dim %4d rows %2d chunks %d grid %2u%s",
             storage_name<T>(), dim, rows, chunks, g, nv ? " regs" : "");
    return judge(shape,
                 {{"y", rel(widen(y), ry)}, {"rstd", rel(dbl(rstd), rr)},
                  {"dx", rel(dbl(dx), rdx)}, {"dgamma", rel(dbl(dg), rdg)}},
                 sizeof(T) == 4 ? 1e-5 : 1e-2);
}

/* Both norms, the loop kernels and, where the features are whole 16-byte
 * vectors that the registers hold, the register ones. */
template <class T>
static int norms_all(int dim, int rows, int chunks_want, unsigned cap, unsigned seed)
{
    constexpr int V = 16 / sizeof(T);
    int bad = layernorm<T>(dim, rows, chunks_want, cap, false, seed) |
              rmsnorm<T>(dim, rows, chunks_want, cap, false, seed + 1);
    if (dim % V == 0 && column_regs(dim, V))
        bad |= layernorm<T>(dim, rows, chunks_want, cap, true, seed) |
               rmsnorm<T>(dim, rows, chunks_want, cap, true, seed + 1);
    return bad;
}

/* ----------------------------------------------------- causal softmax */

/* count blocks of t x t scores; V elements a load (1, or 16 bytes'
 * worth); the backward writing over dprobs where in_place; the loop
 * kernels, or with regs the register ones at column_regs's
 * vectors a lane (the launch's choice). */
template <class T, int V>
static int causal_softmax(int t, int count, float scale, bool in_place, bool regs,
                          unsigned cap, unsigned seed)
{
    const size_t ncols = (size_t)count * t, n = ncols * t;
    std::mt19937 rng(seed);
    std::vector<T> s(n), dp(n);
    std::vector<double> sd(n), dpd(n);
    fill(rng, -3.0f, 3.0f, s, sd);
    fill(rng, -1.0f, 1.0f, dp, dpd);
    for (size_t c = 0; c < ncols; c++)
        for (int j = (int)(c % t) + 1; j < t; j++)
            store(&s[c * t + j], 0, NAN); /* above the diagonal: never used */
    std::vector<T> p = nans<T>(n), dsbuf = nans<T>(n);
    T *ds = in_place ? dp.data() : dsbuf.data();
    if (V > 1) {
        need_aligned(s.data());
        need_aligned(p.data());
        need_aligned(ds);
    }
    const unsigned g = col_blocks(ncols, ROW_WARPS, cap);
    const int nv = regs ? column_regs(t, V) : 0;
    if (!with_column_regs(nv, [&](auto n) {
            emu_launch(g, ROW_THREADS, 0, [&] {
                causal_softmax_forward_regs_kernel<T, V, decltype(n)::value>(s.data(), p.data(),
                                                                             scale, t, ncols);
            });
        }))
        emu_launch(g, ROW_THREADS, 0, [&] {
            causal_softmax_forward_kernel<T, V>(s.data(), p.data(), scale, t, ncols);
        });
    const std::vector<double> pd = widen(p); /* the backward reads what the forward wrote */
    if (!with_column_regs(nv, [&](auto n) {
            emu_launch(g, ROW_THREADS, 0, [&] {
                causal_softmax_backward_regs_kernel<T, V, decltype(n)::value>(
                    p.data(), dp.data(), ds, scale, t, ncols);
            });
        }))
        emu_launch(g, ROW_THREADS, 0, [&] {
            causal_softmax_backward_kernel<T, V>(p.data(), dp.data(), ds, scale, t, ncols);
        });

    std::vector<double> rp(n, 0), rds(n, 0);
    for (size_t c = 0; c < ncols; c++) {
        const int i = (int)(c % t);
        const double *sc = &sd[c * t], *pc = &pd[c * t], *gc = &dpd[c * t];
        double mx = -INFINITY, sum = 0, dot = 0;
        for (int j = 0; j <= i; j++)
            mx = std::max(mx, (double)scale * sc[j]);
        for (int j = 0; j <= i; j++)
            sum += exp(scale * sc[j] - mx);
        for (int j = 0; j <= i; j++) {
            rp[c * t + j] = exp(scale * sc[j] - mx) / sum;
            dot += pc[j] * gc[j];
        }
        for (int j = 0; j <= i; j++)
            rds[c * t + j] = scale * pc[j] * (gc[j] - dot);
    }
    char shape[120];
    snprintf(shape, sizeof shape, "softmax   %s t %3d count %d V %d%s scale %5.2f%s grid %2u",
             storage_name<T>(), t, count, V, nv ? " regs" : "", scale,
             in_place ? " in place" : "", g);
    return judge(shape, {{"probs", rel(pd, rp)}, {"dscores", rel(widen(in_place ? dp : dsbuf), rds)}},
                 sizeof(T) == 4 ? 1e-5 : 1e-2);
}

/* Every path the rows allow: an element a load; 16 bytes a load, in the
 * loop kernels and, where the column fits, the register ones. */
template <class T>
static int causal_softmax_all(int t, int count, float scale, bool in_place, unsigned cap,
                              unsigned seed)
{
    constexpr int V = 16 / sizeof(T);
    int bad = causal_softmax<T, 1>(t, count, scale, in_place, false, cap, seed);
    if (t % V == 0) {
        bad |= causal_softmax<T, V>(t, count, scale, in_place, false, cap, seed);
        if (column_regs(t, V))
            bad |= causal_softmax<T, V>(t, count, scale, in_place, true, cap, seed);
    }
    return bad;
}

int main()
{
    emu_start(600);
    int bad = 0;
    /* dim, rows, chunks wanted, grid cap: a column shorter than a warp,
     * one warp, one past it, several turns; fewer columns than a block's
     * 4 warps, more than the grid's; one chunk, chunks of fewer columns
     * than the reduction's 8 lanes, and a last chunk short */
    const int shapes[][4] = {{7, 3, 1, 16},  {32, 5, 2, 1},   {33, 37, 10, 3},
                             {100, 9, 3, 2}, {300, 6, 1, 16}, {64, 70, 4, 4},
                             {768, 5, 2, 2}, {2048, 3, 1, 1}};
    for (auto &sh : shapes) {
        bad |= norms_all<float>(sh[0], sh[1], sh[2], sh[3], 1 + sh[0]);
        bad |= norms_all<bf16_bits>(sh[0], sh[1], sh[2], sh[3], 3 + sh[0]);
    }
    /* t: one key, fewer than a 16-byte load, a load, not a multiple of
     * 8, past a warp's turn of loads (32 x 4 in fp32, 32 x 8 in bf16) */
    const int ts[] = {1, 5, 8, 64, 100, 136};
    for (int t : ts) {
        bad |= causal_softmax_all<float>(t, 2, 0.125f, false, 2, 10 + t);
        bad |= causal_softmax_all<bf16_bits>(t, 2, 0.125f, false, 16, 11 + t);
    }
    bad |= causal_softmax_all<bf16_bits>(264, 1, 0.125f, false, 16, 12);
    /* the register kernels' widest: 8 vectors a lane in fp32, 4 in bf16 */
    bad |= causal_softmax_all<float>(520, 1, 0.125f, false, 16, 13);
    bad |= causal_softmax_all<bf16_bits>(520, 1, 0.125f, true, 16, 14);
    bad |= causal_softmax_all<float>(40, 3, -0.7f, true, 3, 20);
    bad |= causal_softmax_all<bf16_bits>(48, 1, 1.0f, true, 1, 21);
    printf(bad ? "columns_emulation: FAIL\n" : "columns_emulation: all ok\n");
    return bad;
}
