/* `accubench run`: the output file, the device, the peak GEMM, then every
 * model x effective batch x split x mode x reduction, a row each. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_run.h"
#include "console_table.h"
#include "measure.h"
#include "ranges.h"
#include "run_metadata.h"
#include "sweep_state.h"
#include "version.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int make_dirs(const char *dir, char *why, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                snprintf(why, n, "cannot create output directory %s: %s", path, strerror(errno));
                return -1;
            }
            *p = c;
        }
        if (c == '\0')
            break;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(why, n, "output directory %s is not writable: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static void csv_path_for(const run_options *o, const backend *b, char *path, size_t n)
{
    if (o->csv_path[0]) {
        snprintf(path, n, "%s", o->csv_path);
        return;
    }
    char stamp[32];
    time_t now = time(NULL);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
    const char *profile = o->profile[0] ? o->profile : "custom";
    const char *base = strrchr(profile, '/');
    base = base ? base + 1 : profile;
    snprintf(path, n, "%s/accubench-%.*s-%s-%s-%s.csv", o->out_dir,
             (int)strcspn(base, "."), base, b->name, dtype_name(o->dtype), stamp);
}

static void fill_config(result_row *r, const sweep *s, const model_spec *ms, const split *sp,
                        exec_mode mode, reduction red)
{
    result_row_clear(r);
    snprintf(r->backend, sizeof r->backend, "%s", s->b->name);
    snprintf(r->device, sizeof r->device, "%s", s->b->device);
    snprintf(r->model, sizeof r->model, "%s", ms->name);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype_name(s->o->dtype));
    snprintf(r->mode, sizeof r->mode, "%s", mode_name(mode));
    snprintf(r->reduction, sizeof r->reduction, "%s", reduction_name(red));
    r->params = (int64_t)model_param_count(ms);
    r->effective_batch = sp->effective * sp->devices;
    r->micro_batch = sp->micro;
    r->accum_steps = sp->accum;
    r->last_micro_batch = sp->last;
    r->devices = sp->devices;
    r->flops_per_step = model_flops_per_step(ms, sp->effective);
    memory_need need;
    model_memory_need(ms, s->o->dtype, s->o->optimizer.kind, sp->micro, sp->effective,
                      s->o->buffers, &need);
    r->mem_need_bytes = (int64_t)need.total;
}

/* Whether a config fits: the user's cap, and the device's memory (where
 * that is the host's memory, the host copies of the check share it too). */
static int fits(const sweep *s, result_row *r)
{
    uint64_t need = (uint64_t)r->mem_need_bytes;
    if (s->o->mem_cap && need > s->o->mem_cap) {
        snprintf(r->note, sizeof r->note, "needs %llu bytes; over the cap of %llu",
                 (unsigned long long)need, (unsigned long long)s->o->mem_cap);
        return 0;
    }
    uint64_t host_copies =
        s->b->caps & BK_CAP_SHARES_HOST_MEMORY ? 3ull * r->params * sizeof(float) : 0;
    uint64_t usable = (uint64_t)(0.9 * (double)s->b->mem_total);
    if (s->b->mem_total && need + host_copies > usable) {
        snprintf(r->note, sizeof r->note, "needs %llu bytes; the device holds %llu",
                 (unsigned long long)(need + host_copies), (unsigned long long)s->b->mem_total);
        return 0;
    }
    return 1;
}

/* The progress line of the config this row is for. */
static void progress_row(sweep *s, const result_row *r)
{
    char label[RESULT_TEXT_LEN * 3];
    snprintf(label, sizeof label, "%s %s %lldx%lld %s %s", r->model, r->dtype,
             (long long)r->micro_batch, (long long)r->accum_steps, r->mode, r->reduction);
    progress_config(s->progress, label);
}

/* How many configs (rows) the sweep will visit. */
static int count_configs(const run_options *o)
{
    int micros[64], n = 0;
    for (int e = 0; e < o->n_effective; e++)
        n += options_micro_list(o, o->effective[e], micros, 64);
    return n * o->n_models * o->n_modes * o->n_reductions;
}

static int emit(sweep *s, const result_row *r)
{
    char why[400];
    if (strcmp(r->status, STATUS_ERROR) == 0)
        s->failures++;
    progress_config_done(s->progress);
    progress_clear(s->progress);
    if (!s->o->quiet)
        console_table_row(stdout, r);
    if (csv_writer_append(&s->csv, r, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return -1;
    }
    return 0;
}

/* Every config of one model and one effective batch. */
static int sweep_batch(sweep *s, model *m, int effective)
{
    const run_options *o = s->o;
    int micros[64];
    int n_micro = options_micro_list(o, effective, micros, 64);
    dataset d;
    input_spec in;
    model_input(&m->spec, &in);
    int data_rc = dataset_create(s->b, &in, effective, o->buffers, o->seed, &d);
    for (int i = 0; i < n_micro && !interrupted; i++) {
        split sp;
        char why[200];
        if (split_make(effective, micros[i], 1, &sp, why, sizeof why))
            continue; /* validated before the sweep */
        for (int mi = 0; mi < o->n_modes && !interrupted; mi++)
            for (int ri = 0; ri < o->n_reductions && !interrupted; ri++) {
                result_row r;
                fill_config(&r, s, &m->spec, &sp, o->modes[mi], o->reductions[ri]);
                progress_row(s, &r);
                if (data_rc)
                    row_status_from(&r, data_rc, s->b);
                else if (!fits(s, &r))
                    snprintf(r.status, sizeof r.status, "%s", STATUS_OOM);
                else
                    config_run(s, m, &d, &sp, o->modes[mi], o->reductions[ri], &r);
                if (interrupted)
                    break; /* the interrupted config's row is not complete */
                if (emit(s, &r))
                    return -1;
            }
    }
    if (!data_rc)
        dataset_destroy(&d);
    return 0;
}

/* Rows for every config of a model that could not even be created. */
static int emit_model_failure(sweep *s, const model_spec *ms, int rc)
{
    for (int e = 0; e < s->o->n_effective; e++) {
        int micros[64], n = options_micro_list(s->o, s->o->effective[e], micros, 64);
        for (int i = 0; i < n; i++)
            for (int mi = 0; mi < s->o->n_modes; mi++)
                for (int ri = 0; ri < s->o->n_reductions; ri++) {
                    split sp;
                    char why[200];
                    split_make(s->o->effective[e], micros[i], 1, &sp, why, sizeof why);
                    result_row r;
                    fill_config(&r, s, ms, &sp, s->o->modes[mi], s->o->reductions[ri]);
                    progress_row(s, &r);
                    if (rc == BK_OK) {
                        snprintf(r.status, sizeof r.status, "%s", STATUS_OOM);
                        fits(s, &r);
                    } else {
                        row_status_from(&r, rc, s->b);
                    }
                    if (emit(s, &r))
                        return -1;
                }
    }
    return 0;
}

/* The weights, gradients and optimizer state alone: if these do not fit,
 * no split of the model can. */
static int model_fits(const sweep *s, const model_spec *ms)
{
    result_row r;
    split sp = {.effective = 1, .micro = 1, .accum = 1, .last = 1, .devices = 1};
    fill_config(&r, s, ms, &sp, MODE_ASYNC, REDUCTION_SUM);
    return fits(s, &r);
}

int sweep_run(const run_options *o, const sweep_device *dev, const run_context *ctx)
{
    char why[400];
    backend *b = dev->b;
    sweep s = {.o = o, .b = b, .col = dev->col, .stop = &interrupted};
    b->mem_cap = (size_t)o->mem_cap;
    if (make_dirs(o->out_dir, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    char path[1200];
    csv_path_for(o, b, path, sizeof path);
    csv_writer_init(&s.csv, path);
    run_metadata_write(&s.csv, o, b, ctx, dev->note);
    csv_writer_meta(&s.csv, "dtype_choice", "%s", dev->dtype_note ? dev->dtype_note : "");
    if (csv_writer_flush(&s.csv, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    csv_writer_meta(&s.csv, "trace_source", "%s", dev->trace_source);

    struct sigaction sa = {0}, old_sa;
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old_sa);

    if (!o->quiet)
        printf("accubench %s on %s (%s), %s\n", ACCUBENCH_VERSION, b->device, b->name,
               b->library);
    int peak_n = 0, rc = measure_peak_gemm(b, &s.peak_tflops, &peak_n);
    if (rc) {
        fprintf(stderr, "accubench: measuring the peak GEMM rate failed: %s\n", b->error);
        s.failures++;
        s.peak_tflops = NAN;
    } else {
        csv_writer_meta(&s.csv, "peak_gemm_tflops", "%.4g", s.peak_tflops);
        csv_writer_meta(&s.csv, "peak_gemm_shape", "%dx%dx%d %s", peak_n, peak_n, peak_n,
                        dtype_name(o->dtype));
        csv_writer_meta(&s.csv, "peak_gemm_memory", "%zu bytes, outside the memory cap",
                        3 * (size_t)peak_n * (size_t)peak_n * storage_bytes(b->compute_storage));
        if (!o->quiet)
            printf("peak GEMM %dx%dx%d %s: %.3f TFLOP/s measured\n", peak_n, peak_n, peak_n,
                   dtype_name(o->dtype), s.peak_tflops);
    }
    if (b->datasheet_tflops > 0)
        csv_writer_meta(&s.csv, "datasheet_tflops", "%.4g", b->datasheet_tflops);
    else
        csv_writer_meta(&s.csv, "datasheet_tflops", "%s", "");
    if (!o->quiet) {
        printf("results: %s\n", path);
        console_table_header(stdout);
    }
    progress prog;
    progress_start(&prog, o->quiet ? NULL : stderr, count_configs(o), PROGRESS_SILENT_S);
    s.progress = &prog;

    range_push("run");
    int write_failed = 0;
    for (int mi = 0; mi < o->n_models && !interrupted && !write_failed; mi++) {
        const model_spec *ms = &o->models[mi];
        model m;
        int mrc = model_fits(&s, ms) ? model_create(b, ms, &o->optimizer, o->seed, &m) : BK_OK;
        if (mrc != BK_OK || !model_fits(&s, ms)) {
            write_failed = emit_model_failure(&s, ms, mrc) != 0;
            continue;
        }
        for (int e = 0; e < o->n_effective && !interrupted && !write_failed; e++)
            write_failed = sweep_batch(&s, &m, o->effective[e]) != 0;
        model_destroy(&m);
    }
    range_pop();
    progress_stop(&prog);
    sigaction(SIGINT, &old_sa, NULL);

    if (!write_failed && csv_writer_flush(&s.csv, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        write_failed = 1;
    }
    if (!o->quiet)
        printf("%zu rows written to %s\n", s.csv.count, path);
    csv_writer_free(&s.csv);
    if (interrupted) {
        fprintf(stderr, "accubench: interrupted; the rows measured so far are in %s\n", path);
        return 130;
    }
    if (write_failed)
        return 2;
    return s.failures ? 1 : 0;
}
