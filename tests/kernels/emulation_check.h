/* How the programs of tests/kernels/ that run the CUDA kernels on the
 * host judge what the kernels wrote: random inputs held both in the
 * storage and in double, and the relative L2 error against a float64
 * reference, NaN wherever the kernel left one (every output starts as
 * NaN, so an element never written fails). Included after the kernels'
 * headers (their load and store). */
#ifndef ACCUBENCH_EMULATION_CHECK_H
#define ACCUBENCH_EMULATION_CHECK_H

#include <math.h>

#include <random>
#include <vector>

/* Relative L2 error; NaN where `got` has one; the absolute error where
 * the reference is all zeros. */
static double rel(const std::vector<double> &got, const std::vector<double> &want)
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

#endif
