/* One row of the sweep before and after its config runs: its config
 * columns, whether it can run at all (the cap, the device's memory, what
 * the split and the model allow), its progress line, and its writing. */
#include "sweep_row.h"

#include <stdio.h>
#include <string.h>

#include "config_run.h"
#include "console_table.h"
#include "dispatch.h"
#include "dp_check.h"
#include "memory_fit.h"
#include "shard_modes.h"
#include "split_text.h"
#include "stop_signal.h"
#include "sweep_state.h"
#include "row_label.h"

void sweep_row_fill(result_row *r, const sweep *s, const config *c)
{
    model_spec spec = config_model_spec(c); /* with the row's recompute value */
    (void)bk_use_dtype(s->b, c->dtype); /* its arrangement (validated: cannot fail) */
    model_spec_on(&spec, s->b);
    const model_spec *ms = &spec;
    const split *sp = &c->sp;
    result_row_clear(r);
    snprintf(r->backend, sizeof r->backend, "%s", s->b->name);
    snprintf(r->device, sizeof r->device, "%s", s->b->device);
    snprintf(r->model, sizeof r->model, "%s", ms->name);
    /* Each row axis's column: its value's name, empty where it varies only
     * with ranks and the row has none. */
    for (int a = 0; a < sweep_axes_n; a++) {
        const sweep_axis *ax = &sweep_axes[a];
        int value = *(const int *)(const void *)((const char *)c + ax->field);
        snprintf((char *)r + ax->column, RESULT_TEXT_LEN, "%s",
                 sweep_axis_ranks_only(ax) && !c->data_parallel ? "" : axis_name(ax->option->ax, value));
    }
    r->params = (int64_t)model_param_count(ms);
    r->effective_batch = sp->global;
    r->micro_batch = sp->micro;
    r->arm = c->arm;
    r->accum_steps = sp->accum;
    r->last_micro_batch = sp->last;
    r->devices = sp->devices;
    /* micro x K x devices is not E: the ranks' parts are ragged, and the
     * split the row gives is the largest part's (split_make_sharded) */
    if (sp->devices > 1 && (long long)sp->micro * sp->accum * sp->devices != sp->global) {
        char label[64];
        split_text(label, sizeof label, sp->micro, sp->accum, sp->last);
        row_note(r, "E = %d over %d ranks is ragged: each global micro-batch (at most %d "
                 "examples) is cut into %d near-equal parts and %s is the split of the rank "
                 "with the most",
                 sp->global, sp->devices, sp->micro * sp->devices, sp->devices, label);
    }
    r->flops_per_step = model_flops_per_step(ms, sp->effective);
    r->recompute_flops_per_step = model_recompute_flops(ms, sp->effective);
    memory_need need;
    model_memory_need(ms, c->dtype, c->optimizer, sp->micro, sp->global, c->buffers, &need);
    if (c->data_parallel) /* one rank's: its slices */
        shard_memory_need(&need, c->shard, sp->devices, ms, c->optimizer);
    r->mem_need_bytes = (int64_t)need.total;
}

/* Whether a config fits: the user's cap, and the device's memory (where
 * that is the host's memory, the host copies of the check share it too). */
int sweep_row_fits(const sweep *s, result_row *r)
{
    uint64_t need = (uint64_t)r->mem_need_bytes;
    if (need >= MEMORY_NEED_MAX) { /* saturated: the true need is larger still */
        snprintf(r->note, sizeof r->note, "needs over %llu bytes: the count saturates at 2^63",
                 (unsigned long long)need);
        return 0;
    }
    if (s->mem_cap && need > s->mem_cap) {
        snprintf(r->note, sizeof r->note, "needs %llu bytes; over the cap of %llu",
                 (unsigned long long)need, (unsigned long long)s->mem_cap);
        return 0;
    }
    return memory_fit(s->b, need, (uint64_t)r->params, r->note, sizeof r->note);
}

int sweep_config_fits(const sweep *s, const config *c)
{
    result_row r;
    sweep_row_fill(&r, s, c);
    return sweep_row_fits(s, &r);
}

/* The progress line of the config this row is for. */
void sweep_row_progress(sweep *s, const result_row *r)
{
    char label[RESULT_TEXT_LEN * 4];
    row_label_of(r, label, sizeof label);
    progress_config(s->progress, label);
}

/* A device the backend says is lost (backend.lost) ends the sweep after
 * the row that lost it: every config left would be one more error row.
 * s->lost tells the end of the sweep that the stop was this, not a write
 * that failed: the rows are on disk and the run exits as a failure (1). */
static int device_lost(sweep *s, const result_row *r)
{
    if (!s->b->lost)
        return 0;
    s->lost = 1;
    fprintf(stderr, "accubench: the device cannot run anything more in this process (%s): "
                    "the sweep stops after %s micro %lld\n",
            r->note[0] ? r->note : s->b->error, r->model, (long long)r->micro_batch);
    return -1;
}

int sweep_row_emit(sweep *s, const result_row *r)
{
    progress_config_result(s->progress, r->step_ms_median, r->pass_ms, (long long)r->samples);
    progress_config_done(s->progress);
    return sweep_row_write(s, r);
}

int sweep_row_write(sweep *s, const result_row *r)
{
    char why[400];
    if (strcmp(r->status, STATUS_ERROR) == 0)
        s->failures++;
    progress_clear(s->progress);
    if (!s->writer)
        return device_lost(s, r); /* rank 0 writes for every rank */
    if (!s->quiet) {
        char levers[RESULT_TEXT_LEN], said[RESULT_TEXT_LEN + 32];
        row_label_levers(r, levers, sizeof levers);
        /* one dtype is said above the table; several, by each row */
        snprintf(said, sizeof said, "%s%s%s%s", s->several_dtypes ? "dtype " : "",
                 s->several_dtypes ? r->dtype : "", s->several_dtypes && *levers ? " " : "",
                 levers);
        console_table_row(stdout, r, said);
    }
    /* The row and its curves (--train-steps) are one set: both on disk,
     * or neither (a full disk), never a row whose curve is missing. */
    atomic_file_job curves_job = {0};
    int with_curves = s->curves && curves_row_job(s->curves, r, &curves_job);
    int failed = csv_writer_append_with(&s->csv, r, &curves_job, with_curves, why, sizeof why);
    if ((s->curves && curves_row_done(s->curves, !failed, why, sizeof why)) || failed) {
        fprintf(stderr, "accubench: %s\n", why);
        return -1;
    }
    stop_signal_progress(s->csv.count, s->configs_planned); /* for mpirun's handler */
    return device_lost(s, r);
}

/* Whether the config fits on every rank of s->comm (each may have its own
 * cap): the ranks run it together or not at all. */
static int fits_every_rank(sweep *s, result_row *r)
{
    int mine = sweep_row_fits(s, r);
    if (!s->comm)
        return mine;
    int all = dp_agree_all(s->comm, mine);
    if (mine && !all)
        snprintf(r->note, sizeof r->note, "another rank's memory cannot hold it");
    return all;
}

int sweep_row_start(sweep *s, const sweep_place *p, const config *c, result_row *r)
{
    char cannot[200];
    model_spec spec = config_model_spec(c);
    sweep_row_fill(r, s, c);
    sweep_row_progress(s, r);
    if (c->unsplittable[0])
        row_set_status(r, STATUS_SKIPPED, c->unsplittable);
    else if (!model_can_recompute(&spec, cannot, sizeof cannot))
        row_set_status(r, STATUS_SKIPPED, cannot);
    else if (p->model_rc[c->dtype])
        row_status_said(r, p->model_rc[c->dtype], p->model_why[c->dtype]);
    else if (p->data_rc[c->dtype])
        row_status_from(r, p->data_rc[c->dtype], s->b);
    else if (!fits_every_rank(s, r) || !p->m[c->dtype].b) /* no model: not even its least row fits */
        snprintf(r->status, sizeof r->status, "%s", STATUS_OOM);
    else
        return 1;
    return 0;
}

