#include "sweep_peak.h"

#include <math.h>
#include <stdio.h>

#include "dispatch.h"
#include "measure.h"
#include "run_metadata.h"

/* One line of dtype i of n: NAME, or NAME_DTYPE for all but the last. */
#define META(key, ...)                                                                  \
    do {                                                                                \
        char name_[96];                                                                 \
        snprintf(name_, sizeof name_, "%s%s%s", key, last ? "" : "_", last ? "" : dn); \
        csv_writer_meta(&s->csv, name_, __VA_ARGS__);                                   \
    } while (0)

static void peak_of(sweep *s, const run_options *o, dtype dt, int last, const char *note)
{
    backend *b = s->b;
    const char *dn = dtype_name(dt);
    int peak_n = 0;
    double *peak = &s->peak_tflops[dt];
    if (measure_peak_gemm(b, o->budget_s, peak, &peak_n)) {
        fprintf(stderr, "accubench: measuring the peak GEMM rate in %s failed: %s\n", dn,
                b->error);
        s->failures++;
        *peak = NAN;
    } else {
        META("peak_gemm_tflops", "%.4g", *peak);
        META("peak_gemm_shape", "%dx%dx%d %s", peak_n, peak_n, peak_n, dn);
        META("peak_gemm_memory", "%zu bytes, outside the memory cap",
             3 * (size_t)peak_n * (size_t)peak_n * storage_bytes(b->compute_storage));
        if (!s->quiet)
            printf("peak GEMM %dx%dx%d %s: %.3f TFLOP/s measured\n", peak_n, peak_n, peak_n,
                   dn, *peak);
    }
    if (b->datasheet_tflops > 0)
        META("datasheet_tflops", "%.4g", b->datasheet_tflops);
    else
        META("datasheet_tflops", "%s", "");
    /* the plain ones replace run_metadata.c's, written in the first dtype */
    char attention[128];
    META("attention", "%s", run_metadata_attention(b, attention, sizeof attention));
    META("library", "%s", b->library);
    if (!last) /* the plain one is the run's (sweep.c) */
        META("dtype_choice", "%s", note ? note : "");
}

void sweep_peaks(sweep *s, const run_options *o, const char *dtype_note)
{
    for (int d = 0; d < DTYPE_COUNT; d++)
        s->peak_tflops[d] = NAN;
    for (int i = 0; i < o->n_dtypes; i++) {
        (void)bk_use_dtype(s->b, o->dtypes[i]); /* validated when the sweep began */
        peak_of(s, o, o->dtypes[i], i == o->n_dtypes - 1, dtype_note);
    }
    (void)bk_use_dtype(s->b, o->dtypes[0]);
}
