/* The checks' results: one list, printed as each is appended. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gpu_check.h"
#include "gradcheck.h"

#define MAX_RESULTS 1024
static check_result results[MAX_RESULTS];
static int n_results;

/* The CSV, when asked for: open from the start, a row appended and flushed
 * per result, so that it holds every result so far if the run is cut off. */
static FILE *csv;
static int csv_failed;

static void csv_append(check_result *r)
{
    for (char *c = r->note; *c; c++) /* the note is the last column: no commas */
        if (*c == ',')
            *c = ';';
    if (fprintf(csv, "%s,%s,%s,%.6g,%.6g,%s,%s\n", r->check, r->dtype, r->split, r->error,
                r->tolerance, r->passed ? "ok" : "FAIL", r->note) < 0 ||
        fflush(csv))
        csv_failed = 1;
}

void record(const char *check, dtype d, const char *split, double error,
                   double tolerance, const char *note)
{
    if (n_results == MAX_RESULTS)
        return;
    check_result *r = &results[n_results++];
    snprintf(r->check, sizeof r->check, "%s", check);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype_name(d));
    snprintf(r->split, sizeof r->split, "%s", split ? split : "");
    r->error = error;
    r->tolerance = tolerance;
    r->passed = error <= tolerance; /* NaN compares false */
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    printf("%-4s %-26s %-5s %-10s error %-10.3g tol %-7.0e %s\n", r->passed ? "ok" : "FAIL",
           r->check, r->dtype, r->split, error, tolerance, r->note);
    fflush(stdout);
    if (csv)
        csv_append(r);
}

/* A check that could not run: the backend said why. */
void record_failure(const char *check, dtype d, const char *split, const backend *b)
{
    record(check, d, split, NAN, 0, b->error);
}

/* Relative L2 error, NaN when either side has a NaN. */
double rel_err(const float *got, const float *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isnan(got[i]) || isnan(want[i]))
            return NAN;
    return relative_error(got, want, n);
}

int check_results_count(void)
{
    return n_results;
}

int check_results_failed(void)
{
    int failed = 0;
    for (int i = 0; i < n_results; i++)
        failed += !results[i].passed;
    return failed;
}

int check_results_open_csv(const char *path, char *why, size_t why_len)
{
    csv = fopen(path, "w");
    if (!csv) {
        snprintf(why, why_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    csv_failed = 0;
    fprintf(csv, "# gpu-check: device against the CPU reference; error = relative L2\n");
    fprintf(csv, "check,dtype,split,error,tolerance,status,note\n");
    if (fflush(csv))
        csv_failed = 1;
    return 0;
}

int check_results_close_csv(void)
{
    if (!csv)
        return 0;
    int failed = csv_failed | ferror(csv);
    failed |= fclose(csv) != 0;
    csv = NULL;
    return failed ? -1 : 0;
}
