/* gemm-bench: the CPU backend's GEMM, one shape at a time.
 *
 *   gemm-bench [--reps N] SHAPE... | --help
 *
 * SHAPE is MxNxK with an optional :TT (N or T for A and for B, as the run
 * CSV's gemm_shapes column writes them, e.g. 128x1024x512:TN): C (M x N)
 * = op(A) op(B), column-major, fp32, beta 0. Each shape is run through
 * cpu_sgemm (the backend's own cut between threads, its library inside) N
 * times after one warm-up call, and printed as one line:
 *
 *   128x1024x512 TN  median 0.671 ms  p10 0.640 ms  200.0 GFLOP/s
 *
 * the rate at the median. bench/peers/peer_gemm.py runs it beside
 * PyTorch's torch.mm on the same shapes: what the GEMM library alone
 * gives each side, out of the step.
 *
 * Exit status: 0; 1 out of memory; 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_backend.h"
#include "cpu_gemm.h"
#include "parse.h"
#include "stats.h"

#define MAX_SHAPES 64
#define MAX_REPS 10000

typedef struct shape {
    int m, n, k, trans_a, trans_b;
} shape;

static void gemm_usage(FILE *f)
{
    fprintf(f, "usage: gemm-bench [--reps N] MxNxK[:TT]... (TT: N or T for A, then B; "
               "default NN; --reps default 51)\n");
}

static int gemm_bad_usage(const char *why)
{
    fprintf(stderr, "gemm-bench: %s\n", why);
    gemm_usage(stderr);
    return 2;
}

/* A shape's three matrices against the host's memory: 65536^3 needs 48 GiB,
 * and filling it page by page would take the machine's memory for minutes
 * before malloc's promise failed. 0 when they fit, else -1 with the reason. */
static int fits_host(const shape *s, const char *text, char *why, size_t why_len)
{
    double bytes = ((double)s->m * s->k + (double)s->k * s->n + (double)s->m * s->n) *
                   sizeof(float);
    double host = (double)cpu_host_memory_bytes();
    if (host <= 0 || bytes <= host)
        return 0;
    snprintf(why, why_len, "shape %s needs %.3g GiB for A, B and C, over the host's %.3g GiB "
             "of memory (refused)", text, bytes / (1u << 30), host / (1u << 30));
    return -1;
}

/* "MxNxK" or "MxNxK:TT". 0, or -1 with the reason. */
static int parse_gemm_shape(const char *text, shape *s, char *why, size_t why_len)
{
    char dims[64], flags[3] = "NN", tail;
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (len >= sizeof dims || (colon && strlen(colon + 1) != 2)) {
        snprintf(why, why_len, "shape '%s' is not MxNxK[:TT]", text);
        return -1;
    }
    memcpy(dims, text, len);
    dims[len] = '\0';
    if (colon)
        memcpy(flags, colon + 1, 2);
    long m, n, k;
    if (sscanf(dims, "%ldx%ldx%ld%c", &m, &n, &k, &tail) != 3 || m < 1 || n < 1 || k < 1 ||
        m > 1 << 16 || n > 1 << 16 || k > 1 << 16 || strchr("NT", flags[0]) == NULL ||
        strchr("NT", flags[1]) == NULL || !flags[0] || !flags[1]) {
        snprintf(why, why_len, "shape '%s' is not MxNxK[:TT] with sides 1 to 65536", text);
        return -1;
    }
    *s = (shape){(int)m, (int)n, (int)k, flags[0] == 'T', flags[1] == 'T'};
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Times one shape `reps` times and prints its line. 0, or 1 out of memory. */
static int bench_shape(const shape *s, int reps)
{
    size_t na = (size_t)s->m * s->k, nb = (size_t)s->k * s->n, nc = (size_t)s->m * s->n;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *c = malloc(nc * sizeof *c);
    double *ms = malloc((size_t)reps * sizeof *ms);
    int rc = !(a && b && c && ms);
    if (!rc) {
        for (size_t i = 0; i < na; i++)
            a[i] = (float)(i % 7) * 0.25f - 0.75f;
        for (size_t i = 0; i < nb; i++)
            b[i] = (float)(i % 5) * 0.25f - 0.5f;
        int lda = s->trans_a ? s->k : s->m, ldb = s->trans_b ? s->n : s->k;
        for (int r = -1; r < reps; r++) { /* r = -1: the warm-up */
            double t0 = now_s();
            cpu_sgemm(s->trans_a, s->trans_b, s->m, s->n, s->k, 1.0f, a, lda, b, ldb, 0.0f, c,
                      s->m);
            if (r >= 0)
                ms[r] = (now_s() - t0) * 1e3;
        }
        qsort(ms, (size_t)reps, sizeof *ms, by_value);
        double median = percentile_sorted(ms, (size_t)reps, 0.5);
        printf("%dx%dx%d %c%c  median %.3f ms  p10 %.3f ms  %.1f GFLOP/s\n", s->m, s->n, s->k,
               s->trans_a ? 'T' : 'N', s->trans_b ? 'T' : 'N', median,
               percentile_sorted(ms, (size_t)reps, 0.1),
               2.0 * s->m * s->n * s->k / (median * 1e-3) / 1e9);
    } else {
        fprintf(stderr, "gemm-bench: out of memory for %dx%dx%d\n", s->m, s->n, s->k);
    }
    free(a), free(b), free(c), free(ms);
    return rc;
}

int main(int argc, char **argv)
{
    shape shapes[MAX_SHAPES];
    int n = 0;
    long long reps = 51;
    char why[160];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            gemm_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--reps")) {
            if (i + 1 == argc)
                return gemm_bad_usage("--reps needs a value");
            if (parse_int("--reps", argv[++i], 1, MAX_REPS, &reps, why, sizeof why))
                return gemm_bad_usage(why);
            continue;
        }
        if (n == MAX_SHAPES)
            return gemm_bad_usage("at most 64 shapes");
        if (parse_gemm_shape(argv[i], &shapes[n++], why, sizeof why))
            return gemm_bad_usage(why);
        if (fits_host(&shapes[n - 1], argv[i], why, sizeof why)) {
            fprintf(stderr, "gemm-bench: %s\n", why); /* one line: the shape is well formed */
            return 2;
        }
    }
    if (n == 0)
        return gemm_bad_usage("no shape given");
    printf("# %s\n", cpu_blas_description());
    for (int i = 0; i < n; i++)
        if (bench_shape(&shapes[i], (int)reps))
            return 1;
    return 0;
}
