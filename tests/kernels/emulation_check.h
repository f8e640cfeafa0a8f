/* How the programs of tests/kernels/ that run the CUDA kernels on the
 * host judge what the kernels wrote: random inputs held both in the
 * storage and in double, and the relative L2 error against a float64
 * reference, NaN wherever the kernel left one (every output starts as
 * NaN, so an element never written fails). Included after the kernels'
 * headers (their load and store). */
#ifndef ACCUBENCH_EMULATION_CHECK_H
#define ACCUBENCH_EMULATION_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <random>
#include <utility>
#include <vector>

/* Relative L2 error; NaN where `got` has one; the absolute error where
 * the reference is all zeros. */
static inline double rel(const std::vector<double> &got, const std::vector<double> &want)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); i++) {
        if (std::isnan(got[i]))
            return NAN;
        num += (got[i] - want[i]) * (got[i] - want[i]);
        den += want[i] * want[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* n random values in [lo, hi) rounded to T, kept as T and as double. */
template <class T>
static void fill(std::mt19937 &rng, float lo, float hi, std::vector<T> &x, std::vector<double> &xd)
{
    std::uniform_real_distribution<float> u(lo, hi);
    for (size_t i = 0; i < x.size(); i++) {
        store(&x[i], 0, u(rng));
        xd[i] = load(&x[i], 0);
    }
}

/* A buffer as the kernel left it, in double. */
template <class T> static std::vector<double> widen(const std::vector<T> &x)
{
    std::vector<double> d(x.size());
    for (size_t i = 0; i < x.size(); i++)
        d[i] = load(&x[i], 0);
    return d;
}

/* n elements of T, each NaN: an output before the kernel writes it. */
template <class T> static std::vector<T> nans(size_t n)
{
    std::vector<T> x(n);
    for (auto &v : x)
        store(&v, 0, NAN);
    return x;
}

template <class T> static const char *storage_name() { return sizeof(T) == 4 ? "fp32" : "bf16"; }

/* The 16-byte path needs its rows aligned, as the launches check before
 * they take it (rows_vectorisable). */
static inline void need_aligned(const void *p)
{
    if ((uintptr_t)p % 16) {
        fprintf(stderr, "emulation: a buffer for a 16-byte path is not 16-byte aligned\n");
        abort();
    }
}

/* One line, "ok" or "FAIL", the shape and each output's error; 1 when one
 * is past tol (a NaN is). */
static inline int judge(const char *shape, const std::vector<std::pair<const char *, double>> &errs,
                 double tol)
{
    int bad = 0;
    for (auto &e : errs)
        bad |= !(e.second <= tol);
    printf("%s %s:", bad ? "FAIL" : "ok  ", shape);
    for (auto &e : errs)
        printf(" %s %.2e", e.first, e.second);
    printf("\n");
    return bad;
}

#endif
