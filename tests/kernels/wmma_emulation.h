/* The subset of CUDA's WMMA API (nvcuda::wmma, tf32 m16n16k8) that the
 * fused attention's tensor-core products use (kernels/cuda/
 * cuda_flash_mma.cuh), on the host, for tests/kernels/flash_emulation.cc:
 * included there after threadIdx, emu_smem and emu_smem_floats, and never
 * seen by the real build.
 *
 * A fragment holds its whole tile, row-major. An operand's is loaded in
 * every lane (with the layout and ldm); an accumulator's is loaded,
 * multiplied into and stored by lane 0 alone, once a warp (the real calls
 * are a warp's collective work; the kernels publish what is stored with
 * the __syncthreads after it), so that no lane reads a tile its warp's
 * lane 0 is writing. mma_sync drops the low 13 bits of its
 * operands' mantissas, as the hardware ignores them, so that a kernel
 * which does not round with __float_to_tf32 (ties away from zero, as
 * cvt.rna does) computes what the device would. Every load and store
 * checks what the device needs, and aborts with the reason otherwise: ldm
 * a multiple of 4 floats, the tile 32-byte aligned from the base of the
 * block's shared memory, and inside it. */
#ifndef ACCUBENCH_WMMA_EMULATION_H
#define ACCUBENCH_WMMA_EMULATION_H

#define FA_WMMA_EMULATED

#include <cmath>
#include <type_traits>

namespace nvcuda {
namespace wmma {

struct row_major; /* incomplete, as the real ones are */
struct col_major;
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
namespace precision {
struct tf32 {};
}
enum layout_t { mem_row_major, mem_col_major };

/* a fragment's tile: A is M x K, B is K x N, the accumulator M x N */
template <class Use, int M, int N, int K> struct shape_of {
    static constexpr int rows = M, cols = N;
};
template <int M, int N, int K> struct shape_of<matrix_a, M, N, K> {
    static constexpr int rows = M, cols = K;
};
template <int M, int N, int K> struct shape_of<matrix_b, M, N, K> {
    static constexpr int rows = K, cols = N;
};

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static constexpr int rows = shape_of<Use, M, N, K>::rows;
    static constexpr int cols = shape_of<Use, M, N, K>::cols;
    enum { num_elements = rows * cols };
    float x[num_elements]; /* element (r, c) at x[r * cols + c] */
};

static inline bool lane0() { return threadIdx.x % 32 == 0; }

/* The device's demands on a tile of rows x cols at p, row stride ldm in
 * the layout `row` says (else the columns are strided). */
static inline void check_tile(const float *p, unsigned ldm, int rows, int cols, bool row,
                              const char *what)
{
    const long off = (long)(p - emu_smem);
    const long last = off + (long)(row ? rows - 1 : cols - 1) * (long)ldm + (row ? cols : rows);
    const char *why = nullptr;
    if (ldm % 4)
        why = "ldm is not a multiple of 4 floats";
    else if (off % 8)
        why = "the tile is not 32-byte aligned in shared memory";
    else if (off < 0 || last > (long)emu_smem_floats)
        why = "the tile is outside shared memory";
    if (why) {
        fprintf(stderr, "wmma emulation: %s: %s (offset %ld floats, ldm %u)\n", what, why, off,
                ldm);
        abort();
    }
}

static inline float __float_to_tf32(float f)
{
    if (!std::isfinite(f))
        return f;
    unsigned u;
    memcpy(&u, &f, 4);
    u = (u + 0x1000u) & ~0x1fffu; /* to nearest, ties away from zero */
    memcpy(&f, &u, 4);
    return f;
}

static inline float tf32_truncated(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    u &= ~0x1fffu;
    memcpy(&f, &u, 4);
    return f;
}

template <class Use, int M, int N, int K, class L>
static inline void load_matrix_sync(fragment<Use, M, N, K, precision::tf32, L> &f, const float *p,
                                    unsigned ldm)
{
    using F = fragment<Use, M, N, K, precision::tf32, L>;
    constexpr bool row = std::is_same<L, row_major>::value;
    check_tile(p, ldm, F::rows, F::cols, row, "load_matrix_sync");
    for (int r = 0; r < F::rows; r++)
        for (int c = 0; c < F::cols; c++)
            f.x[r * F::cols + c] = row ? p[r * ldm + c] : p[c * ldm + r];
}

typedef fragment<accumulator, 16, 16, 8, float> acc_fragment;

static inline void load_matrix_sync(acc_fragment &f, const float *p, unsigned ldm, layout_t l)
{
    check_tile(p, ldm, 16, 16, l == mem_row_major, "load_matrix_sync (accumulator)");
    if (!lane0())
        return;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            f.x[r * 16 + c] = l == mem_row_major ? p[r * ldm + c] : p[c * ldm + r];
}

static inline void store_matrix_sync(float *p, const acc_fragment &f, unsigned ldm, layout_t l)
{
    check_tile(p, ldm, 16, 16, l == mem_row_major, "store_matrix_sync");
    if (!lane0())
        return;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            (l == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[r * 16 + c];
}

static inline void fill_fragment(acc_fragment &f, float v)
{
    for (int i = 0; i < 256; i++)
        f.x[i] = v;
}

template <class LA, class LB>
static inline void mma_sync(acc_fragment &d,
                            const fragment<matrix_a, 16, 16, 8, precision::tf32, LA> &a,
                            const fragment<matrix_b, 16, 16, 8, precision::tf32, LB> &b,
                            const acc_fragment &c)
{
    if (!lane0())
        return;
    float at[16][8], bt[8][16];
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 8; k++) {
            at[i][k] = tf32_truncated(a.x[i * 8 + k]);
            bt[k][i] = tf32_truncated(b.x[k * 16 + i]);
        }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = c.x[i * 16 + j];
            for (int k = 0; k < 8; k++)
                s = fmaf(at[i][k], bt[k][j], s);
            d.x[i * 16 + j] = s;
        }
}

} // namespace wmma
} // namespace nvcuda

#endif
