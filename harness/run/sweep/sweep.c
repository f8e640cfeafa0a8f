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

#include "config.h"
#include "config_run.h"
#include "console_table.h"
#include "dispatch.h"
#include "dp_check.h"
#include "eta_probe.h"
#include "measure.h"
#include "plural.h"
#include "ranges.h"
#include "row_trust.h"
#include "run_summary.h"
#include "run_metadata.h"
#include "run_outputs.h"
#include "stop_signal.h"
#include "sweep_block.h"
#include "sweep_models.h"
#include "sweep_peak.h"
#include "sweep_ranks.h"
#include "sweep_row.h"
#include "sweep_state.h"
#include "version.h"

/* Ends every rank with `code` where mpirun started them; returns code. */
static int end_ranks(const sweep *s, int code)
{
    stop_signal_restore();
    if (s->world && s->world->ops->end)
        s->world->ops->end(s->world, code);
    return code;
}

/* Runs one config's row alone and writes it; -1 when the CSV could not be. */
static int run_row(sweep *s, sweep_place *p, const config *c)
{
    result_row r;
    if (sweep_row_start(s, p, c, &r))
        config_run(s, &p->m[c->dtype], &p->d[c->dtype], c, &r);
    if (stop_signal)
        return 0; /* the interrupted config's row is not complete */
    return sweep_row_emit(s, &r);
}

/* The first that many ranks for a device count; 0 when this rank is not
 * among them (it waits at the barrier when the count is done). */
static int open_devices(sweep *s, sweep_place *p, const config *c)
{
    p->ranks = NULL;
    if (!s->world)
        return 1;
    if (s->world->ops->split(s->world, c->sp.devices, &p->ranks))
        dp_fail(s->world, "making a communicator", s->b->error);
    if (!p->ranks)
        return 0;
    s->comm = p->ranks;
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (p->m[d].b && !p->data_rc[d])
            dataset_set_shard(&p->d[d], p->ranks->rank, p->ranks->size);
    return 1;
}

/* Closes the open levels from the innermost out to `level`. */
static void leave(sweep *s, sweep_place *p, config_level level)
{
    for (; p->open > (int)level; p->open--) {
        if (p->open - 1 == CONFIG_DEVICES) {
            if (p->ranks) {
                s->comm = NULL;
                p->ranks->ops->destroy(p->ranks);
                p->ranks = NULL;
            }
            if (s->world && s->world->ops->barrier(s->world))
                dp_fail(s->world, "waiting for the other ranks", s->b->error);
        } else if (p->open - 1 == CONFIG_BATCH) {
            sweep_close_data(s, p);
        } else {
            for (int d = 0; d < DTYPE_COUNT; d++)
                if (p->m[d].b)
                    model_destroy(&p->m[d]);
            memset(s->held, 0, sizeof s->held);
            memset(p->model_rc, 0, sizeof p->model_rc);
        }
    }
}

/* Opens the levels config c begins. 1: run it; 0: passed over (a device
 * count this rank sits out: the iterator skips it). A model or data that
 * could not be made is no skip: each row of it says why. */
static int enter_levels(sweep *s, const run_options *o, sweep_place *p, config_iter *it,
                        const config *c)
{
    for (int level = c->opens; level < CONFIG_ROW; level++) {
        int rc = 1;
        if (level == CONFIG_MODEL)
            sweep_open_models(s, o, p, c);
        else if (level == CONFIG_BATCH)
            sweep_open_data(s, p, c);
        else
            rc = open_devices(s, p, c);
        p->open = level + 1; /* a device count this rank sits out still has its barrier */
        if (!rc) {
            config_iter_skip(it, (config_level)level);
            return 0;
        }
    }
    return 1;
}

static int enter(sweep *s, const run_options *o, sweep_place *p, config_iter *it, const config *c)
{
    /* The model (made whole) and its data are opened outside the cap: a
     * sharded config cuts the state to its slices before its own memory is
     * counted, each row's need (state, data, activations) is held to the
     * cap before it runs, and model_fits the least of them. */
    size_t cap = s->b->mem_cap;
    s->b->mem_cap = 0;
    int rc = enter_levels(s, o, p, it, c);
    s->b->mem_cap = cap;
    return rc;
}

/* Every config, each down the layers once; nonzero when the CSV could not
 * be written. */
static int sweep_configs(sweep *s, const run_options *o)
{
    range_push("run");
    config_iter it;
    config c;
    sweep_place p = {0};
    int write_failed = 0;
    config_block block = {0}; /* rounds: the configs of one device count, run together */
    int together = rounds_on(o);
    config_iter_start(&it, o, s->world != NULL);
    while (!stop_signal && !write_failed && config_next(&it, &c)) {
        if (c.opens < CONFIG_ROW && block.n)
            write_failed = sweep_block_run(s, &p, &block);
        if (write_failed)
            break;
        leave(s, &p, c.opens);
        int go = enter(s, o, &p, &it, &c);
        if (go > 0 && together)
            write_failed = config_block_add(&block, &c);
        else
            write_failed = go > 0 && run_row(s, &p, &c) != 0;
    }
    if (!write_failed && !stop_signal && block.n)
        write_failed = sweep_block_run(s, &p, &block);
    config_block_free(&block);
    /* A failed write ends the job (end_ranks): the other ranks have gone
     * on to the next config, whose collectives no barrier of leave() here
     * would meet, and rank 0 would wait in it for them. One rank (NCCL's
     * world of one, in process) waits for no one: it leaves as always. */
    if (!(write_failed && s->world && s->world->size > 1 && !s->lost))
        leave(s, &p, CONFIG_MODEL);
    range_pop();
    return write_failed;
}

/* What the backend cannot do (a mode needing an op it lacks) is bad
 * input, refused before anything runs, as a dtype it cannot compute in is
 * when it is opened. */
static int backend_can_run(const run_options *o, backend *b, char *why, size_t len)
{
    for (int i = o->n_dtypes - 1; i >= 0; i--) /* the first last: the backend left in it */
        if (bk_use_dtype(b, o->dtypes[i])) {
            snprintf(why, len, "%s", b->error);
            return 0;
        }
    for (int i = 0; i < o->n_modes; i++)
        if (mode_check_backend(o->modes[i], b, why, len))
            return 0;
    return 1;
}

/* backend_can_run on every rank, after they agreed on their options: all
 * of them refuse, or none (a rank refusing alone would leave the others
 * waiting for it; one GPU of a box may lack what another has). Rank 0
 * says why where it refuses, else each rank that does. */
static int sweep_can_run(const sweep *s, const run_options *o, char *why, size_t len)
{
    int can = backend_can_run(o, s->b, why, len);
    if (!s->world) {
        if (!can)
            fprintf(stderr, "accubench: %s\n", why);
        return can;
    }
    int root_can = dp_agree_root_int(s->world, can);
    if (dp_agree_all(s->world, can))
        return 1;
    if (!can && s->writer)
        fprintf(stderr, "accubench: %s\n", why);
    else if (!can && root_can)
        fprintf(stderr, "accubench: rank %d of %d: %s\n", s->world->rank, s->world->size, why);
    return 0;
}

/* The CSV's metadata: the run, the device, the choices made for it. 0, or
 * -1 with the reason when the first of it could not be written. */
static int write_metadata(sweep *s, const run_options *o, const sweep_device *dev,
                          const run_context *ctx, const run_outputs *out, char *why,
                          size_t why_len)
{
    run_metadata_write(&s->csv, o, s->b, ctx, dev->note);
    csv_writer_meta(&s->csv, "dtype_choice", "%s", dev->dtype_note ? dev->dtype_note : "");
    csv_writer_meta(&s->csv, "optimizer_at", "%s%s", dev->optimizer_note ? dev->optimizer_note
                    : optimizer_at_name(o->optimizer.at), o->optimizer.at == OPT_AT_BACKWARD ?
                    " (per layer where one device runs the step and no graph captures it; "
                    "after the window otherwise)" : "");
    /* Until the end takes it out: a reader of a file whose run is still
     * measuring, was interrupted, or died, learns that configs are missing. */
    csv_writer_meta(&s->csv, CSV_UNFINISHED, "the run was still measuring when this file was "
                    "written, or died (%d configs planned)", s->configs_planned);
    /* An existing file is rewritten only with a row to add (csv_existing.h). */
    if ((out->existing == CSV_APPEND &&
         csv_existing_adopt(&s->csv, out->csv_path, why, why_len)) ||
        (!out->existing && csv_writer_flush(&s->csv, why, why_len)))
        return -1;
    csv_writer_meta(&s->csv, "trace_source", "%s", dev->trace_source);
    if (s->world) {
        char syncs[1024];
        axis_describe(&sync_axis, o->syncs, o->n_syncs, syncs, sizeof syncs);
        csv_writer_meta(&s->csv, "sync", "%s", syncs);
        sync_describe_schedule(o->syncs, o->n_syncs, syncs, sizeof syncs);
        csv_writer_meta(&s->csv, "sync_allreduce", "%s", syncs);
        axis_describe(&shard_axis, o->shards, o->n_shards, syncs, sizeof syncs);
        csv_writer_meta(&s->csv, "shard", "%s", syncs);
        shard_describe_schedule(o->shards, o->n_shards, syncs, sizeof syncs);
        csv_writer_meta(&s->csv, "shard_collectives", "%s", syncs);
        csv_writer_meta(&s->csv, "ranks", "%d launched; all-reduce by %s", s->world->size,
                        s->world->name);
        csv_writer_meta(&s->csv, "allreduce_library", "%s", s->world->library);
    }
    return 0;
}

/* After the last config: the trace's absence counted, the CSV's last rows
 * flushed, and what the file holds said. Nonzero when it could not be
 * written. */
static int finish_sweep(sweep *s, const run_outputs *out, int write_failed)
{
    const char *path = out->csv_path;
    char why[400];
    if (s->trace_path[0] && s->trace_written != 1 && !stop_signal) {
        if (s->trace_written == 0) /* a failed write has said why already */
            fprintf(stderr, "accubench: --trace %s not written: no config had a trace\n",
                    s->trace_path);
        s->failures++;
    }
    /* --dump as --trace: asked for and not written is said, and fails */
    if (s->dump_dir[0] && !s->dump_done && !stop_signal && !s->comm) {
        fprintf(stderr, "accubench: --dump %s not written: no config ran its gradient check\n",
                s->dump_dir);
        s->failures++;
    }
    stop_signal_announce(NULL); /* from here the end below says it */
    const char *sig = stop_signal_name(stop_signal);
    if (stop_signal)
        csv_writer_meta(&s->csv, CSV_UNFINISHED, "interrupted (%s) after %zu of %d configs: "
                        "the rest did not run", sig, s->csv.count, s->configs_planned);
    else if (s->lost)
        csv_writer_meta(&s->csv, CSV_UNFINISHED, "the device was lost after %zu of %d configs: "
                        "the rest did not run", s->csv.count, s->configs_planned);
    else if (csv_writer_meta_value(&s->csv, CSV_UNFINISHED_EARLIER))
        csv_writer_meta(&s->csv, CSV_UNFINISHED, "an earlier run of this file: %s",
                        csv_writer_meta_value(&s->csv, CSV_UNFINISHED_EARLIER));
    else
        csv_writer_meta_remove(&s->csv, CSV_UNFINISHED);
    /* An existing file with no row to add stays as it was. */
    if (!write_failed && !stop_signal_said() && (s->csv.count || !out->existing) &&
        csv_writer_flush(&s->csv, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        write_failed = 1;
    }
    stop_signal_restore();
    if (write_failed) {
        /* What the file holds, read back: never the rows meant for it. */
        long on_disk = csv_rows_on_disk(path);
        const char *rows = plural((long long)s->csv.count, "row", "rows");
        /* Not this run's: an --append file's earlier rows, and every row
         * of a file this run never managed to write (as it was). */
        long earlier = out->existing && !s->csv.written ? on_disk : (long)s->csv.kept_rows;
        if (earlier > on_disk)
            earlier = on_disk;
        if (on_disk < 0)
            fprintf(stderr, "accubench: %s is not on disk: none of the %zu %s measured was "
                    "kept\n", path, s->csv.count, rows);
        else if (!earlier)
            fprintf(stderr, "accubench: %ld of the %zu %s measured %s in %s\n", on_disk,
                    s->csv.count, rows, plural(on_disk, "is", "are"), path);
        else
            fprintf(stderr, "accubench: %ld of the %zu %s measured %s in %s, %s its %ld "
                    "earlier %s\n", on_disk - earlier, s->csv.count, rows,
                    plural(on_disk - earlier, "is", "are"), path,
                    s->csv.written ? "after" : "which is as it was, with", earlier,
                    plural(earlier, "row", "rows"));
    } else if (!s->csv.count && out->existing) {
        /* nothing to add: the file was not touched (a --replace too), so
         * neither its rows nor a report of them are this run's */
        printf("no row written: %s is as it was\n", path);
    } else {
        /* --quiet too: a script that runs it needs the file's name (only
         * the writer, rank 0, gets here: it speaks for the other ranks). */
        printf("%zu %s %s %s\n", s->csv.count, plural((long long)s->csv.count, "row", "rows"),
               out->existing == CSV_APPEND ? "added to" : "written to", path);
        if (!s->quiet && s->csv.count)
            run_summary(stdout, s->csv.rows, s->csv.count, path);
    }
    if (stop_signal && !write_failed && !stop_signal_said()) {
        if (s->csv.count)
            fprintf(stderr, "accubench: interrupted (%s) after %zu of %d configs; the rows "
                    "measured so far are in %s\n", sig, s->csv.count, s->configs_planned,
                    path);
        else
            fprintf(stderr, "accubench: interrupted (%s) before a row was finished\n", sig);
    }
    return write_failed;
}

/* Opens what the sweep writes beside the CSV writer: the curves file
 * (--train-steps) into *curves, then the CSV's metadata. On failure says
 * why, lets go of the outputs and returns -1; the caller then ends the
 * ranks with exit code 2. */
static int open_written(sweep *s, const run_options *o, const sweep_device *dev,
                        const run_context *ctx, run_outputs *out, curves_file *curves)
{
    char why[400];
    const char *path = out->csv_path;
    if (s->world)
        stop_signal_announce(out); /* a signal's handler lets the lock go and says so */
    csv_writer_init(&s->csv, path);
    int curves_written = o->train_steps > 0 || out->curves_replace;
    if (curves_written && curves_open(curves, out->curves_path, o->train_steps,
                                   out->curves_append, out->curves_replace, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        stop_signal_announce(NULL);
        csv_writer_free(&s->csv);
        run_outputs_close(out, 1);
        return -1;
    }
    s->curves = curves_written ? curves : NULL;
    if (write_metadata(s, o, dev, ctx, out, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        if (s->curves)
            curves_close(s->curves, NULL);
        s->curves = NULL;
        stop_signal_announce(NULL);
        csv_writer_free(&s->csv);
        run_outputs_close(out, 1);
        return -1;
    }
    return 0;
}

/* Says what runs where, measures the device's peak and sets up the probes
 * beside each config (in *watch, sized from the peak; s->watch stays NULL
 * when they cannot be). */
static void start_measuring(sweep *s, const run_options *o, const char *dtype_note,
                            const char *path, config_watch *watch)
{
    if (!s->quiet)
        printf("accubench %s on %s (%s), %s\n", ACCUBENCH_VERSION, s->b->device, s->b->name,
               s->b->library);
    sweep_peaks(s, o, dtype_note);
    if (config_watch_init(watch, s->b, s->peak_tflops[o->dtypes[0]], o->budget_s) == 0)
        s->watch = watch;
    trust_meta(&s->csv, s->watch);
    char left_out[512];
    if (!s->quiet && options_micro_left_out(o, left_out, sizeof left_out))
        printf("%s\n", left_out);
    if (!s->quiet) {
        printf("results: %s\n", path);
        int width = CONSOLE_MODEL_WIDTH;
        for (int i = 0; i < o->n_models; i++)
            console_model_width(o->models[i].name, &width);
        console_table_header(stdout, width);
    }
}

/* Runs every config with the progress line and its ETA (the time left,
 * costed config by config). Returns whether a write failed. */
static int sweep_with_progress(sweep *s, const run_options *o)
{
    progress prog;
    progress_start(&prog, s->quiet && !o->quiet_progress ? NULL : stderr,
                   s->configs_planned, PROGRESS_SILENT_S);
    s->progress = &prog;
    eta plan;
    int planned = eta_plan(&plan, o, s->world != NULL) == 0;
    if (planned && !s->quiet && !s->world)
        eta_probe_models(s, o, &plan);
    if (planned)
        progress_set_eta(&prog, &plan);
    int write_failed = sweep_configs(s, o);
    progress_stop(&prog);
    s->progress = NULL;
    if (planned)
        eta_free(&plan);
    return write_failed;
}

/* The writer's sweep: the header, the peak, every config, the end. */
static int sweep_written(sweep *s, const run_options *o, const sweep_device *dev,
                         const run_context *ctx, run_outputs *out)
{
    curves_file curves; /* --train-steps: NAME.curves.csv beside the CSV */
    if (open_written(s, o, dev, ctx, out, &curves))
        return end_ranks(s, 2); /* the other ranks wait for this one */
    config_watch watch; /* the probes beside each config */
    start_measuring(s, o, dev->dtype_note, out->csv_path, &watch);
    /* a lost device stops the loop as a failed write does, but its rows
     * are on disk: the file is finished as usual, and the run fails (1) */
    int write_failed = sweep_with_progress(s, o) && !s->lost;
    if (s->curves) { /* each curve was written as it ended */
        if (!s->quiet && curves_written(s->curves))
            printf("loss curves: %s\n", curves.path);
        curves_close(s->curves, s->quiet ? NULL : stdout);
    }
    s->curves = NULL;
    write_failed = finish_sweep(s, out, write_failed);
    /* A sweep with no step time measured has no answer to give: a script
     * (make bench, CI) must not take it for one. Its rows stay. */
    int nothing_ran = !write_failed && !stop_signal &&
                      !run_summary_ran(s->csv.rows, s->csv.count);
    if (nothing_ran) {
        char why[1024];
        run_summary_none(s->csv.rows, s->csv.count, out->csv_path, why, sizeof why);
        fprintf(stderr, "accubench: %s\n", why);
    }
    csv_writer_free(&s->csv);
    if (s->watch)
        config_watch_free(s->watch);
    s->watch = NULL;
    run_outputs_close(out, 0);
    if (stop_signal) /* the shell's code for death by that signal: 130, 143, 129 */
        return end_ranks(s, 128 + stop_signal);
    if (write_failed) /* the other ranks, a config on, wait for this one */
        return end_ranks(s, 2);
    return s->failures || s->lost || nothing_ran ? 1 : 0;
}

int sweep_run(const run_options *o, const sweep_device *dev, const run_context *ctx)
{
    char why[400];
    backend *b = dev->b;
    sweep s = {.b = b, .col = dev->col, .mem_cap = o->mem_cap, .dump_dir = o->dump_dir,
               .trace_path = o->trace_path, .quiet = o->quiet,
               .several_dtypes = o->n_dtypes > 1, .stop = &stop_signal,
               .world = dev->world, .writer = !dev->world || dev->world->rank == 0,
               /* every rank trains the same rates: the curves' all-reduces pair up */
               .lr_grid = &o->lr_grid, .base_lr = o->optimizer.lr,
               .base_effective = o->n_effective ? o->effective[0] : 0,
               .configs_planned = config_count(o, dev->world != NULL)};
    b->mem_cap = (size_t)o->mem_cap;
    /* SIGTERM (kill, a batch system's stop) as Ctrl-C, on every rank: stop
     * between configs, keep what was measured, and never die inside a
     * write; a rank waiting for the others watches it too (comm.h). */
    stop_signal_install();
    if (s.world)
        sweep_ranks_share_pids(s.world);
    if (s.world && !sweep_ranks_agree(&s, o))
        return end_ranks(&s, 2);
    if (!sweep_can_run(&s, o, why, sizeof why)) {
        stop_signal_restore();
        return 2;
    }
    if (s.world && s.world->ops->watch)
        s.world->ops->watch(s.world, &stop_signal, s.writer ? stop_signal_say : NULL);
    if (!s.writer) {
        /* Another rank writes: this one steps with it and writes nothing. */
        sweep_configs(&s, o);
        if (stop_signal)
            end_ranks(&s, 128 + stop_signal);
        stop_signal_restore();
        return s.failures ? 1 : 0;
    }
    /* Every output path, before anything is measured; the CSV is locked
     * until the last row is written. */
    run_outputs out;
    if (run_outputs_open(o, b->name, &out, why, sizeof why)) {
        fprintf(stderr, "accubench: %s\n", why);
        return end_ranks(&s, 2); /* the other ranks wait for this one */
    }
    return sweep_written(&s, o, dev, ctx, &out);
}
