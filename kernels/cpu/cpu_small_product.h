/* The small products of the fused attention (cpu_attention.c): C = A B
 * (or C += A B) on the calling thread, row-major, B's and C's rows
 * contiguous, A read element by element through two strides, and causal
 * limits that skip what a mask would zero anyway. Seen only by
 * kernels/cpu/. */
#ifndef ACCUBENCH_CPU_SMALL_PRODUCT_H
#define ACCUBENCH_CPU_SMALL_PRODUCT_H

#include <stddef.h>

/* What a row group of C skips: row i's last term or column, or its first
 * term, is i + shift (a query's last key, a key's first query). */
typedef enum causal_limit {
    LIMIT_NONE,
    LIMIT_COLUMNS_UPTO, /* row i's columns n <= i + shift; the rest of its lanes' worth
                           may be written too, and the rest of the row is left as it is */
    LIMIT_TERMS_UPTO,   /* row i sums terms r <= i + shift */
    LIMIT_TERMS_FROM,   /* row i sums terms r >= i + shift */
} causal_limit;

typedef struct small_product {
    int m, n, k; /* C is m x n, the sum over r < k */
    const float *a;
    size_t a_row, a_term; /* a(i, r) = a[i * a_row + r * a_term]; one of them is 1 */
    const float *b;
    size_t ldb; /* b(r, :) starts at b + r * ldb */
    float *c;
    size_t ldc; /* c(i, :) starts at c + i * ldc */
    int accumulate; /* C += A B rather than C = A B */
    causal_limit limit;
    int shift;
} small_product;

/* Where n is a multiple of 16, in registers, row groups of 4 against 32
 * columns at a time, a limit skipping what it names; else through the GEMM
 * library on this thread (cpu_sgemm_in_loop), every term and column. Both
 * give the same C wherever the limit's skipped terms are zero. */
void small_product_run(const small_product *g);

#endif
