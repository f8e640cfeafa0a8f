/* `accubench run`: the output file, the device, the peak GEMM, then every
 * model x effective batch x split x mode x reduction, a row each. */
#include "sweep.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config_run.h"
#include "console_table.h"
#include "dp_check.h"
#include "measure.h"
#include "ranges.h"
#include "run_metadata.h"
#include "run_outputs.h"
#include "sweep_state.h"
#include "version.h"

/* The signal that stopped the sweep (SIGINT or SIGTERM), or 0: the
 * configs stop, the rows measured so far stay on disk. */
static volatile sig_atomic_t interrupted;

static void on_stop_signal(int sig)
{
    interrupted = sig;
}

static void fill_config(result_row *r, const sweep *s, const model_spec *ms, const split *sp,
                        exec_mode mode, reduction red, const char *sync)
{
    result_row_clear(r);
    snprintf(r->backend, sizeof r->backend, "%s", s->b->name);
    snprintf(r->device, sizeof r->device, "%s", s->b->device);
    snprintf(r->model, sizeof r->model, "%s", ms->name);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype_name(s->o->dtype));
    snprintf(r->mode, sizeof r->mode, "%s", mode_name(mode));
    snprintf(r->reduction, sizeof r->reduction, "%s", reduction_name(red));
    snprintf(r->sync, sizeof r->sync, "%s", sync);
    r->params = (int64_t)model_param_count(ms);
    r->effective_batch = sp->global;
    r->micro_batch = sp->micro;
    r->accum_steps = sp->accum;
    r->last_micro_batch = sp->last;
    r->devices = sp->devices;
    r->flops_per_step = model_flops_per_step(ms, sp->effective);
    memory_need need;
    model_memory_need(ms, s->o->dtype, s->o->optimizer.kind, sp->micro, sp->global,
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
    char label[RESULT_TEXT_LEN * 4];
    snprintf(label, sizeof label, "%s %s %lldx%lld %s %s%s%s", r->model, r->dtype,
             (long long)r->micro_batch, (long long)r->accum_steps, r->mode, r->reduction,
             r->sync[0] ? " sync " : "", r->sync);
    progress_config(s->progress, label);
}

/* How many configs (rows) the sweep will visit (at most: a split wider
 * than a device's share of the batch is passed over). */
static int count_configs(const run_options *o, int data_parallel)
{
    int micros[64], n = 0;
    for (int e = 0; e < o->n_effective; e++)
        n += options_micro_list(o, o->effective[e], micros, 64);
    n *= o->n_models * o->n_modes * o->n_reductions;
    if (data_parallel)
        n *= (o->n_devices > 0 ? o->n_devices : 1) * o->n_syncs;
    return n;
}

static int emit(sweep *s, const result_row *r)
{
    char why[400];
    if (strcmp(r->status, STATUS_ERROR) == 0)
        s->failures++;
    progress_config_done(s->progress);
    progress_clear(s->progress);
    if (!s->writer)
        return 0; /* rank 0 writes for every rank */
    if (!s->o->quiet)
        console_table_row(stdout, r);
    if (csv_writer_append(&s->csv, r, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return -1;
    }
    return 0;
}

/* Every config of one model, one effective batch and one device count,
 * on the ranks of s->comm (none: one process). */
static int sweep_split(sweep *s, model *m, dataset *d, int data_rc, int effective, int devices)
{
    const run_options *o = s->o;
    int micros[64];
    int n_micro = options_micro_list(o, effective, micros, 64);
    int n_sync = s->comm ? o->n_syncs : 1;
    for (int i = 0; i < n_micro && !interrupted; i++) {
        split sp;
        char why[RESULT_TEXT_LEN];
        if (micros[i] > (effective + devices - 1) / devices)
            continue; /* more than a device's share of the batch */
        int bad = split_make_sharded(effective, micros[i], devices, &sp, why, sizeof why);
        if (bad) {
            /* The row says what the split would have been: K passes, and a
             * last micro-batch too small to give every device an example
             * (its largest part, as split.h's last: at least 1, which the
             * CSV reader requires). */
            long long per_step = (long long)micros[i] * devices;
            sp = (split){.effective = (effective + devices - 1) / devices, .global = effective,
                         .micro = micros[i], .devices = devices,
                         .accum = (int)((effective + per_step - 1) / per_step)};
            sp.last = (int)((effective - (sp.accum - 1) * per_step + devices - 1) / devices);
        }
        for (int mi = 0; mi < o->n_modes && !interrupted; mi++)
            for (int ri = 0; ri < o->n_reductions && !interrupted; ri++)
                for (int si = 0; si < n_sync && !interrupted; si++) {
                    result_row r;
                    const char *sync = s->comm ? sync_name(o->syncs[si]) : "";
                    fill_config(&r, s, &m->spec, &sp, o->modes[mi], o->reductions[ri], sync);
                    progress_row(s, &r);
                    if (bad)
                        row_set_status(&r, STATUS_SKIPPED, why);
                    else if (data_rc)
                        row_status_from(&r, data_rc, s->b);
                    else if (!fits(s, &r))
                        snprintf(r.status, sizeof r.status, "%s", STATUS_OOM);
                    else
                        config_run(s, m, d, &sp, o->modes[mi], o->reductions[ri],
                                   s->comm ? o->syncs[si] : SYNC_WINDOW, &r);
                    if (interrupted)
                        break; /* the interrupted config's row is not complete */
                    if (emit(s, &r))
                        return -1;
                }
    }
    return 0;
}

/* Every config of one model and one effective batch: each device count on
 * the first that many ranks (the others wait), or the one process. */
static int sweep_batch(sweep *s, model *m, int effective)
{
    const run_options *o = s->o;
    dataset d;
    input_spec in;
    model_input(&m->spec, &in);
    int data_rc = dataset_create(s->b, &in, effective, o->buffers, o->seed, &d);
    if (s->world) {
        /* Every rank has the data, or none runs these configs. */
        int worst = dp_agree_status(s->world, data_rc);
        if (worst && !data_rc) {
            dataset_destroy(&d);
            snprintf(s->b->error, sizeof s->b->error, "another rank could not make the data");
        }
        data_rc = worst;
    }
    int rc = 0;
    if (!s->world) {
        rc = sweep_split(s, m, &d, data_rc, effective, 1);
    } else {
        for (int di = 0; di < o->n_devices && !rc && !interrupted; di++) {
            int devices = o->devices[di];
            comm *ranks = NULL;
            if (s->world->ops->split(s->world, devices, &ranks))
                dp_fail(s->world, "making a communicator", s->b->error);
            if (ranks) {
                s->comm = ranks;
                if (!data_rc)
                    dataset_set_shard(&d, ranks->rank, ranks->size);
                rc = sweep_split(s, m, &d, data_rc, effective, devices);
                s->comm = NULL;
                ranks->ops->destroy(ranks);
            }
            if (s->world->ops->barrier(s->world))
                dp_fail(s->world, "waiting for the other ranks", s->b->error);
        }
    }
    if (!data_rc)
        dataset_destroy(&d);
    return rc;
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
                    fill_config(&r, s, ms, &sp, s->o->modes[mi], s->o->reductions[ri], "");
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
    split sp = {.effective = 1, .global = 1, .micro = 1, .accum = 1, .last = 1, .devices = 1};
    fill_config(&r, s, ms, &sp, MODE_ASYNC, REDUCTION_SUM, "");
    return fits(s, &r);
}

/* Every model's configs; nonzero when the CSV could not be written. */
static int sweep_models(sweep *s)
{
    const run_options *o = s->o;
    range_push("run");
    int write_failed = 0;
    for (int mi = 0; mi < o->n_models && !interrupted && !write_failed; mi++) {
        const model_spec *ms = &o->models[mi];
        model m;
        int mrc = model_fits(s, ms) ? model_create(s->b, ms, &o->optimizer, o->seed, &m) : BK_OK;
        if (s->world && model_fits(s, ms)) {
            /* Every rank has the model, or none runs it. */
            int worst = dp_agree_status(s->world, mrc);
            if (worst && !mrc) {
                model_destroy(&m);
                snprintf(s->b->error, sizeof s->b->error, "another rank could not make the model");
            }
            mrc = worst;
        }
        if (mrc != BK_OK || !model_fits(s, ms)) {
            write_failed = emit_model_failure(s, ms, mrc) != 0;
            continue;
        }
        for (int e = 0; e < o->n_effective && !interrupted && !write_failed; e++)
            write_failed = sweep_batch(s, &m, o->effective[e]) != 0;
        model_destroy(&m);
    }
    range_pop();
    return write_failed;
}

int sweep_run(const run_options *o, const sweep_device *dev, const run_context *ctx)
{
    char why[400];
    backend *b = dev->b;
    sweep s = {.o = o, .b = b, .col = dev->col, .stop = &interrupted, .world = dev->world,
               .writer = !dev->world || dev->world->rank == 0};
    b->mem_cap = (size_t)o->mem_cap;
    if (!s.writer) {
        /* Another rank writes: this one steps with it and writes nothing. */
        sweep_models(&s);
        return s.failures ? 1 : 0;
    }
    /* Every output path, before anything is measured; the CSV is locked
     * until the last row is written. */
    run_outputs out;
    if (run_outputs_open(o, b->name, &out, why, sizeof why)) {
        if (s.world)
            dp_fail(s.world, "the output", why); /* the other ranks wait for this one */
        fprintf(stderr, "accubench: %s\n", why);
        return 2;
    }
    const char *path = out.csv_path;
    csv_writer_init(&s.csv, path);
    curves_file curves; /* --train-steps */
    if (o->train_steps > 0 && curves_open(&curves, path, o->train_steps, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        run_outputs_close(&out, 1);
        return 2;
    }
    s.curves = o->train_steps > 0 ? &curves : NULL;
    run_metadata_write(&s.csv, o, b, ctx, dev->note);
    csv_writer_meta(&s.csv, "dtype_choice", "%s", dev->dtype_note ? dev->dtype_note : "");
    csv_writer_meta(&s.csv, "optimizer_at", "%s%s", dev->optimizer_note ? dev->optimizer_note
                    : optimizer_at_name(o->optimizer.at), o->optimizer.at == OPT_AT_BACKWARD ?
                    " (per layer where one device runs the step and no graph captures it; "
                    "after the window otherwise)" : "");
    if (csv_writer_flush(&s.csv, why, sizeof why)) {
        if (s.world)
            dp_fail(s.world, "the output", why);
        fprintf(stderr, "accubench: %s\n", why);
        run_outputs_close(&out, 1);
        return 2;
    }
    csv_writer_meta(&s.csv, "trace_source", "%s", dev->trace_source);
    if (s.world) {
        char syncs[512];
        sync_describe(o->syncs, o->n_syncs, syncs, sizeof syncs);
        csv_writer_meta(&s.csv, "sync", "%s", syncs);
        csv_writer_meta(&s.csv, "ranks", "%d launched; all-reduce by %s", s.world->size,
                        s.world->name);
        csv_writer_meta(&s.csv, "allreduce_library", "%s", s.world->library);
    }

    /* SIGTERM (kill, a batch system's stop) as Ctrl-C: stop between
     * configs, keep what was measured, and never die inside a write. */
    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

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
    progress_start(&prog, o->quiet ? NULL : stderr, count_configs(o, s.world != NULL),
                   PROGRESS_SILENT_S);
    s.progress = &prog;

    int write_failed = sweep_models(&s);
    progress_stop(&prog);

    if (o->trace_path[0] && s.trace_written != 1 && !interrupted) {
        if (s.trace_written == 0) /* a failed write has said why already */
            fprintf(stderr, "accubench: --trace %s not written: no config had a trace\n",
                    o->trace_path);
        s.failures++;
    }
    if (s.curves && curves_close(s.curves, o->quiet ? NULL : stdout) && !write_failed) {
        fprintf(stderr, "accubench: cannot write %s\n", curves.path);
        write_failed = 1;
    } else if (s.curves && !o->quiet) {
        printf("loss curves: %s\n", curves.path);
    }
    if (!write_failed && csv_writer_flush(&s.csv, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        write_failed = 1;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (write_failed) {
        /* What the file holds, read back: never the rows meant for it. */
        long on_disk = csv_rows_on_disk(path);
        if (on_disk < 0)
            fprintf(stderr, "accubench: %s is not on disk: none of the %zu rows measured was "
                    "kept\n", path, s.csv.count);
        else
            fprintf(stderr, "accubench: %ld of the %zu rows measured are in %s\n", on_disk,
                    s.csv.count, path);
    } else if (!o->quiet) {
        printf("%zu rows written to %s\n", s.csv.count, path);
    }
    csv_writer_free(&s.csv);
    run_outputs_close(&out, 0);
    if (interrupted && !write_failed) {
        fprintf(stderr, "accubench: interrupted (%s); the rows measured so far are in %s\n",
                interrupted == SIGTERM ? "SIGTERM" : "SIGINT", path);
    }
    if (interrupted) /* the shell's code for death by that signal: 130, 143 */
        return 128 + interrupted;
    if (write_failed)
        return 2;
    return s.failures ? 1 : 0;
}
