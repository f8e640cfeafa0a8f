/* The fused attention's small products (cpu_small_product.h). At gpt-cpu's
 * shape each is 64 x 64 x 32 or smaller, with its operands in L1: one
 * library call each cost about 2.6 us, a fifth of it outside the kernel
 * (its dispatch and bookkeeping), and could skip none of the causal mask's
 * zeros. Here C's rows go in groups of 4 against 16 columns, 8
 * accumulators of 8 floats that stay in registers while the terms stream
 * through: for each term, two loads of B's row, four broadcasts of A's
 * elements and 8 fused multiply-adds. */
#include "cpu_small_product.h"

#include <string.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "cpu_lanes.h"

#define GROUP_ROWS 4

#define PRODUCT_INLINE static inline __attribute__((always_inline))

/* Eight floats, one AVX2 register: the accumulators are of this width,
 * not cpu_lanes.h's 16, so that a group's 4 rows x 16 columns (8 of them)
 * and B's row (2) stay in AVX2's 16 registers. With 16-float vectors GCC
 * kept them on the stack in the x86-64-v3 clone (perf annotate: every
 * multiply-add read and wrote memory), and the Llama's fused attention
 * took 30% longer than with these at llama-cpu's shape. */
typedef float eight __attribute__((vector_size(8 * sizeof(float))));
#define EIGHT 8
/* The columns one group covers: LANES, so that lanes_cover's bounds are
 * whole groups. */
#define GROUP_COLUMNS LANES

PRODUCT_INLINE eight eight_load(const float *p)
{
    eight v;
    memcpy(&v, p, sizeof v);
    return v;
}

PRODUCT_INLINE void eight_store(float *p, eight v)
{
    memcpy(p, &v, sizeof v);
}

/* Rows i0 .. i0 + rows of C, columns n0 .. n0 + GROUP_COLUMNS, over terms
 * r_lo .. r_hi. rows is a constant where this is inlined, so that acc is
 * registers. */
PRODUCT_INLINE void group(const small_product *g, int i0, int rows, int n0, int r_lo, int r_hi)
{
    enum { VECTORS = GROUP_COLUMNS / EIGHT };
    eight acc[GROUP_ROWS][VECTORS] = {{{0}}};
    for (int r = r_lo; r < r_hi; r++) {
        const float *b = g->b + (size_t)r * g->ldb + n0;
        eight bv[VECTORS];
        for (int v = 0; v < VECTORS; v++)
            bv[v] = eight_load(b + v * EIGHT);
        for (int i = 0; i < rows; i++) {
            float a = g->a[(size_t)(i0 + i) * g->a_row + (size_t)r * g->a_term];
            for (int v = 0; v < VECTORS; v++)
                acc[i][v] += a * bv[v];
        }
    }
    for (int i = 0; i < rows; i++)
        for (int v = 0; v < VECTORS; v++) {
            float *c = g->c + (size_t)(i0 + i) * g->ldc + n0 + v * EIGHT;
            eight_store(c, g->accumulate ? eight_load(c) + acc[i][v] : acc[i][v]);
        }
}

/* Rows i0 .. i0 + rows, every column up to n_hi (a whole number of
 * groups: n and lanes_cover's bounds are multiples of LANES). */
PRODUCT_INLINE void row_group(const small_product *g, int i0, int rows, int n_hi, int r_lo,
                              int r_hi)
{
    for (int n0 = 0; n0 < n_hi; n0 += GROUP_COLUMNS)
        group(g, i0, rows, n0, r_lo, r_hi);
}

static int lanes_cover(int n)
{
    return (n + LANES - 1) / LANES * LANES;
}

CPU_HOT static void product_in_registers(const small_product *g)
{
    for (int i0 = 0; i0 < g->m; i0 += GROUP_ROWS) {
        int rows = g->m - i0 < GROUP_ROWS ? g->m - i0 : GROUP_ROWS, i1 = i0 + rows;
        int n_hi = g->n, r_lo = 0, r_hi = g->k;
        if (g->limit == LIMIT_COLUMNS_UPTO && lanes_cover(i1 + g->shift) < n_hi)
            n_hi = lanes_cover(i1 + g->shift > 0 ? i1 + g->shift : 0);
        if (g->limit == LIMIT_TERMS_UPTO && i1 + g->shift < r_hi)
            r_hi = i1 + g->shift;
        if (g->limit == LIMIT_TERMS_FROM && i0 + g->shift > 0)
            r_lo = i0 + g->shift;
        if (rows == GROUP_ROWS)
            row_group(g, i0, GROUP_ROWS, n_hi, r_lo, r_hi);
        else
            for (int i = i0; i < i1; i++)
                row_group(g, i, 1, n_hi, r_lo, r_hi);
    }
}

/* Row-major C = A B is column-major C^T = B^T A^T: B's rows are B^T's
 * columns, and A^T is column-major with A's row stride where A's terms
 * are contiguous, else transposed. */
static void product_through_library(const small_product *g)
{
    int transposed = g->a_term != 1;
    cpu_sgemm_in_loop(0, transposed, g->n, g->m, g->k, 1.0f, g->b, (int)g->ldb, g->a,
                      (int)(transposed ? g->a_term : g->a_row), g->accumulate ? 1.0f : 0.0f,
                      g->c, (int)g->ldc);
}

void small_product_run(const small_product *g)
{
    if (g->m <= 0 || g->n <= 0)
        return;
    if (g->n % LANES == 0)
        product_in_registers(g);
    else
        product_through_library(g);
}
