/* Steps in each execution mode. The arithmetic is the same in every mode;
 * only how the host drives the device changes, as the mode's row in the
 * modes table says (modes.c). */
#include "step.h"

#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "dp_step.h"
#include "ranges.h"

/* Forward and backward of micro-batch k of buffer buf. */
static int run_micro(step_runner *s, int buf, int k)
{
    model *m = s->m;
    micro_batch_view mb = dataset_micro(s->d, buf, s->sp.micro, k);
    mb.first_of_window = k == 0;
    activations transient, *a = &s->acts;
    int rc;
    range_push("micro");
    bk_allocator from = mode_info_of(s->mode)->activations;
    if (from != BK_ALLOC_HELD) {
        a = &transient;
        if ((rc = activations_create(m, s->sp.micro, from, a)))
            goto done;
    }
    rc = model_forward(m, a, &mb, s->loss_sum);
    if (!rc)
        rc = model_backward(m, a, &mb);
    if (a == &transient)
        activations_destroy(m, a, from);
    if (!rc && mode_info_of(s->mode)->sync_per_micro)
        rc = m->b->ops->sync(m->b);
done:
    range_pop();
    return rc;
}

/* The accumulator as its dtype holds it, once floats [offset, + count)
 * hold this micro-batch's sum: a bf16 one rounded (grad_dtype.h). Rounding
 * a range when the backward reports it final is rounding it after the
 * backward, so the optimizer in the backward reads what it would read
 * after the window. The rounding is the accumulation's, so it runs in a
 * backward range wherever it is called from (after a micro-batch, or inside
 * the last backward, where the range nests): the trace's phase columns
 * count it as backward time, not as time outside every phase. */
static int hold_accumulator(step_runner *s, size_t offset, size_t count)
{
    if (!s->round_bf16)
        return BK_OK;
    range_push("backward");
    int rc = bk_round_bf16(s->m->b, s->m->grads + offset, count);
    range_pop();
    return rc;
}

/* The optimizer in the backward: a range of the last backward is final,
 * and the backward reads none of its weights again: update it now. */
static int on_range_final(void *ctx, size_t offset, size_t count)
{
    step_runner *s = ctx;
    int rc = step_take_range(s, offset, count);
    if (!rc)
        rc = hold_accumulator(s, offset, count);
    return rc ? rc : model_optimizer_range(s->m, offset, count);
}

static int optimizer_hook_begin(step_runner *s)
{
    model *m = s->m;
    /* The update's hyper-parameters: optimizer work, as they are inside
     * model_optimizer_step when the optimizer runs after the window. */
    range_push("optimizer");
    int rc = model_upload_hparams(m);
    range_pop();
    s->unreported = m->n_params;
    m->grad_ready = on_range_final;
    m->grad_ready_ctx = s;
    return rc;
}

/* After the last backward: what it did not report, then the step's count. */
static int optimizer_hook_end(step_runner *s, int rc)
{
    model *m = s->m;
    m->grad_ready = NULL;
    m->grad_ready_ctx = NULL;
    if (!rc && s->unreported > 0)
        rc = hold_accumulator(s, 0, s->unreported);
    if (!rc && s->unreported > 0)
        rc = model_optimizer_range(m, 0, s->unreported);
    if (!rc)
        m->step_count++;
    return rc;
}

/* The window's micro-batches; with `optimize`, the optimizer runs inside
 * the last backward (the caller runs it after the window otherwise). */
static int run_window(step_runner *s, int buf, int optimize)
{
    int rc = model_start_window(s->m, s->loss_sum);
    for (int k = 0; k < s->sp.accum && !rc; k++) {
        int hooked = optimize && k == s->sp.accum - 1;
        if (s->comm && (rc = dp_micro_begin(s, k)))
            break;
        if (hooked && (rc = optimizer_hook_begin(s)))
            break;
        rc = run_micro(s, buf, k);
        if (!rc && !hooked) /* hooked: each range as the backward reports it */
            rc = hold_accumulator(s, 0, s->m->n_params);
        if (hooked)
            rc = optimizer_hook_end(s, rc);
        if (s->comm)
            rc = dp_micro_end(s, k, rc);
    }
    return rc;
}

static int capture_graphs(step_runner *s)
{
    backend *b = s->m->b;
    if (!b->ops->graph_begin) {
        snprintf(b->error, sizeof b->error, "the %s backend cannot capture graphs", b->name);
        return BK_UNSUPPORTED;
    }
    /* One eager window of this split first, so that whatever its GEMM
     * shapes and kernels need on first use (an algorithm choice, a
     * workspace, a module load) happens outside the capture. It changes the
     * gradients and the loss sum only (no optimizer step): zeroed again, as
     * the first step will find them. */
    int eager = run_window(s, 0, 0);
    if (!eager)
        eager = model_zero_grads(s->m, s->loss_sum);
    if (eager)
        return eager;
    int64_t steps = s->m->step_count;
    for (int i = 0; i < s->d->count; i++) {
        int rc = b->ops->graph_begin(b);
        if (rc)
            return rc;
        /* Captured, not run: the hyper-parameters are uploaded before each
         * replay, outside the graph. */
        int body = run_window(s, i, 0);
        if (!body)
            body = model_optimizer_step(s->m, 1);
        rc = b->ops->graph_end(b, &s->graphs[i]);
        if (body || rc)
            return body ? body : rc;
    }
    s->m->step_count = steps;
    return BK_OK;
}

void step_runner_free(step_runner *s)
{
    backend *b = s->m ? s->m->b : NULL;
    if (!b)
        return;
    for (int i = 0; i < DATASET_MAX_BUFFERS; i++)
        if (s->graphs[i])
            b->ops->graph_destroy(b, s->graphs[i]);
    if (s->acts.capacity)
        activations_destroy(s->m, &s->acts, BK_ALLOC_HELD);
    bk_free(b, s->loss_sum, MEMORY_NEED_LOSS_SUM_BYTES);
    memset(s, 0, sizeof *s);
}

int step_runner_init(step_runner *s, model *m, dataset *d, const split *sp,
                     exec_mode mode, reduction r)
{
    return step_runner_init_dp(s, m, d, sp, mode, r, NULL, SYNC_WINDOW);
}

int step_runner_init_dp(step_runner *s, model *m, dataset *d, const split *sp,
                        exec_mode mode, reduction r, comm *c, sync_mode sync)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->d = d;
    s->sp = *sp;
    s->mode = mode;
    s->reduction = r;
    s->comm = c;
    s->sync = sync;
    backend *b = m->b;
    s->round_bf16 = grad_dtype_info_of(m->grad_dtype)->rounds_bf16;
    if (c && s->round_bf16) {
        /* Where each rank's sum would be rounded, and whether the
         * all-reduce or the reduce-scatter of ZeRO-2's slices would sum in
         * bf16 too, is a choice of its own that no row makes yet. */
        snprintf(b->error, sizeof b->error, "a %s gradient accumulator is measured on one "
                 "device: with ranks, where the all-reduce would round is not chosen",
                 grad_dtype_name(m->grad_dtype));
        return BK_UNSUPPORTED;
    }
    if (c && mode_info_of(mode)->graph) {
        /* An all-reduce driven from the host (MPI) cannot be captured, and
         * the buckets of the overlap are issued by host callbacks. */
        snprintf(b->error, sizeof b->error, "the %s mode does not capture the all-reduce "
                 "of a data-parallel step", mode_name(mode));
        return BK_UNSUPPORTED;
    }
    /* Several devices all-reduce before the update, and a graph is
     * captured whole: both run the optimizer after the window. */
    s->optimize_in_backward = m->opt.at == OPT_AT_BACKWARD && !c &&
                              !mode_info_of(mode)->graph && m->spec.kind->reports_grad_ready;
    /* The need counts it (MEMORY_NEED_LOSS_SUM_BYTES): it is held under the
     * cap with the activations, and a cap of exactly the need must hold both. */
    int rc = bk_alloc(b, MEMORY_NEED_LOSS_SUM_BYTES, (void **)&s->loss_sum);
    /* Zeroed now: a lone pass (step_single_pass, the --max-step-s probe)
     * adds into it before any window has started one. */
    if (!rc)
        rc = bk_zero(b, s->loss_sum, MEMORY_NEED_LOSS_SUM_BYTES);
    if (!rc)
        rc = dataset_set_split(d, sp->micro, r);
    if (!rc && mode_info_of(mode)->activations == BK_ALLOC_HELD)
        rc = activations_create(m, sp->micro, BK_ALLOC_HELD, &s->acts);
    if (!rc && mode_info_of(mode)->graph)
        rc = capture_graphs(s);
    if (rc)
        step_runner_free(s);
    return rc;
}

int step_runner_resume(step_runner *s)
{
    return dataset_set_split(s->d, s->sp.micro, s->reduction);
}

/* One step inside a range of the given name. */
static int step_run_in(step_runner *s, const char *range)
{
    int buf = s->next_buffer;
    s->next_buffer = (buf + 1) % s->d->count;
    int rc;
    range_push(range);
    if (mode_info_of(s->mode)->graph) {
        rc = model_upload_hparams(s->m);
        if (!rc)
            rc = bk_graph_launch(s->m->b, s->graphs[buf]);
        s->m->step_count++;
    } else if (s->optimize_in_backward) {
        rc = run_window(s, buf, 1);
    } else {
        rc = run_window(s, buf, 0);
        if (!rc)
            rc = model_optimizer_step(s->m, 0);
        if (!rc && s->comm) /* sharded: every rank's updated slice, to every rank */
            rc = dp_after_update(s);
    }
    range_pop();
    s->steps_done++;
    return rc;
}

int step_run(step_runner *s) { return step_run_in(s, STEP_RANGE); }

int step_run_timed(step_runner *s) { return step_run_in(s, STEP_RANGE_TIMED); }

int step_window(step_runner *s, int buf)
{
    int rc = run_window(s, buf, 0);
    if (!rc && s->comm) /* sharded: the check reads the gradient whole */
        rc = dp_gather_gradient(s);
    return rc;
}

int step_single_pass(step_runner *s)
{
    int buf = s->next_buffer;
    s->next_buffer = (buf + 1) % s->d->count;
    return run_micro(s, buf, 0);
}
