/* The checks' results: one list, printed as each is appended. */
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "csv_existing.h"
#include "gpu_check.h"
#include "gradcheck.h"

#define MAX_RESULTS 1024
static check_result results[MAX_RESULTS];
static int n_results;

/* The CSV, when asked for: reserved at the start, rewritten whole after
 * each result (its rows are the results: the list above). */
static const char *const csv_columns[] = {"check", "status", NULL};
static const csv_kind gpu_check_csv = {"a gpu-check CSV", csv_columns, 0};
static struct {
    int open;
    char path[1024];
    csv_lock lock;
    csv_existing existing; /* CSV_REPLACE: rows of an earlier run are there */
    int failed;
    char why[400]; /* the first write that failed */
} csv;

static int write_rows(FILE *f, void *ctx, char *why, size_t why_len)
{
    (void)ctx;
    (void)why;
    (void)why_len;
    fprintf(f, "# gpu-check: device against the CPU reference; error = relative L2\n");
    fprintf(f, "check,dtype,split,error,tolerance,status,note\n");
    for (int i = 0; i < n_results; i++) {
        const check_result *r = &results[i];
        fprintf(f, "%s,%s,%s,%.6g,%.6g,%s,%s\n", r->check, r->dtype, r->split, r->error,
                r->tolerance, r->passed ? "ok" : "FAIL", r->note);
    }
    return 0;
}

static void csv_write(void)
{
    char why[400];
    if (atomic_write_file(csv.path, write_rows, NULL, why, sizeof why) && !csv.failed) {
        csv.failed = 1;
        snprintf(csv.why, sizeof csv.why, "%s", why);
    }
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
    for (char *c = r->note; *c; c++) /* the note is the CSV's last column: no commas */
        if (*c == ',')
            *c = ';';
    /* On disk before it is printed: a check stopped part-way (as a stage
     * timeout stops it) leaves in the file every result it printed. */
    if (csv.open)
        csv_write();
    printf("%-4s %-26s %-5s %-10s error %-10.3g tol %-7.0e %.*s\n", r->passed ? "ok" : "FAIL",
           r->check, r->dtype, r->split, error, tolerance, (int)(sizeof r->note - 1),
           note ? note : "");
    fflush(stdout);
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

int check_results_open_csv(const char *path, int replace, char *why, size_t why_len)
{
    if (strlen(path) >= sizeof csv.path) {
        snprintf(why, why_len, "--csv %.60s...: a path of at most %zu characters", path,
                 sizeof csv.path - 1);
        return -1;
    }
    snprintf(csv.path, sizeof csv.path, "%s", path);
    if (csv_reserve("--csv", path, replace ? CSV_REPLACE : CSV_REFUSE, &gpu_check_csv,
                    &csv.lock, &csv.existing, why, why_len))
        return -1;
    csv.open = 1;
    csv.failed = 0;
    return 0;
}

int check_results_close_csv(char *why, size_t why_len)
{
    if (!csv.open)
        return 0;
    /* A new file gets its header even with no result; an old one is
     * replaced only by results. */
    if (!n_results && csv.existing != CSV_REPLACE)
        csv_write();
    csv_lock_release(&csv.lock);
    csv.open = 0;
    if (csv.failed)
        snprintf(why, why_len, "%s", csv.why);
    return csv.failed ? -1 : 0;
}
