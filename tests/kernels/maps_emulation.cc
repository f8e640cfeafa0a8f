/* The CUDA backend's element-wise and index kernels, their very source
 * (kernels/cuda/cuda_elementwise.cuh, cuda_transformer.cuh,
 * cuda_llama_ops.cuh), run on the host by cuda_emulation.h: the rotary
 * embedding (forward, and the backward undoing it) against float64 from
 * its definition; the rest against elementwise.h's functions in the
 * kernels' order, to the bit: bias + GELU on its
 * 2-D grid, GELU forward and backward, SwiGLU forward and backward, the
 * repeat of the key and value heads and its backward, the embeddings and
 * their gradients (the token table's added in the positions' order, over
 * more positions than a block scans at once), the residual add, the heads' permute both ways in 16-,
 * 4- and 2-byte units. In place where the backend may alias; fp32 and
 * bf16; grids that make the grid-stride loops wrap. Outputs start NaN, and
 * what a kernel must leave alone (the columns past a strided row) must
 * stay so. Built and run by e2e_cuda_kernels_emulated.sh. */
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_emulation.h"

#include "elementwise.h"

#include "cuda_elementwise.cuh"
#include "cuda_llama_ops.cuh"
#include "cuda_transformer.cuh"

#include "emulation_check.h"

static unsigned grid_for(size_t items, unsigned cap)
{
    size_t g = (items + EW_THREADS - 1) / EW_THREADS;
    return (unsigned)std::max<size_t>(1, std::min<size_t>(g, cap));
}

/* n random elements of T in [lo, hi), and the same in double. */
template <class T> struct data {
    std::vector<T> x;
    std::vector<double> d;
    data(std::mt19937 &rng, size_t n, float lo, float hi) : x(n), d(n) { fill(rng, lo, hi, x, d); }
};

template <class T> static double storage_tol() { return sizeof(T) == 4 ? 1e-5 : 1e-2; }

/* --------------------------------------------- rotary, repeat of heads */

/* Rows of ld elements, heads of hd from the row's start; the forward and
 * then the backward (which must give the input back, to rounding). */
template <class T> static int rotary(int hd, int heads, int t, int cols, int ld, unsigned cap)
{
    std::mt19937 rng(hd * 7 + cols);
    const size_t n = (size_t)cols * ld;
    data<T> in(rng, n, -1, 1);
    std::vector<T> x = in.x;
    const float theta = 10000.0f;
    const size_t items = (size_t)cols * heads * (hd / 2);
    const unsigned g = grid_for(items, cap);
    emu_launch(g, EW_THREADS, 0,
               [&] { rotary_kernel<T>(x.data(), ld, heads, hd, t, cols, theta, 1.0f); });
    const std::vector<double> fwd = widen(x);
    emu_launch(g, EW_THREADS, 0,
               [&] { rotary_kernel<T>(x.data(), ld, heads, hd, t, cols, theta, -1.0f); });
    std::vector<double> want = in.d;
    const int half = hd / 2;
    for (int c = 0; c < cols; c++)
        for (int h = 0; h < heads; h++)
            for (int e = 0; e < half; e++) {
                double ang = (c % t) * pow((double)theta, -2.0 * e / hd);
                size_t a = (size_t)c * ld + (size_t)h * hd + e, b = a + half;
                want[a] = in.d[a] * cos(ang) - in.d[b] * sin(ang);
                want[b] = in.d[b] * cos(ang) + in.d[a] * sin(ang);
            }
    char shape[120];
    snprintf(shape, sizeof shape, "rotary    %s hd %2d heads %d t %d cols %2d ld %3d grid %u",
             storage_name<T>(), hd, heads, t, cols, ld, g);
    return judge(shape, {{"forward", rel(fwd, want)}, {"backward", rel(widen(x), in.d)}},
                 storage_tol<T>());
}

template <class T>
static int repeat_kv(int hd, int kv_heads, int group, int parts, int cols, int pad, unsigned cap)
{
    std::mt19937 rng(hd + 3 * group + cols);
    const size_t kvd = (size_t)kv_heads * hd, qd = kvd * group, ld = parts * qd + pad;
    data<T> kv(rng, (size_t)cols * parts * kvd, -1, 1), dd(rng, (size_t)cols * ld, -1, 1);
    std::vector<T> dst = nans<T>((size_t)cols * ld), dkv = nans<T>(kv.x.size());
    const unsigned g = grid_for((size_t)cols * parts * qd, cap);
    emu_launch(g, EW_THREADS, 0, [&] {
        repeat_kv_kernel<T>(kv.x.data(), dst.data(), (int)ld, hd, kv_heads, group, parts, cols);
    });
    emu_launch(g, EW_THREADS, 0, [&] {
        repeat_kv_backward_kernel<T>(dd.x.data(), (int)ld, dkv.data(), hd, kv_heads, group,
                                     parts, cols);
    });
    std::vector<T> rdst = nans<T>(dst.size()), rdkv(dkv.size());
    for (int c = 0; c < cols; c++)
        for (int p = 0; p < parts; p++)
            for (int h = 0; h < kv_heads * group; h++)
                for (int e = 0; e < hd; e++)
                    rdst[c * ld + p * qd + (size_t)h * hd + e] =
                        kv.x[(c * parts + p) * kvd + (size_t)(h / group) * hd + e];
    for (int c = 0; c < cols; c++)
        for (int p = 0; p < parts; p++)
            for (int h = 0; h < kv_heads; h++)
                for (int e = 0; e < hd; e++) {
                    float s = 0;
                    for (int k = 0; k < group; k++)
                        s += load(dd.x.data(), c * ld + p * qd + (size_t)(h * group + k) * hd + e);
                    store(rdkv.data(), (c * parts + p) * kvd + (size_t)h * hd + e, s);
                }
    char shape[120];
    snprintf(shape, sizeof shape, "repeat_kv %s hd %d kv_heads %d group %d parts %d cols %d pad %d",
             storage_name<T>(), hd, kv_heads, group, parts, cols, pad);
    /* the padding past each row stays NaN in both: memcmp of the bits */
    const bool same = memcmp(dst.data(), rdst.data(), dst.size() * sizeof(T)) == 0;
    return judge(shape, {{"dst", same ? 0.0 : NAN}, {"dkv", rel(widen(dkv), widen(rdkv))}}, 0);
}

/* ----------------------------------------------- activations, residual */

template <class T> static int activations(int rows, int cols, dim3 bg, unsigned cap)
{
    std::mt19937 rng(rows * 31 + cols);
    const size_t n = (size_t)rows * cols;
    data<T> z(rng, n, -4, 4), dh(rng, n, -1, 1), up(rng, n, -2, 2), x(rng, n, -1, 1);
    data<float> bias(rng, rows, -1, 1);
    const unsigned g = grid_for(n, cap);
    /* bias + GELU, z updated in place */
    std::vector<T> zb = z.x, h = nans<T>(n);
    emu_launch(bg, EW_THREADS, 0,
               [&] { bias_gelu_kernel<T>(zb.data(), bias.x.data(), h.data(), rows, cols, 1); });
    std::vector<T> rz(n), rh(n);
    for (size_t i = 0; i < n; i++) {
        store(rz.data(), i, load(z.x.data(), i) + bias.x[i % rows]);
        store(rh.data(), i, ew_gelu(load(rz.data(), i)));
    }
    /* GELU forward; backward in place over dh; SwiGLU, its dgate over dh */
    std::vector<T> hf = nans<T>(n), dz = dh.x, sh = nans<T>(n), dg = dh.x, du = nans<T>(n);
    emu_launch(g, EW_THREADS, 0, [&] { gelu_forward_kernel<T>(z.x.data(), hf.data(), n); });
    emu_launch(g, EW_THREADS, 0,
               [&] { gelu_backward_kernel<T>(z.x.data(), dz.data(), dz.data(), n); });
    emu_launch(g, EW_THREADS, 0,
               [&] { swiglu_forward_kernel<T>(z.x.data(), up.x.data(), sh.data(), n); });
    emu_launch(g, EW_THREADS, 0, [&] {
        swiglu_backward_kernel<T>(z.x.data(), up.x.data(), dg.data(), dg.data(), du.data(), n);
    });
    /* the residual add, y += x and y += y */
    std::vector<T> y = up.x, yy = up.x;
    emu_launch(g, EW_THREADS, 0, [&] { add_kernel<T>(y.data(), x.x.data(), n); });
    emu_launch(g, EW_THREADS, 0, [&] { add_kernel<T>(yy.data(), yy.data(), n); });
    /* 16 bytes a lane where the rows are whole vectors (the launches'
     * choice), the backward and the add in place too; judged only there */
    constexpr int V = 16 / sizeof(T);
    const bool vec = rows % V == 0;
    std::vector<T> zbv = z.x, hv = nans<T>(n), dzv = dh.x, yv = up.x, yyv = up.x;
    if (vec) {
        need_aligned(zbv.data());
        need_aligned(hv.data());
        need_aligned(dzv.data());
        need_aligned(yv.data());
        need_aligned(yyv.data());
        emu_launch(g, EW_THREADS, 0, [&] { add_vec_kernel<T, V>(yv.data(), x.x.data(), n); });
        emu_launch(g, EW_THREADS, 0, [&] { add_vec_kernel<T, V>(yyv.data(), yyv.data(), n); });
        emu_launch(g, EW_THREADS, 0, [&] {
            bias_gelu_vec_kernel<T, V>(zbv.data(), bias.x.data(), hv.data(), rows, n, 1);
        });
        emu_launch(g, EW_THREADS, 0, [&] {
            gelu_backward_vec_kernel<T, V>(z.x.data(), dzv.data(), dzv.data(), n);
        });
    }
    std::vector<T> rhf(n), rdz(n), rsh(n), rdg(n), rdu(n), ry(n), ryy(n);
    for (size_t i = 0; i < n; i++) {
        float zi = load(z.x.data(), i), d = load(dh.x.data(), i), u = load(up.x.data(), i);
        store(rhf.data(), i, ew_gelu(zi));
        store(rdz.data(), i, d * ew_gelu_grad(zi));
        store(rsh.data(), i, ew_swiglu(zi, u));
        store(rdu.data(), i, ew_swiglu_dup(zi, d));
        store(rdg.data(), i, ew_swiglu_dgate(zi, u, d));
        store(ry.data(), i, u + load(x.x.data(), i));
        store(ryy.data(), i, u + u);
    }
    char shape[120];
    snprintf(shape, sizeof shape, "maps      %s rows %3d cols %2d bias grid %ux%u grid %u%s",
             storage_name<T>(), rows, cols, bg.x, bg.y, g, vec ? " and 16 bytes a lane" : "");
    auto e = [](const std::vector<T> &a, const std::vector<T> &b) { return rel(widen(a), widen(b)); };
    std::vector<std::pair<const char *, double>> errs = {
        {"bias", e(zb, rz)},         {"gelu", e(h, rh)},     {"gelu_fwd", e(hf, rhf)},
        {"gelu_bwd", e(dz, rdz)},    {"swiglu", e(sh, rsh)}, {"dgate", e(dg, rdg)},
        {"dup", e(du, rdu)},         {"add", e(y, ry)},      {"add self", e(yy, ryy)}};
    if (vec)
        errs.insert(errs.end(), {{"bias vec", e(zbv, rz)},
                                 {"gelu vec", e(hv, rh)},
                                 {"gelu_bwd vec", e(dzv, rdz)},
                                 {"add vec", e(yv, ry)},
                                 {"add self vec", e(yyv, ryy)}});
    return judge(shape, errs, 0);
}

/* ------------------------------------------------------- embeddings */

template <class T> static int embeddings(int dim, int t, int batch, int vocab, bool wpe, unsigned cap)
{
    std::mt19937 rng(dim * 5 + t);
    const size_t n = (size_t)dim * t * batch;
    data<float> wte(rng, (size_t)vocab * dim, -1, 1), pe(rng, (size_t)t * dim, -1, 1),
        gte(rng, (size_t)vocab * dim, -1, 1), gpe(rng, (size_t)t * dim, -1, 1);
    data<T> dout(rng, n, -1, 1);
    std::vector<int> tok(t * batch);
    for (auto &k : tok)
        k = (int)(rng() % (unsigned)vocab); /* repeats: one block adds them all */
    std::vector<T> out = nans<T>(n);
    std::vector<float> dwpe = gpe.x;
    const float *p = wpe ? pe.x.data() : nullptr;
    const unsigned g = grid_for(n, cap);
    emu_launch(g, EW_THREADS, 0, [&] {
        embedding_forward_kernel<T>(tok.data(), wte.x.data(), p, out.data(), dim, t, n);
    });
    const int count = t * batch;
    /* The owners of the token rows: one block, a few (a token's positions
     * in several blocks' hands would race), and a block a position; each
     * with a slice of EMB_THREADS elements of the rows a block. */
    std::vector<std::vector<float>> dwtes;
    const unsigned slices = (unsigned)((dim + EMB_THREADS - 1) / EMB_THREADS);
    for (unsigned owners : {1u, 3u, (unsigned)count}) {
        dwtes.push_back(gte.x);
        float *d = dwtes.back().data();
        emu_launch(dim3(owners, slices), EMB_THREADS, 0,
                   [&] { embedding_dwte_kernel<T>(tok.data(), dout.x.data(), d, dim, count); });
    }
    emu_launch(grid_for((size_t)dim * t, cap), EW_THREADS, 0, [&] {
        embedding_dwpe_kernel<T>(dout.x.data(), dwpe.data(), dim, t, batch);
    });
    std::vector<T> rout(n);
    std::vector<float> rte = gte.x;
    std::vector<float> rpe = gpe.x;
    for (size_t c = 0; c < (size_t)t * batch; c++)
        for (int r = 0; r < dim; r++) {
            size_t at = c * dim + r, w = (size_t)tok[c] * dim + r;
            store(rout.data(), at, wte.x[w] + (wpe ? pe.x[(c % t) * dim + r] : 0.0f));
            rte[w] += load(dout.x.data(), at);
        }
    for (size_t i = 0; i < (size_t)dim * t; i++) {
        float s = 0;
        for (int q = 0; q < batch; q++)
            s += load(dout.x.data(), (size_t)q * dim * t + i);
        rpe[i] += s;
    }
    char shape[120];
    snprintf(shape, sizeof shape, "embedding %s dim %2d t %d batch %d vocab %d%s grid %u",
             storage_name<T>(), dim, t, batch, vocab, wpe ? "" : " no wpe", g);
    return judge(shape,
                 {{"out", rel(widen(out), widen(rout))}, {"dwpe", rel(widen(dwpe), widen(rpe))},
                  {"dwte 1 owner", rel(widen(dwtes[0]), widen(rte))},
                  {"dwte 3 owners", rel(widen(dwtes[1]), widen(rte))},
                  {"dwte an owner a position", rel(widen(dwtes[2]), widen(rte))}},
                 0);
}

/* ------------------------------------------------------ heads' permute */

/* parts x batch x heads x t runs of hd elements of T, moved in units of
 * U: to the per-head blocks and back to the tokens. */
template <class T, class U>
static int permute(int hd, int heads, int t, int batch, int parts, unsigned cap)
{
    std::mt19937 rng(hd * 11 + heads);
    const size_t runs = (size_t)parts * batch * heads * t, n = runs * hd;
    data<T> tokens(rng, n, -1, 1);
    std::vector<T> blocks = nans<T>(n), back = nans<T>(n), want(n);
    const size_t run_units = hd * sizeof(T) / sizeof(U), units = runs * run_units;
    const unsigned g = grid_for(units, cap);
    emu_launch(g, EW_THREADS, 0, [&] {
        permute_heads_kernel<U>((const U *)tokens.x.data(), (U *)blocks.data(), run_units, heads,
                                t, batch, parts, 0, units);
    });
    emu_launch(g, EW_THREADS, 0, [&] {
        permute_heads_kernel<U>((const U *)blocks.data(), (U *)back.data(), run_units, heads, t,
                                batch, parts, 1, units);
    });
    for (int p = 0; p < parts; p++)
        for (int q = 0; q < batch; q++)
            for (int h = 0; h < heads; h++)
                for (int i = 0; i < t; i++) {
                    size_t r = (((size_t)p * batch + q) * heads + h) * t + i;
                    size_t tok = (((size_t)q * t + i) * parts + p) * heads + h;
                    std::copy_n(&tokens.x[tok * hd], hd, &want[r * hd]);
                }
    char shape[120];
    snprintf(shape, sizeof shape, "permute   %s hd %d heads %d t %d batch %d parts %d unit %zu",
             storage_name<T>(), hd, heads, t, batch, parts, sizeof(U));
    bool fwd = memcmp(blocks.data(), want.data(), n * sizeof(T)) == 0;
    bool bwd = memcmp(back.data(), tokens.x.data(), n * sizeof(T)) == 0;
    return judge(shape, {{"to heads", fwd ? 0.0 : NAN}, {"to tokens", bwd ? 0.0 : NAN}}, 0);
}

template <class T> static int all(unsigned cap)
{
    int bad = 0;
    /* hd even, a head shorter than a warp; rows longer than their heads */
    bad |= rotary<T>(8, 3, 5, 7, 24, cap);
    bad |= rotary<T>(64, 2, 4, 9, 160, cap);
    bad |= repeat_kv<T>(4, 2, 3, 2, 5, 3, cap);
    bad |= repeat_kv<T>(16, 1, 4, 1, 7, 0, cap);
    bad |= activations<T>(33, 5, dim3(1, 1), cap);
    bad |= activations<T>(300, 7, dim3(2, 3), cap);
    bad |= activations<T>(64, 9, dim3(1, 2), cap); /* rows of whole 16-byte loads */
    bad |= embeddings<T>(24, 5, 3, 4, true, cap);
    bad |= embeddings<T>(7, 3, 2, 3, false, cap);
    /* 300 positions: the scans pass a block's EMB_THREADS, and one
     * owner's list its EMB_BATCH */
    bad |= embeddings<T>(5, 100, 3, 40, true, cap);
    /* rows over two slices of EMB_THREADS, the second part-filled */
    bad |= embeddings<T>(300, 9, 3, 5, false, cap);
    bad |= permute<T, unsigned short>(3, 2, 5, 2, 3, cap);
    bad |= permute<T, unsigned>(8, 3, 4, 1, 2, cap);
    bad |= permute<T, int4>(16, 2, 3, 2, 1, cap);
    return bad;
}

int main()
{
    emu_start(600);
    int bad = all<float>(16);
    bad |= all<float>(1);
    bad |= all<bf16_bits>(16);
    bad |= all<bf16_bits>(2);
    printf(bad ? "maps_emulation: FAIL\n" : "maps_emulation: all ok\n");
    return bad;
}
