/* The CUDA backend's reductions, their very source (kernels/cuda/
 * cuda_elementwise.cuh, cuda_reduce.cuh), run on the host by
 * cuda_emulation.h against float64 written here from the definitions:
 * the LM head's softmax cross-entropy (a warp an example, 16-byte rows
 * and element by element, the unrolled loads and the tail after them,
 * padding examples, each example's loss, then their sum in a fixed order:
 * to the bit against that order, and the same bits with the blocks run in
 * other orders and on one block), the bias
 * gradient (a block's column sums in shared memory, in one pass or in
 * chunks and a second), and the noise pass's sum of squares (a block's
 * tree in double, then one block over the partials; 16-byte loads and the
 * tail past the last whole one). fp32 and bf16 where the kernel has both;
 * every output starts as NaN, the sums that are added to start random.
 * Built and run by e2e_cuda_kernels_emulated.sh. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cuda_emulation.h"

#include "elementwise.h"

#include "cuda_elementwise.cuh"
#include "cuda_reduce.cuh"

#include "emulation_check.h"

/* ------------------------------------------------ softmax cross-entropy */

/* *loss_sum's value after loss_sum_kernel, by its order written out here:
 * thread t's losses t, t + SQ_THREADS, ... in double, block_sum's tree,
 * one float added. */
static float fixed_order_loss(float start, const std::vector<float> &losses)
{
    std::vector<double> acc(SQ_THREADS, 0.0);
    for (size_t i = 0; i < losses.size(); i++)
        acc[i % SQ_THREADS] += losses[i];
    for (int w = SQ_THREADS / 2; w > 0; w >>= 1)
        for (int t = 0; t < w; t++)
            acc[t] += acc[t + w];
    float r = start;
    r += (float)acc[0];
    return r;
}

/* One cross-entropy as cuda_softmax_xent issues it: the examples' losses
 * into `losses`, then their sum added to *loss. Blocks in the order
 * emu_block_order's seed says. */
template <class T, int V>
static void run_xent(const std::vector<T> &logits, std::vector<T> &dl, const int *labels,
                     const int *valid, float scale, std::vector<float> &losses, float *loss,
                     int classes, int batch, unsigned grid, unsigned order)
{
    emu_block_order(order);
    emu_launch(grid, SX_THREADS, 0, [&] {
        softmax_xent_kernel<T, V>(logits.data(), dl.data(), labels, valid, &scale,
                                  losses.data(), classes, batch);
    });
    emu_launch(1, SQ_THREADS, 0, [&] { loss_sum_kernel(losses.data(), batch, loss); });
    emu_block_order(0);
}

static int same_bits(float a, float b) { return __float_as_uint(a) == __float_as_uint(b); }

/* batch examples of `classes` logits, V a load; every third example
 * padding; grid blocks of SX_WARPS examples (the loop wraps when fewer).
 * Against float64 (dlogits, each example's loss, the loss); the loss to
 * the bit against its fixed order from the kernel's own losses; and run
 * again with the blocks shuffled and on one block, the loss and the
 * gradient the same to the bit (an atomic add per block gave a sum in the
 * order the blocks ran). */
template <class T, int V>
static int softmax_xent(int classes, int batch, unsigned grid, unsigned seed)
{
    const size_t n = (size_t)classes * batch;
    std::mt19937 rng(seed);
    std::vector<T> logits(n);
    std::vector<double> ld(n);
    fill(rng, -5.0f, 5.0f, logits, ld);
    std::vector<int> labels(batch), valid(batch);
    for (int j = 0; j < batch; j++) {
        labels[j] = (int)(rng() % (unsigned)classes);
        valid[j] = j % 3 != 2;
        /* a large logit late in the row: the running max must rescale */
        size_t big = (size_t)j * classes + (size_t)(classes - 1 - j % classes);
        store(&logits[big], 0, 12.0f);
        ld[big] = load(&logits[big], 0);
    }
    const float scale = 0.37f, loss0 = 1.5f;
    float loss = loss0;
    std::vector<T> dl = nans<T>(n);
    std::vector<float> losses = nans<float>(batch);
    if (V > 1) {
        need_aligned(logits.data());
        need_aligned(dl.data());
    }
    run_xent<T, V>(logits, dl, labels.data(), valid.data(), scale, losses, &loss, classes,
                   batch, grid, 0);

    std::vector<double> rdl(n, 0), rlosses(batch, 0);
    double rloss = loss0;
    for (int j = 0; j < batch; j++) {
        if (!valid[j])
            continue;
        const double *x = &ld[(size_t)j * classes];
        double mx = *std::max_element(x, x + classes), sum = 0;
        for (int c = 0; c < classes; c++)
            sum += exp(x[c] - mx);
        double lse = mx + log(sum);
        rlosses[j] = lse - x[labels[j]];
        rloss += rlosses[j];
        for (int c = 0; c < classes; c++)
            rdl[(size_t)j * classes + c] = (exp(x[c] - lse) - (c == labels[j])) * scale;
    }
    int bad = !same_bits(loss, fixed_order_loss(loss0, losses));
    const unsigned grids[] = {grid, 1};
    for (unsigned order = 1; order <= 2 && !bad; order++) {
        float again = loss0;
        std::vector<T> dl2 = nans<T>(n);
        std::vector<float> losses2 = nans<float>(batch);
        run_xent<T, V>(logits, dl2, labels.data(), valid.data(), scale, losses2, &again, classes,
                       batch, grids[order - 1], 7 * order);
        bad |= !same_bits(again, loss) ||
               memcmp(dl2.data(), dl.data(), n * sizeof(T)) != 0;
    }
    char shape[120];
    snprintf(shape, sizeof shape, "xent      %s classes %4d batch %3d V %d grid %3u%s",
             storage_name<T>(), classes, batch, V, grid,
             bad ? " (the loss not the same to the bit)" : "");
    return judge(shape,
                 {{"dlogits", rel(widen(dl), rdl)},
                  {"losses", rel(widen(losses), rlosses)},
                  {"loss", bad ? NAN : rel({loss}, {rloss})}},
                 sizeof(T) == 4 ? 1e-5 : 1e-2);
}

template <class T> static int softmax_xent_all(int classes, int batch, unsigned seed)
{
    constexpr int V = 16 / sizeof(T);
    const unsigned full = (unsigned)((batch + SX_WARPS - 1) / SX_WARPS);
    int bad = softmax_xent<T, 1>(classes, batch, full, seed);
    bad |= softmax_xent<T, 1>(classes, batch, 1, seed);
    if (classes % V == 0) {
        bad |= softmax_xent<T, V>(classes, batch, full, seed);
        bad |= softmax_xent<T, V>(classes, batch, 1, seed);
    }
    return bad;
}

/* ------------------------------------------------------- bias gradient */

/* db[i] += sum_j dz[j * rows + i], in chunks of the columns. */
template <class T> static int bias_grad(int rows, int cols, int chunks_want, unsigned seed)
{
    const size_t n = (size_t)rows * cols;
    std::mt19937 rng(seed);
    std::vector<T> dz(n);
    std::vector<double> dzd(n);
    fill(rng, -1.0f, 1.0f, dz, dzd);
    std::vector<float> db(rows);
    std::vector<double> db0(rows);
    fill(rng, -1.0f, 1.0f, db, db0);
    const int chunk_cols = (cols + chunks_want - 1) / chunks_want;
    const int chunks = (cols + chunk_cols - 1) / chunk_cols;
    const unsigned gx = (unsigned)((rows + BG_ROWS - 1) / BG_ROWS);
    std::vector<float> partial((size_t)chunks * rows, NAN);
    const dim3 block(BG_ROWS, BG_LANES);
    if (chunks == 1) {
        emu_launch(dim3(gx, 1), block, 0, [&] {
            bias_grad_partial_kernel<T>(dz.data(), db.data(), 1, rows, cols, chunk_cols);
        });
    } else {
        emu_launch(dim3(gx, (unsigned)chunks), block, 0, [&] {
            bias_grad_partial_kernel<T>(dz.data(), partial.data(), 0, rows, cols, chunk_cols);
        });
        emu_launch(2, EW_THREADS, 0,
                   [&] { bias_grad_finish_kernel(partial.data(), db.data(), rows, chunks); });
    }
    std::vector<double> rdb = db0;
    for (int j = 0; j < cols; j++)
        for (int i = 0; i < rows; i++)
            rdb[i] += dzd[(size_t)j * rows + i];
    char shape[120];
    snprintf(shape, sizeof shape, "bias_grad %s rows %3d cols %2d chunks %d", storage_name<T>(),
             rows, cols, chunks);
    return judge(shape, {{"db", rel(widen(db), rdb)}}, 1e-5);
}

/* ----------------------------------------------------- sum of squares */

/* n floats from `offset` floats past an aligned buffer (1: the element
 * path, as the launch takes it for a misaligned x), in `blocks` blocks:
 * the launch's count, or fewer so that the unrolled loop runs. */
static int sum_squares(size_t n, size_t offset, unsigned blocks, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<float> buf(n + offset);
    std::vector<double> bd(n + offset);
    fill(rng, -3.0f, 3.0f, buf, bd);
    const float *x = buf.data() + offset;
    const int vec = (uintptr_t)x % 16 == 0;
    std::vector<double> partial(blocks, NAN);
    double out = NAN;
    emu_launch(blocks, SQ_THREADS, 0,
               [&] { sum_squares_partial(x, n, vec, partial.data()); });
    emu_launch(1, SQ_THREADS, 0, [&] { sum_partials(partial.data(), (int)blocks, &out); });
    double want = 0;
    for (size_t i = 0; i < n; i++)
        want += bd[offset + i] * bd[offset + i];
    char shape[120];
    snprintf(shape, sizeof shape, "sum_sq    fp32 n %5zu %s blocks %u", n,
             vec ? "16-byte" : "element", blocks);
    return judge(shape, {{"sum", rel({out}, {want})}}, 1e-12);
}

/* The launch's block count (cuda_sum_squares). */
static unsigned sq_blocks(size_t n, int vec)
{
    size_t items = vec ? (n + 3) / 4 : n, want = (items + SQ_THREADS - 1) / SQ_THREADS;
    return want == 0 ? 1u : want > SQ_MAX_BLOCKS ? SQ_MAX_BLOCKS : (unsigned)want;
}

int main()
{
    emu_start(600);
    int bad = 0;
    /* classes: fewer than a warp, one past it, a warp's turn of 16-byte
     * loads, past SX_UNROLL turns of them with a tail; batches of fewer
     * examples than a block's warps, of more than the grid's, and of more
     * than the loss sum's threads (each thread then adds several, and
     * many blocks would add in a scheduler's order) */
    const int xent_shapes[][2] = {{7, 3},    {33, 5},   {32, 9},  {100, 4},
                                  {1000, 6}, {1032, 3}, {7, 700}, {40, 300}};
    for (auto &s : xent_shapes) {
        bad |= softmax_xent_all<float>(s[0], s[1], 1 + s[0]);
        bad |= softmax_xent_all<bf16_bits>(s[0], s[1], 2 + s[0]);
    }
    /* rows (features) off and on a block's 32; one chunk, several, chunks
     * of fewer columns than the 8 lanes */
    const int bg_shapes[][3] = {{1, 1, 1}, {31, 5, 1}, {33, 40, 3}, {100, 17, 7}, {64, 9, 9}};
    for (auto &s : bg_shapes) {
        bad |= bias_grad<float>(s[0], s[1], s[2], 3 + s[0]);
        bad |= bias_grad<bf16_bits>(s[0], s[1], s[2], 4 + s[0]);
    }
    /* n below a float4, off a float4, one block and several, the unrolled
     * loop (few blocks over many float4s) */
    const size_t ns[] = {1, 3, 1027, 5003};
    for (size_t n : ns)
        for (size_t off = 0; off < 2; off++)
            bad |= sum_squares(n, off, sq_blocks(n, off == 0), 5 + (unsigned)n);
    bad |= sum_squares(9001, 0, 2, 6);
    bad |= sum_squares(9001, 1, 3, 7);
    printf(bad ? "reductions_emulation: FAIL\n" : "reductions_emulation: all ok\n");
    return bad;
}
