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

#include "backend_registry.h"
#include "csv_writer.h"
#include "dispatch.h"
#include "gradcheck.h"
#include "measure.h"
#include "names.h"
#include "ranges.h"
#include "trace_pass.h"
#include "version.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The largest relative gradient error a correct (`sum`) window may show. */
static double grad_tolerance(dtype d)
{
    return d == DTYPE_BF16 ? 1e-2 : d == DTYPE_TF32 ? 1e-3 : 1e-5;
}

/* Everything shared by the configs of one run. */
typedef struct sweep {
    const run_options *o;
    backend *b;
    collector *col;
    csv_writer csv;
    double peak_tflops;
    int trace_written;
    int failures;
} sweep;

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

static void list_columns(char *out, size_t n, const char *pass)
{
    size_t used = 0;
    out[0] = '\0';
#define ADD(name, type, p)                                                         \
    if (strcmp(#p, pass) == 0 && used < n)                                         \
        used += (size_t)snprintf(out + used, n - used, "%s%s", used ? " " : "", #name);
    RESULT_COLUMNS(ADD)
#undef ADD
}

static void write_metadata(sweep *s, const run_context *ctx, const char *note)
{
    const run_options *o = s->o;
    csv_writer *w = &s->csv;
    char date[32], host[128] = "unknown", cols[1024];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    gethostname(host, sizeof host);
    csv_writer_meta(w, "tool_version", "%s", ACCUBENCH_VERSION);
    csv_writer_meta(w, "git_revision", "%s", ctx->git_rev);
    csv_writer_meta(w, "date", "%s", date);
    csv_writer_meta(w, "host", "%s", host);
    csv_writer_meta(w, "backend", "%s", s->b->name);
    csv_writer_meta(w, "backend_choice", "%s", note[0] ? note : o->backend);
    csv_writer_meta(w, "device", "%s", s->b->device);
    csv_writer_meta(w, "library", "%s", s->b->library);
    csv_writer_meta(w, "blas_core", "%s", "n/a");
    const char *core = strstr(s->b->library, "core ");
    if (core)
        csv_writer_meta(w, "blas_core", "%.*s", (int)strcspn(core + 5, " "), core + 5);
    csv_writer_meta(w, "profile", "%s", o->profile[0] ? o->profile : "(none)");
    csv_writer_meta(w, "seed", "%llu", (unsigned long long)o->seed);
    csv_writer_meta(w, "dtype", "%s", dtype_name(o->dtype));
    csv_writer_meta(w, "optimizer", "%s lr %g", optimizer_name(o->optimizer.kind),
                    (double)o->optimizer.lr);
    csv_writer_meta(w, "mem_cap_bytes", "%llu", (unsigned long long)o->mem_cap);
    csv_writer_meta(w, "timing", "warmup %d; min %d max %d samples; noise target %g%%; "
                    "budget %gs per config%s", o->warmup, o->min_samples, o->max_samples,
                    o->max_noise_pct, o->budget_s, o->steps ? "; fixed step count" : "");
    csv_writer_meta(w, "command", "%s", ctx->command_line);
    list_columns(cols, sizeof cols, "timed");
    csv_writer_meta(w, "pass_timed", "%s", cols);
    list_columns(cols, sizeof cols, "trace");
    csv_writer_meta(w, "pass_trace", "%s", cols);
    list_columns(cols, sizeof cols, "check");
    csv_writer_meta(w, "pass_check", "%s", cols);
}

static void print_header(void)
{
    printf("%-5s %-5s %-11s %-13s %5s %11s %10s %16s %6s %11s %6s %9s  %s\n", "model",
           "dtype", "mode", "reduction", "E", "micro x K", "step ms", "p10..p90", "noise",
           "samples/s", "mfu%", "grad err", "status");
}

static void print_row(const result_row *r)
{
    char split[32], range[40] = "", last[16] = "";
    if (r->last_micro_batch != r->micro_batch)
        snprintf(last, sizeof last, "+%lld", (long long)r->last_micro_batch);
    snprintf(split, sizeof split, "%lldx%lld%s", (long long)r->micro_batch,
             (long long)r->accum_steps, last);
    printf("%-5s %-5s %-11s %-13s %5lld %11s ", r->model, r->dtype, r->mode, r->reduction,
           (long long)r->effective_batch, split);
    if (strcmp(r->status, STATUS_OK) != 0) {
        printf("%10s %16s %6s %11s %6s %9s  %s: %s\n", "-", "", "", "", "", "", r->status,
               r->note);
    } else {
        snprintf(range, sizeof range, "%.3f..%.3f", r->step_ms_p10, r->step_ms_p90);
        printf("%10.3f %16s %5.1f%% %11.1f %6.1f %9.2e  %s%s%s\n", r->step_ms_median, range,
               r->step_noise_pct, r->samples_per_s, r->mfu_pct, r->grad_rel_err, r->status,
               r->note[0] ? ": " : "", r->note);
    }
    fflush(stdout);
}

static void set_status(result_row *r, const char *status, const char *note)
{
    snprintf(r->status, sizeof r->status, "%s", status);
    snprintf(r->note, sizeof r->note, "%s", note);
}

/* The row's status for a failed backend call. */
static void status_from(result_row *r, int rc, const backend *b)
{
    set_status(r, rc == BK_OOM ? STATUS_OOM : rc == BK_UNSUPPORTED ? STATUS_SKIPPED : STATUS_ERROR,
               b->error);
}

static void fill_config(result_row *r, const sweep *s, const model_preset *p,
                        const model_layout *l, const split *sp, exec_mode mode, reduction red)
{
    result_row_clear(r);
    snprintf(r->backend, sizeof r->backend, "%s", s->b->name);
    snprintf(r->device, sizeof r->device, "%s", s->b->device);
    snprintf(r->model, sizeof r->model, "%s", p->name);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype_name(s->o->dtype));
    snprintf(r->mode, sizeof r->mode, "%s", mode_name(mode));
    snprintf(r->reduction, sizeof r->reduction, "%s", reduction_name(red));
    r->params = (int64_t)l->n_params;
    r->effective_batch = sp->effective * sp->devices;
    r->micro_batch = sp->micro;
    r->accum_steps = sp->accum;
    r->last_micro_batch = sp->last;
    r->devices = sp->devices;
    r->flops_per_step = model_flops_per_step(l, sp->effective);
    memory_need need;
    model_memory_need(l, s->o->dtype, s->o->optimizer.kind, sp->micro, sp->effective,
                      s->o->buffers, &need);
    r->mem_need_bytes = (int64_t)need.total;
}

/* Whether a config fits: the user's cap, and the device's memory (on the
 * CPU the host copies of the check share that memory too). */
static int fits(const sweep *s, const model_layout *l, result_row *r)
{
    uint64_t need = (uint64_t)r->mem_need_bytes;
    if (s->o->mem_cap && need > s->o->mem_cap) {
        snprintf(r->note, sizeof r->note, "needs %llu bytes; over the cap of %llu",
                 (unsigned long long)need, (unsigned long long)s->o->mem_cap);
        return 0;
    }
    uint64_t host_copies = strcmp(s->b->name, "cpu") == 0 ? 3ull * l->n_params * sizeof(float) : 0;
    uint64_t usable = (uint64_t)(0.9 * (double)s->b->mem_total);
    if (s->b->mem_total && need + host_copies > usable) {
        snprintf(r->note, sizeof r->note, "needs %llu bytes; the device holds %llu",
                 (unsigned long long)(need + host_copies), (unsigned long long)s->b->mem_total);
        return 0;
    }
    return 1;
}

static void fill_timing(result_row *r, const step_timing *t, double peak_tflops,
                        const measure_options *mo)
{
    r->step_ms_median = t->step.median;
    r->step_ms_p10 = t->step.p10;
    r->step_ms_p90 = t->step.p90;
    r->step_noise_pct = t->step.noise_pct;
    r->samples = (int64_t)t->step.samples;
    r->host_enqueue_ms = t->host_enqueue_ms;
    r->dispatches_per_step = t->dispatches_per_step;
    r->pass_ms = t->pass_ms;
    r->samples_per_s = (double)r->effective_batch / (t->step.median * 1e-3);
    r->tflops = r->flops_per_step / (t->step.median * 1e-3) / 1e12;
    r->mfu_pct = peak_tflops > 0 ? 100.0 * r->tflops / peak_tflops : NAN;
    /* Say which stopping condition was not met. */
    if (!mo->steps && !t->noise_met && t->step.noise_pct > mo->max_noise_pct)
        snprintf(r->note, sizeof r->note, "noise %.1f%% over the %.1f%% target when the "
                 "%.1fs budget ran out", t->step.noise_pct, mo->max_noise_pct, mo->budget_s);
    else if (!mo->steps && !t->noise_met)
        snprintf(r->note, sizeof r->note, "%zu samples, fewer than min-samples %d, when the "
                 "%.1fs budget ran out", t->step.samples, mo->min_samples, mo->budget_s);
}

static void run_config(sweep *s, model *m, dataset *d, const split *sp, exec_mode mode,
                       reduction red, result_row *r)
{
    backend *b = s->b;
    const run_options *o = s->o;
    char name[160];
    snprintf(name, sizeof name, "config %s %s %dx%d %s %s", m->preset.name,
             dtype_name(o->dtype), sp->micro, sp->accum, mode_name(mode), reduction_name(red));
    range_push(name);
    b->mem_peak = b->mem_in_use;
    step_runner run;
    int rc = model_reset(m);
    if (!rc)
        rc = step_runner_init(&run, m, d, sp, mode, red);
    if (rc) {
        status_from(r, rc, b);
        range_pop();
        return;
    }

    /* A config whose step would take longer than --max-step-s (micro-batch 1
     * of a large model on a CPU: minutes a step) is skipped, judged from one
     * measured pass before anything long runs. */
    double one_pass_ms = 0;
    rc = measure_single_pass(&run, 3, &one_pass_ms); /* median: the first is cold */
    if (!rc && sp->accum * one_pass_ms > o->max_step_s * 1e3) {
        char why[RESULT_TEXT_LEN];
        snprintf(why, sizeof why, "one step would take about %.1f s (%d x a %.0f ms pass); "
                 "over --max-step-s %g", sp->accum * one_pass_ms / 1e3, sp->accum,
                 one_pass_ms, o->max_step_s);
        set_status(r, STATUS_SKIPPED, why);
        step_runner_free(&run);
        range_pop();
        return;
    }

    /* Correctness first, from the starting weights. */
    if (!rc)
        rc = grad_check(&run, &r->grad_rel_err, &r->loss, NULL, NULL);
    if (!rc)
        rc = model_reset(m);

    measure_options mo = {
        .warmup = o->warmup, .steps = o->steps, .min_samples = o->min_samples,
        .max_samples = o->max_samples, .budget_s = o->budget_s,
        .max_noise_pct = o->max_noise_pct, .stop = (const volatile int *)&interrupted,
    };
    step_timing t;
    if (!rc)
        rc = measure_steps(&run, &mo, &t);
    if (!rc)
        rc = measure_single_pass(&run, 5, &t.pass_ms);
    if (!rc) {
        fill_timing(r, &t, s->peak_tflops, &mo);
        r->mem_peak_bytes = (int64_t)b->mem_peak;
    }
    if (!rc && o->trace_steps > 0 && !interrupted) {
        /* The first config whose trace pass succeeds writes --trace. */
        const char *trace_file = o->trace_path[0] && !s->trace_written ? o->trace_path : NULL;
        /* The trace pass keeps to the time budget too: fewer steps (one at
         * least) when a step is slow. */
        int steps = o->trace_steps;
        if (steps > 1 && t.step.median * steps > o->budget_s * 1e3)
            steps = t.step.median >= o->budget_s * 1e3 ? 1 : (int)(o->budget_s * 1e3 / t.step.median);
        trace_pass_options to = {.steps = steps, .collector = s->col,
                                 .trace_file = trace_file, .file_written = &s->trace_written};
        rc = trace_pass_run(&run, &to, r);
    }
    if (!rc)
        rc = b->ops->sync(b);

    if (rc) {
        status_from(r, rc, b);
    } else if (red == REDUCTION_SUM && !(r->grad_rel_err <= grad_tolerance(o->dtype))) {
        char why[RESULT_TEXT_LEN];
        snprintf(why, sizeof why, "gradient check failed: relative error %.3g over %.0e",
                 r->grad_rel_err, grad_tolerance(o->dtype));
        set_status(r, STATUS_ERROR, why);
    } else {
        snprintf(r->status, sizeof r->status, "%s", STATUS_OK);
        if (red != REDUCTION_SUM && !r->note[0])
            snprintf(r->note, sizeof r->note,
                     "known-wrong reduction kept as a demonstration");
    }
    step_runner_free(&run);
    range_pop();
}

static int emit(sweep *s, const result_row *r)
{
    char why[400];
    if (strcmp(r->status, STATUS_ERROR) == 0)
        s->failures++;
    print_row(r);
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
    int data_rc = dataset_create(s->b, &m->layout, effective, o->buffers, o->seed, &d);
    for (int i = 0; i < n_micro && !interrupted; i++) {
        split sp;
        char why[200];
        if (split_make(effective, micros[i], 1, &sp, why, sizeof why))
            continue; /* validated before the sweep */
        for (int mi = 0; mi < o->n_modes && !interrupted; mi++)
            for (int ri = 0; ri < o->n_reductions && !interrupted; ri++) {
                result_row r;
                fill_config(&r, s, &m->preset, &m->layout, &sp, o->modes[mi],
                            o->reductions[ri]);
                if (data_rc)
                    status_from(&r, data_rc, s->b);
                else if (!fits(s, &m->layout, &r))
                    snprintf(r.status, sizeof r.status, "%s", STATUS_OOM);
                else
                    run_config(s, m, &d, &sp, o->modes[mi], o->reductions[ri], &r);
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
static int emit_model_failure(sweep *s, const model_preset *p, int rc)
{
    model_layout l;
    model_layout_of(p, &l);
    for (int e = 0; e < s->o->n_effective; e++) {
        int micros[64], n = options_micro_list(s->o, s->o->effective[e], micros, 64);
        for (int i = 0; i < n; i++)
            for (int mi = 0; mi < s->o->n_modes; mi++)
                for (int ri = 0; ri < s->o->n_reductions; ri++) {
                    split sp;
                    char why[200];
                    split_make(s->o->effective[e], micros[i], 1, &sp, why, sizeof why);
                    result_row r;
                    fill_config(&r, s, p, &l, &sp, s->o->modes[mi], s->o->reductions[ri]);
                    if (rc == BK_OK) {
                        snprintf(r.status, sizeof r.status, "%s", STATUS_OOM);
                        fits(s, &l, &r);
                    } else {
                        status_from(&r, rc, s->b);
                    }
                    if (emit(s, &r))
                        return -1;
                }
    }
    return 0;
}

/* The weights, gradients and optimizer state alone: if these do not fit,
 * no split of the model can. */
static int model_fits(const sweep *s, const model_preset *p)
{
    model_layout l;
    model_layout_of(p, &l);
    result_row r;
    split sp = {.effective = 1, .micro = 1, .accum = 1, .last = 1, .devices = 1};
    fill_config(&r, s, p, &l, &sp, MODE_ASYNC, REDUCTION_SUM);
    return fits(s, &l, &r);
}

int sweep_run(const run_options *o, const run_context *ctx)
{
    char why[400], note[400];
    sweep s = {.o = o};
    backend *b;
    if (backend_open(o->backend, o->dtype, &b, note, sizeof note, why, sizeof why) != BK_OK) {
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    s.b = b;
    b->mem_cap = (size_t)o->mem_cap;
    if (note[0])
        printf("%s\n", note);
    if (make_dirs(o->out_dir, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        b->ops->destroy(b);
        return 2;
    }
    char path[1200];
    csv_path_for(o, b, path, sizeof path);
    csv_writer_init(&s.csv, path);
    write_metadata(&s, ctx, note);
    if (csv_writer_flush(&s.csv, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        b->ops->destroy(b);
        return 2;
    }
    if (!o->no_cupti) {
        char col_why[320];
        s.col = backend_collector(b, col_why, sizeof col_why);
        csv_writer_meta(&s.csv, "trace_source", "%s", s.col ? "CUPTI activity records" : col_why);
    } else {
        csv_writer_meta(&s.csv, "trace_source", "off (--no-cupti)");
    }

    struct sigaction sa = {0}, old_sa;
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old_sa);

    printf("accubench %s on %s (%s), %s\n", ACCUBENCH_VERSION, b->device, b->name, b->library);
    int peak_n = 0, rc = measure_peak_gemm(b, &s.peak_tflops, &peak_n);
    if (rc) {
        fprintf(stderr, "accubench: measuring the peak GEMM rate failed: %s\n", b->error);
        s.failures++;
        s.peak_tflops = NAN;
    } else {
        csv_writer_meta(&s.csv, "peak_gemm_tflops", "%.4g", s.peak_tflops);
        csv_writer_meta(&s.csv, "peak_gemm_shape", "%dx%dx%d %s", peak_n, peak_n, peak_n,
                        dtype_name(o->dtype));
        printf("peak GEMM %dx%dx%d %s: %.3f TFLOP/s measured\n", peak_n, peak_n, peak_n,
               dtype_name(o->dtype), s.peak_tflops);
    }
    if (b->datasheet_tflops > 0)
        csv_writer_meta(&s.csv, "datasheet_tflops", "%.4g", b->datasheet_tflops);
    else
        csv_writer_meta(&s.csv, "datasheet_tflops", "%s", "");
    printf("results: %s\n", path);
    print_header();

    range_push("run");
    int write_failed = 0;
    for (int mi = 0; mi < o->n_models && !interrupted && !write_failed; mi++) {
        const model_preset *p = o->models[mi];
        model m;
        int mrc = model_fits(&s, p) ? model_create(b, p, &o->optimizer, o->seed, &m) : BK_OK;
        if (mrc != BK_OK || !model_fits(&s, p)) {
            write_failed = emit_model_failure(&s, p, mrc) != 0;
            continue;
        }
        for (int e = 0; e < o->n_effective && !interrupted && !write_failed; e++)
            write_failed = sweep_batch(&s, &m, o->effective[e]) != 0;
        model_destroy(&m);
    }
    range_pop();
    sigaction(SIGINT, &old_sa, NULL);

    if (!write_failed && csv_writer_flush(&s.csv, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        write_failed = 1;
    }
    printf("%zu rows written to %s\n", s.csv.count, path);
    if (s.col)
        s.col->ops->destroy(s.col);
    csv_writer_free(&s.csv);
    b->ops->destroy(b);
    if (interrupted) {
        fprintf(stderr, "accubench: interrupted; the rows measured so far are in %s\n", path);
        return 130;
    }
    if (write_failed)
        return 2;
    return s.failures ? 1 : 0;
}
