/* The CUDA backend's passes over whole vectors, their very source
 * (kernels/cuda/cuda_elementwise.cuh, cuda_reduce.cuh), run on the host
 * by cuda_emulation.h against the CPU's per-element functions
 * (elementwise.h) looped here one element after the other: AdamW, SGD,
 * the fp32 to bf16 conversion and back, axpy and the bf16 accumulator's
 * rounding. Each kernel takes four elements a turn, one 16-byte load an
 * array where every pointer is aligned for it (`vec`) and element by
 * element otherwise and in the tail: both paths, lengths off the four,
 * grids that make the grid-stride loop wrap. The same functions in the
 * same order, so every element must match to the bit. Built and run by
 * e2e_cuda_kernels_emulated.sh. */
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_emulation.h"

#include "elementwise.h"

#include "cuda_elementwise.cuh"
#include "cuda_reduce.cuh"

#include "emulation_check.h"

/* n random floats from `off` floats past an aligned buffer: the kernels'
 * vec path needs off 0. */
struct floats {
    std::vector<float> buf;
    size_t off;
    floats(std::mt19937 &rng, size_t n, size_t off_, float lo, float hi) : buf(n + off_), off(off_)
    {
        std::vector<double> d(buf.size());
        fill(rng, lo, hi, buf, d);
    }
    float *p() { return buf.data() + off; }
    std::vector<float> v() const { return std::vector<float>(buf.begin() + off, buf.end()); }
};

/* Where the launch takes the 16-byte path (every pointer aligned). */
static int vec_of(std::initializer_list<const void *> ps)
{
    int vec = 1;
    for (const void *p : ps)
        vec &= (uintptr_t)p % 16 == 0;
    return vec;
}

static unsigned grid_for(size_t items, unsigned cap)
{
    size_t g = (items + EW_THREADS - 1) / EW_THREADS;
    return (unsigned)std::max<size_t>(1, std::min<size_t>(g, cap));
}

static double exact(const std::vector<float> &got, const std::vector<float> &want)
{
    return rel(widen(got), widen(want));
}

static int updates(size_t n, size_t off, unsigned cap, unsigned seed)
{
    std::mt19937 rng(seed);
    const unsigned g = grid_for((n + 3) / 4, cap);
    char shape[120];
    int bad = 0;

    /* AdamW and SGD: w, m, v updated in place */
    floats w(rng, n, off, -1, 1), gr(rng, n, off, -1, 1), m(rng, n, off, -0.1f, 0.1f),
        v(rng, n, off, 0, 0.01f);
    const adamw_hparams hp = {1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.19f, 0.0975f};
    std::vector<float> rw = w.v(), rm = m.v(), rv = v.v(), rs = w.v(), gv = gr.v();
    for (size_t i = 0; i < n; i++) {
        ew_adamw(&rw[i], gv[i], &rm[i], &rv[i], &hp);
        ew_sgd(&rs[i], gv[i], 0.01f, 0.1f);
    }
    const int vec = vec_of({w.p(), gr.p(), m.p(), v.p()});
    floats ws = w;
    emu_launch(g, EW_THREADS, 0,
               [&] { adamw_kernel(w.p(), gr.p(), m.p(), v.p(), n, &hp, vec); });
    emu_launch(g, EW_THREADS, 0, [&] { sgd_kernel(ws.p(), gr.p(), n, 0.01f, 0.1f, vec); });
    snprintf(shape, sizeof shape, "adamw/sgd fp32 n %4zu %s grid %u", n,
             vec ? "16-byte" : "element", g);
    bad |= judge(shape,
                 {{"w", exact(w.v(), rw)}, {"m", exact(m.v(), rm)}, {"v", exact(v.v(), rv)},
                  {"sgd w", exact(ws.v(), rs)}},
                 0);

    /* fp32 -> bf16 (the launch asks 16 bytes in, 8 out) -> fp32 */
    floats x(rng, n, off, -100, 100);
    std::vector<bf16_bits> hb(n + off, 0xffff);
    bf16_bits *h = hb.data() + off;
    std::vector<float> back(n, NAN), rback(n), xv = x.v();
    const int cvec = vec_of({x.p()}) && (uintptr_t)h % 8 == 0;
    emu_launch(g, EW_THREADS, 0, [&] { to_bf16_kernel(x.p(), h, n, cvec); });
    emu_launch(grid_for(n, cap), EW_THREADS, 0, [&] { to_f32_kernel(h, back.data(), n); });
    for (size_t i = 0; i < n; i++)
        rback[i] = ew_round_bf16(xv[i]);

    /* axpy, and the accumulator rounded in place */
    floats y(rng, n, off, -1, 1), r(rng, n, off, -50, 50);
    std::vector<float> ry = y.v(), rr = r.v();
    for (size_t i = 0; i < n; i++) {
        ry[i] += -0.3f * xv[i];
        rr[i] = ew_round_bf16(rr[i]);
    }
    const int avec = vec_of({x.p(), y.p()});
    emu_launch(g, EW_THREADS, 0, [&] { axpy_kernel(y.p(), -0.3f, x.p(), n, avec); });
    emu_launch(g, EW_THREADS, 0, [&] { round_bf16_kernel(r.p(), n, vec_of({r.p()})); });
    snprintf(shape, sizeof shape, "convert   fp32 n %4zu %s grid %u", n,
             cvec ? "16-byte" : "element", g);
    bad |= judge(shape,
                 {{"to bf16 and back", exact(back, rback)}, {"axpy", exact(y.v(), ry)},
                  {"round_bf16", exact(r.v(), rr)}},
                 0);
    return bad;
}

int main()
{
    emu_start(600);
    int bad = 0;
    /* lengths: one element, a tail past a whole float4, a block's turn
     * and more; aligned (the 16-byte path) and one float off (element by
     * element); the full grid and one that wraps */
    const size_t ns[] = {1, 7, 1024, 2051};
    for (size_t n : ns)
        for (size_t off = 0; off < 2; off++) {
            bad |= updates(n, off, 16, 1 + (unsigned)(n + off));
            bad |= updates(n, off, 1, 2 + (unsigned)(n + off));
        }
    printf(bad ? "updates_emulation: FAIL\n" : "updates_emulation: all ok\n");
    return bad;
}
