/* The CUDA backend's fused-attention kernels (kernels/cuda/
 * cuda_flash_attention.cuh), the very source, run on the host where no GPU
 * is, through cuda_emulation.h (each CUDA thread a pthread, __syncthreads
 * a barrier of the block's 256, a warp's shuffles an exchange through
 * memory between barriers of its 32, each block's shared memory poisoned
 * with NaN first). Judged against a float64 attention written here from
 * the definition, in fp32 and bf16 storage, every head-dim bucket, shapes
 * off the tiles; every output element starts as NaN, so one never written
 * fails. bf16 up to head dim 128 runs the tensor-core kernels
 * (cuda_flash_tc.cuh: mma.sync and ldmatrix, emulated by mma_emulation.h
 * from PTX's fragment layouts, which also checks ldmatrix's row
 * addresses; cp.async as copies made only when their group is waited
 * for, so a tile read too early reads stale or NaN), their 16-byte
 * staging and their element-wise one; fp32, and
 * bf16 at 256, the CUDA cores' fmaf.
 *
 * What it shows: the kernels' indexing, causal masks, tile ranges, online
 * softmax, the backward's D kept in the dq slots, which operand of each
 * tensor-core product is read transposed and from where, and that their
 * barriers are where the data needs them (the threads run concurrently).
 * What it cannot: anything about the device (launches, shared memory
 * limits, speed, the compiler's device code, the order in which the
 * device adds an mma's products). Built and run by
 * tests/e2e/e2e_cuda_flash_emulated.sh with the host's C++ compiler. */
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_emulation.h"

#define FA_SHARED(name) float *name = emu_smem
#include "elementwise.h"
#include "mma_emulation.h"

#include "cuda_flash_attention.cuh"

#include "emulation_check.h"

/* Attention in float64 from the definition: y, lse, and dqkv (dq, dk, dv
 * in the [3d x N] token layout), causal, over each (sequence, head). */
static void reference(const std::vector<double> &qkv, const std::vector<double> &dy, int hd,
                      int heads, int t, int batch, double scale, std::vector<double> &y,
                      std::vector<double> &lse, std::vector<double> &dqkv)
{
    size_t d = (size_t)hd * heads, ld = 3 * d;
    for (int s = 0; s < batch; s++)
        for (int h = 0; h < heads; h++) {
            auto at = [&](int i, int part, int e) {
                return ((size_t)s * t + i) * ld + part * d + (size_t)h * hd + e;
            };
            auto out = [&](int i, int e) { return ((size_t)s * t + i) * d + (size_t)h * hd + e; };
            for (int i = 0; i < t; i++) {
                std::vector<double> p(i + 1), dp(i + 1);
                double mx = -INFINITY, sum = 0, dot = 0;
                for (int j = 0; j <= i; j++) {
                    double sc = 0;
                    for (int e = 0; e < hd; e++)
                        sc += qkv[at(i, 0, e)] * qkv[at(j, 1, e)];
                    p[j] = sc * scale;
                    mx = std::max(mx, p[j]);
                }
                for (int j = 0; j <= i; j++)
                    sum += exp(p[j] - mx);
                lse[((size_t)s * heads + h) * t + i] = mx + log(sum);
                for (int j = 0; j <= i; j++)
                    p[j] = exp(p[j] - mx) / sum;
                for (int e = 0; e < hd; e++) {
                    double a = 0;
                    for (int j = 0; j <= i; j++)
                        a += p[j] * qkv[at(j, 2, e)];
                    y[out(i, e)] = a;
                }
                for (int j = 0; j <= i; j++) {
                    dp[j] = 0;
                    for (int e = 0; e < hd; e++)
                        dp[j] += dy[out(i, e)] * qkv[at(j, 2, e)];
                    dot += p[j] * dp[j];
                }
                for (int j = 0; j <= i; j++) {
                    double ds = p[j] * (dp[j] - dot) * scale;
                    for (int e = 0; e < hd; e++) {
                        dqkv[at(i, 0, e)] += ds * qkv[at(j, 1, e)];
                        dqkv[at(j, 1, e)] += ds * qkv[at(i, 0, e)];
                        dqkv[at(j, 2, e)] += p[j] * dy[out(i, e)];
                    }
                }
            }
        }
}

/* One shape through the four kernels as the backend launches them (the
 * backward reading the forward's y and lse), against the reference; 1 where an
 * output is off by more than the storage's op tolerance. */
/* The backend's launches of one storage and bucket: the forward, then the
 * backward's three kernels (reading the forward's y and lse). `vec`: the
 * tensor-core kernels may stage 16 bytes at a time (the backend's rule;
 * false runs their element-wise staging). */
template <class T, int HD>
static void launch(const T *x, T *y, float *l, const T *g, T *dx, float scale, int hd,
                   int heads, int t, int batch, bool vec)
{
    using P = fa_path<T, HD>;
    const int tiles = (t + P::tiles::B - 1) / P::tiles::B;
    const unsigned blocks = (unsigned)(tiles * heads * batch);
    const size_t rows = (size_t)t * batch * heads, warps = FA_THREADS / 32;
    if constexpr (P::TC)
        emu_launch(blocks, FA_TC_THREADS, P::tiles::FWD_BYTES, [&] {
            flash_tc_forward_kernel<HD>(x, y, l, scale, hd, heads, t, tiles, vec);
        });
    else
        emu_launch(blocks, FA_THREADS, P::tiles::FWD_BYTES, [&] {
            flash_forward_kernel<T, HD>(x, y, l, scale, hd, heads, t, tiles);
        });
    emu_launch((unsigned)((rows + warps - 1) / warps), FA_THREADS, 0,
               [&] { flash_backward_d_kernel<T>(y, g, dx, hd, heads, rows); });
    if constexpr (P::TC) {
        emu_launch(blocks, FA_TC_THREADS, P::tiles::BWD_BYTES, [&] {
            flash_tc_backward_dkv_kernel<HD>(x, l, g, dx, scale, hd, heads, t, tiles, vec);
        });
        emu_launch(blocks, FA_TC_THREADS, P::tiles::BWD_BYTES, [&] {
            flash_tc_backward_dq_kernel<HD>(x, l, g, dx, scale, hd, heads, t, tiles, vec);
        });
    } else {
        emu_launch(blocks, FA_THREADS, P::tiles::BWD_BYTES, [&] {
            flash_backward_dkv_kernel<T, HD>(x, l, g, dx, scale, hd, heads, t, tiles);
        });
        emu_launch(blocks, FA_THREADS, P::tiles::BWD_BYTES, [&] {
            flash_backward_dq_kernel<T, HD>(x, l, g, dx, scale, hd, heads, t, tiles);
        });
    }
}

/* One shape through the backend's kernels, against the reference; 1 where
 * an output is off by more than the storage's op tolerance. vec as the
 * backend decides it, unless `scalar` forces element-wise staging. */
template <class T, int HD>
static int run(int hd, int heads, int t, int batch, unsigned seed, bool scalar = false)
{
    using P = fa_path<T, HD>;
    size_t d = (size_t)hd * heads, n = (size_t)t * batch, ld = 3 * d;
    std::mt19937 rng(seed);
    std::vector<T> qkv(3 * d * n), dy(d * n), y(d * n), dqkv(3 * d * n);
    std::vector<double> qkvd(3 * d * n), dyd(d * n);
    fill(rng, -1.5f, 1.5f, qkv, qkvd);
    fill(rng, -1.0f, 1.0f, dy, dyd);
    for (auto &v : y)
        store(&v, 0, NAN);
    for (auto &v : dqkv)
        store(&v, 0, NAN);
    std::vector<float> lse((size_t)heads * n, NAN);
    float scale = 1.0f / sqrtf((float)hd);
    const bool vec = !scalar && hd % 8 == 0 && (uintptr_t)qkv.data() % 16 == 0 &&
                     (uintptr_t)dy.data() % 16 == 0;
    launch<T, HD>(qkv.data(), y.data(), lse.data(), dy.data(), dqkv.data(), scale, hd, heads, t,
                  batch, vec);

    std::vector<double> ry(d * n, 0), rl((size_t)heads * n), rd(3 * d * n, 0);
    reference(qkvd, dyd, hd, heads, t, batch, scale, ry, rl, rd);
    std::vector<double> gy(d * n), gl(lse.begin(), lse.end()), gp[3], wp[3];
    for (size_t i = 0; i < y.size(); i++)
        gy[i] = load(&y[i], 0);
    for (int part = 0; part < 3; part++)
        for (size_t c = 0; c < n; c++)
            for (size_t r = 0; r < d; r++) {
                gp[part].push_back(load(&dqkv[c * ld + part * d + r], 0));
                wp[part].push_back(rd[c * ld + part * d + r]);
            }
    double e[5] = {rel(gy, ry), rel(gl, rl), rel(gp[0], wp[0]), rel(gp[1], wp[1]),
                   rel(gp[2], wp[2])};
    /* gpu-check's op tolerances. bf16's products take q, k, v and dy
     * exactly and round P and dS to bf16 (2^-9 relative): their errors add
     * to the bf16 rounding of the outputs themselves (about 1.6e-3 here):
     * 2-3e-3 in all, well inside 1e-2 */
    double tol = sizeof(T) == 4 ? 1e-5 : 1e-2;
    int bad = 0;
    for (double err : e)
        bad |= !(err <= tol);
    printf("%s %-5s %-4s %-6s hd %3d (bucket %3d, tile %2d) heads %2d t %4d batch %d: "
           "y %.2e lse %.2e dq %.2e dk %.2e dv %.2e\n",
           bad ? "FAIL" : "ok  ", sizeof(T) == 4 ? "fp32" : "bf16", P::TC ? "mma" : "fmaf",
           P::TC ? (vec ? "vec16" : "scalar") : "", hd, HD, P::tiles::B, heads, t, batch, e[0],
           e[1], e[2], e[3], e[4]);
    return bad;
}

int main()
{
    emu_start(600);
    int bad = 0;
    /* three tiles over two sequences; every bucket in both storages; head
     * dims off the bucket (7, 2, 100, 200); T = 1 */
    bad |= run<float, 64>(64, 1, 130, 2, 1);
    bad |= run<bf16_bits, 64>(64, 2, 130, 1, 2);
    bad |= run<float, 32>(7, 2, 33, 2, 3);
    bad |= run<bf16_bits, 32>(2, 1, 40, 1, 5);
    bad |= run<float, 80>(80, 1, 70, 1, 7);
    bad |= run<bf16_bits, 80>(80, 1, 70, 1, 8);
    bad |= run<float, 128>(128, 1, 65, 1, 9);
    bad |= run<bf16_bits, 128>(100, 1, 64, 1, 10);
    bad |= run<float, 256>(256, 1, 33, 1, 11);
    bad |= run<bf16_bits, 256>(200, 1, 33, 1, 12);
    bad |= run<float, 64>(64, 1, 1, 1, 13);
    /* the tensor cores' 32 and 128 buckets over several tiles (their
     * shapes above fit in one) and over several (sequence, head) units;
     * GPT-2's 12 heads of 64 side by side in bf16 */
    bad |= run<bf16_bits, 32>(32, 3, 100, 2, 14);
    bad |= run<bf16_bits, 128>(128, 2, 130, 1, 15);
    bad |= run<bf16_bits, 64>(64, 12, 70, 1, 16);
    /* the tensor cores' element-wise staging at a head dim that could
     * take 16 bytes (hd 2 and 100 above take it for want of alignment) */
    bad |= run<bf16_bits, 64>(64, 2, 130, 1, 17, true);
    printf(bad ? "flash_emulation: FAIL\n" : "flash_emulation: all ok\n");
    return bad;
}
