/* The subset of CUDA's bf16 type and its WMMA API (nvcuda::wmma, bf16
 * m16n16k16 with fp32 accumulators) that the fused attention's
 * tensor-core products use (kernels/cuda/cuda_flash_mma.cuh), on the host,
 * for tests/kernels/flash_emulation.cc: included there after threadIdx,
 * emu_smem and emu_smem_floats, and never seen by the real build.
 *
 * A fragment holds its whole tile, row-major, as floats (a bf16 operand's
 * values exactly: the bits widen). An operand's is loaded in every lane
 * (with the layout and ldm); an accumulator's is loaded, multiplied into
 * and stored by lane 0 alone, once a warp (the real calls are a warp's
 * collective work; the kernels publish what is stored with the
 * __syncthreads after it), so that no lane reads a tile its warp's lane 0
 * is writing. mma_sync accumulates in fp32, each product of two bf16
 * exact in fp32; the device's order of the 16 additions of a k step (and
 * its rounding within them) is not given, so a last bit may differ. Every
 * load and store checks what the device needs, and aborts with the reason
 * otherwise: ldm a multiple of 16 bytes (8 bf16, 4 floats), the tile
 * 32-byte aligned from the base of the block's shared memory, and inside
 * it. */
#ifndef ACCUBENCH_WMMA_EMULATION_H
#define ACCUBENCH_WMMA_EMULATION_H

#define FA_WMMA_EMULATED

#include <cmath>
#include <type_traits>

/* cuda_bf16.h's type and the two conversions the kernels use */
struct __nv_bfloat16 {
    unsigned short x;
};
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16{u}; }
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    return __nv_bfloat16{ew_f32_to_bf16_bits(f)}; /* to nearest, ties to even */
}

namespace nvcuda {
namespace wmma {

struct row_major; /* incomplete, as the real ones are */
struct col_major;
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
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

/* The device's demands on a tile of rows x cols elements of `size` bytes
 * at p, row stride ldm elements in the layout `row` says (else the
 * columns are strided). */
static inline void check_tile(const void *p, size_t size, unsigned ldm, int rows, int cols,
                              bool row, const char *what)
{
    const long off = (long)((const char *)p - (const char *)emu_smem);
    const long last = off + ((long)(row ? rows - 1 : cols - 1) * (long)ldm +
                             (row ? cols : rows)) * (long)size;
    const char *why = nullptr;
    if (ldm * size % 16)
        why = "ldm is not a multiple of 16 bytes";
    else if (off % 32)
        why = "the tile is not 32-byte aligned in shared memory";
    else if (off < 0 || last > (long)(emu_smem_floats * sizeof(float)))
        why = "the tile is outside shared memory";
    if (why) {
        fprintf(stderr, "wmma emulation: %s: %s (offset %ld bytes, ldm %u elements of %zu)\n",
                what, why, off, ldm, size);
        abort();
    }
}

template <class Use, int M, int N, int K, class L>
static inline void load_matrix_sync(fragment<Use, M, N, K, __nv_bfloat16, L> &f,
                                    const __nv_bfloat16 *p, unsigned ldm)
{
    using F = fragment<Use, M, N, K, __nv_bfloat16, L>;
    constexpr bool row = std::is_same<L, row_major>::value;
    check_tile(p, sizeof *p, ldm, F::rows, F::cols, row, "load_matrix_sync");
    for (int r = 0; r < F::rows; r++)
        for (int c = 0; c < F::cols; c++)
            f.x[r * F::cols + c] = ew_bf16_bits_to_f32((row ? p[r * ldm + c] : p[c * ldm + r]).x);
}

template <int K> using acc_fragment = fragment<accumulator, 16, 16, K, float>;

template <int K>
static inline void load_matrix_sync(acc_fragment<K> &f, const float *p, unsigned ldm, layout_t l)
{
    check_tile(p, sizeof *p, ldm, 16, 16, l == mem_row_major, "load_matrix_sync (accumulator)");
    if (!lane0())
        return;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            f.x[r * 16 + c] = l == mem_row_major ? p[r * ldm + c] : p[c * ldm + r];
}

template <int K>
static inline void store_matrix_sync(float *p, const acc_fragment<K> &f, unsigned ldm, layout_t l)
{
    check_tile(p, sizeof *p, ldm, 16, 16, l == mem_row_major, "store_matrix_sync");
    if (!lane0())
        return;
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            (l == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[r * 16 + c];
}

template <int K> static inline void fill_fragment(acc_fragment<K> &f, float v)
{
    for (int i = 0; i < 256; i++)
        f.x[i] = v;
}

template <class LA, class LB>
static inline void mma_sync(acc_fragment<16> &d,
                            const fragment<matrix_a, 16, 16, 16, __nv_bfloat16, LA> &a,
                            const fragment<matrix_b, 16, 16, 16, __nv_bfloat16, LB> &b,
                            const acc_fragment<16> &c)
{
    if (!lane0())
        return;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = c.x[i * 16 + j];
            for (int k = 0; k < 16; k++)
                s = fmaf(a.x[i * 16 + k], b.x[k * 16 + j], s);
            d.x[i * 16 + j] = s;
        }
}

} // namespace wmma
} // namespace nvcuda

#endif
