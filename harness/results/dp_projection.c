/* The ring all-reduce model, its fit, and the projection table (see
 * dp_projection.h). */
#include "dp_projection.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv_load.h"
#include "csv_read.h"
#include "plural.h"
#include "reduction.h"
#include "report_parts.h"
#include "stats.h"

#define MAX_SAMPLES 4096
#define MAX_SPLITS 64

double ring_allreduce_s(const ring_model *m, double bytes, int devices)
{
    if (devices < 2)
        return 0;
    double n = devices;
    return 2 * (n - 1) / n * bytes / m->bw_bytes_per_s + 2 * (n - 1) * m->latency_s;
}

/* Below this share of sxx x syy the determinant is taken for zero: the
 * samples' x and y are proportional, up to rounding. */
#define DEGENERATE_DET 1e-9

/* The model is t = a x + b y with x = 2 (N - 1) / N B, y = 2 (N - 1),
 * a = 1 / bw, b = lat; each sample's equation is divided by its t. */
int ring_fit(const allreduce_sample *s, int n, ring_model *out, char *note, size_t note_len)
{
    note[0] = '\0';
    if (n < 2) {
        snprintf(note, note_len, "%d all-reduce sample%s: the fit needs two at least", n,
                 n == 1 ? "" : "s");
        return -1;
    }
    double sxx = 0, sxy = 0, syy = 0, sx = 0, sy = 0;
    for (int i = 0; i < n; i++) {
        double d = s[i].devices;
        double x = 2 * (d - 1) / d * s[i].bytes / s[i].seconds, y = 2 * (d - 1) / s[i].seconds;
        sxx += x * x;
        sxy += x * y;
        syy += y * y;
        sx += x;
        sy += y;
    }
    /* x / y is a sample's bytes per device: where every sample has the same
     * (one gradient size at one device count, as a sweep over splits
     * gives), x and y are proportional and the determinant is rounding
     * noise, whose quotient would be printed as a fitted bandwidth and
     * latency (2^31 B/s and 0 in one such file). Relative to its terms, so
     * that no scale of the figures passes it. */
    double det = sxx * syy - sxy * sxy;
    if (!(det > DEGENERATE_DET * sxx * syy)) {
        double a = sx / sxx;
        snprintf(note, note_len, "every sample moves the same bytes per device, which cannot "
                 "tell a latency from a bandwidth: bandwidth alone");
        if (!(a > 0)) {
            snprintf(note, note_len, "no positive bandwidth fits these samples");
            return -1;
        }
        out->bw_bytes_per_s = 1 / a;
        out->latency_s = 0;
        return 0;
    }
    double a = (sx * syy - sy * sxy) / det;
    double b = (sy * sxx - sx * sxy) / det;
    if (!(b >= 0) || !(a > 0)) {
        /* Bandwidth alone: the samples do not tell a latency apart. */
        a = sx / sxx;
        b = 0;
        snprintf(note, note_len, "no positive latency fits these samples: bandwidth alone");
    }
    if (!(a > 0)) {
        snprintf(note, note_len, "no positive bandwidth fits these samples");
        return -1;
    }
    out->bw_bytes_per_s = 1 / a;
    out->latency_s = b;
    return 0;
}

/* Rows whose communication was all exposed block on their all-reduces:
 * their busy time is the transfers alone. */
#define BLOCKING_SHARE 0.95

int allreduce_samples(const csv_row *rows, size_t n, allreduce_sample *out, int max)
{
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &rows[i];
        if (!result_measured(r) || r->devices < 2 || !(r->allreduce_calls_per_step > 0) ||
            !(r->comm_ms > 0) || !(r->comm_exposed_ms >= BLOCKING_SHARE * r->comm_ms))
            continue;
        if (k++ >= max)
            continue; /* counted, so that the caller can say it was left out */
        out[k - 1] = (allreduce_sample){
            .bytes = r->allreduce_bytes_per_step / r->allreduce_calls_per_step,
            .devices = (int)r->devices,
            .seconds = r->comm_ms / r->allreduce_calls_per_step * 1e-3,
        };
    }
    return k;
}

static int in_list(const int *list, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

/* One split on one device, as measured: what a step computes. */
typedef struct split_compute {
    size_t first; /* the split's first row */
    double compute_ms[256];
    int n;
} split_compute;

static int same_text(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

/* Rows of one split whatever their sync mode and device count: their
 * computes are of the same work. The levers that change the work
 * (recompute, the shard, the gradient's dtype) keep their splits apart,
 * or one line would show the median of configs that none of them is. */
static int same_dp_split(const csv_row *a, const csv_row *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->backend, b->backend) && !strcmp(a->mode, b->mode) &&
           a->micro_batch == b->micro_batch && a->accum_steps == b->accum_steps &&
           same_text(a->recompute, b->recompute) && same_text(a->shard, b->shard) &&
           same_text(a->grad_dtype, b->grad_dtype);
}

/* The split's model with the levers it was measured under (not its sync,
 * which the projection replaces): "tiny", "tiny, recompute block". */
static void split_label(const csv_row *r, char *out, size_t len)
{
    csv_row unsynced = *r;
    unsynced.sync = "";
    snprintf(out, len, "%s%s", r->model, rp_levers(&unsynced).s);
}

/* Each split's compute per step: the step less its exposed communication
 * (the whole step where there was none), every row of that split (a
 * config run again too), a config timed twice once (its first arm). */
static int gather_splits(const csv_row *rows, size_t n, split_compute *out, int max,
                         int *left_out)
{
    int k = 0;
    *left_out = 0;
    for (size_t i = 0; i < n; i++) {
        const csv_row *r = &rows[i];
        if (!result_measured(r) || !reduction_exact_named(r->reduction))
            continue;
        double exposed = r->comm_exposed_ms > 0 ? r->comm_exposed_ms : 0;
        double compute = r->step_ms_median - exposed;
        if (!(compute > 0))
            continue;
        int j = 0;
        while (j < k && !same_dp_split(&rows[out[j].first], r))
            j++;
        if (j == k) {
            if (k == max) {
                ++*left_out; /* a row of a split past the table: said, not drawn */
                continue;
            }
            out[k].first = i;
            out[k++].n = 0;
        }
        if (out[j].n < (int)(sizeof out[j].compute_ms / sizeof out[j].compute_ms[0]))
            out[j].compute_ms[out[j].n++] = compute;
    }
    return k;
}

/* How far the model is from the samples it was not fitted on, per device
 * count: the median measured all-reduce against the model's. */
static void print_check(FILE *out, const ring_model *m, const allreduce_sample *s, int n,
                        const projection_options *o)
{
    int seen[64], n_seen = 0, any = 0;
    for (int i = 0; i < n; i++) {
        int d = s[i].devices;
        if ((!o->n_fit_devices || in_list(o->fit_devices, o->n_fit_devices, d)) ||
            in_list(seen, n_seen, d) || n_seen == 64)
            continue;
        seen[n_seen++] = d;
        double err[MAX_SAMPLES], meas[MAX_SAMPLES], bytes = 0;
        int k = 0;
        for (int j = 0; j < n; j++)
            if (s[j].devices == d) {
                double model = ring_allreduce_s(m, s[j].bytes, d);
                err[k] = fabs(model - s[j].seconds) / s[j].seconds * 100;
                meas[k++] = s[j].seconds * 1e3;
                bytes = s[j].bytes;
            }
        fprintf(out, "# check at %d devices (not fitted): %d all-reduce %s, measured median "
                "%.4g ms (e.g. %.3g MB: model %.4g ms); the model is off by a median %.0f%%\n",
                d, k, plural(k, "sample", "samples"), stats_median(meas, (size_t)k), bytes / 1e6,
                ring_allreduce_s(m, bytes, d) * 1e3, stats_median(err, (size_t)k));
        any = 1;
    }
    if (!any && o->n_fit_devices)
        fprintf(out, "# check: every device count of the file was fitted on; none left to "
                "check the model against\n");
}

static void print_projection(FILE *out, const ring_model *m, const csv_row *rows,
                             const split_compute *sc, int n, const projection_options *o)
{
    fprintf(out, "# projection (a model, not a measurement): each device keeps the split it "
            "was measured at (E = micro x K x N grows with N), computes as measured, and "
            "all-reduces its fp32 gradient with the ring model above, not overlapped\n");
    fprintf(out, "# %-24s %7s %7s %11s %10s %14s %10s %14s %8s\n", "model", "micro", "K",
            "compute_ms", "devices", "per_micro_ms", "comm_pct", "per_window_ms", "comm_pct");
    for (int i = 0; i < n; i++) {
        const csv_row *r = &rows[sc[i].first];
        double compute = stats_median(sc[i].compute_ms, (size_t)sc[i].n);
        double bytes = (double)r->params * 4;
        char label[256];
        split_label(r, label, sizeof label);
        for (int j = 0; j < o->n_devices; j++) {
            int d = o->devices[j];
            double t = ring_allreduce_s(m, bytes, d) * 1e3;
            double micro = compute + (double)r->accum_steps * t, window = compute + t;
            fprintf(out, "  %-24s %7lld %7lld %11.4g %10d %14.4g %10.1f %14.4g %8.1f\n", label,
                    (long long)r->micro_batch, (long long)r->accum_steps, compute, d, micro,
                    100 * (micro - compute) / micro, window, 100 * (window - compute) / window);
        }
    }
}

/* Samples past the table are said to be left out, never silently. */
static void note_left_out(FILE *out, int in_file, int used)
{
    if (in_file > used)
        fprintf(out, "# note: the file holds %d all-reduce samples; the first %d are used, "
                "%d ignored (at most %d are read)\n", in_file, used, in_file - used,
                MAX_SAMPLES);
}

int projection_main(FILE *out, const projection_options *o)
{
    csv_table t;
    csv_row *rows = NULL;
    char why[600];
    if (csv_load(o->csv_path, csv_required_columns, &t, &rows, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    static allreduce_sample all[MAX_SAMPLES], fit[MAX_SAMPLES];
    int in_file = allreduce_samples(rows, t.rows, all, MAX_SAMPLES), n_fit = 0;
    int n_all = in_file < MAX_SAMPLES ? in_file : MAX_SAMPLES;
    note_left_out(out, in_file, n_all);
    for (int i = 0; i < n_all; i++)
        if (!o->n_fit_devices || in_list(o->fit_devices, o->n_fit_devices, all[i].devices))
            fit[n_fit++] = all[i];
    ring_model m = {0};
    char note[200] = "";
    int rc = 0;
    if (o->bw_gbps > 0 && o->latency_us >= 0) {
        m = (ring_model){o->bw_gbps * 1e9, o->latency_us * 1e-6};
        fprintf(out, "# ring all-reduce model (given): bw %.4g GB/s, latency %.4g us\n",
                o->bw_gbps, o->latency_us);
    } else if (ring_fit(fit, n_fit, &m, note, sizeof note)) {
        fprintf(stderr, "accubench: %s: %s (blocking all-reduces of 2 or more devices%s)\n",
                o->csv_path, note, o->n_fit_devices ? " at the --fit-devices counts" : "");
        rc = n_all ? 1 : 2; /* no data-parallel row at all: the wrong file, bad input */
    } else {
        double err[MAX_SAMPLES];
        for (int i = 0; i < n_fit; i++)
            err[i] = fabs(ring_allreduce_s(&m, fit[i].bytes, fit[i].devices) - fit[i].seconds) /
                     fit[i].seconds * 100;
        fprintf(out, "# ring all-reduce model: t = 2(N-1)/N x bytes / bw + 2(N-1) x latency\n");
        fprintf(out, "# fitted on %d blocking all-reduce samples of %s: bw %.4g GB/s, latency "
                "%.4g us; median fit error %.0f%%%s%s\n", n_fit, o->csv_path,
                m.bw_bytes_per_s / 1e9, m.latency_s * 1e6, stats_median(err, (size_t)n_fit),
                note[0] ? "; " : "", note);
    }
    if (!rc) {
        print_check(out, &m, all, n_all, o);
        static split_compute sc[MAX_SPLITS];
        int rows_left_out;
        int n_splits = gather_splits(rows, t.rows, sc, MAX_SPLITS, &rows_left_out);
        if (rows_left_out)
            fprintf(out, "# projected: the first %d splits of the file; %d %s of later splits "
                    "ignored (the table holds %d)\n", MAX_SPLITS, rows_left_out,
                    plural(rows_left_out, "row", "rows"), MAX_SPLITS);
        if (!n_splits) {
            fprintf(stderr, "accubench: %s: no measured step to project\n", o->csv_path);
            rc = 1;
        } else {
            print_projection(out, &m, rows, sc, n_splits, o);
        }
    }
    free(rows);
    csv_free(&t);
    return rc;
}
