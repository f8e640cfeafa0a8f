/* Model checks: windows at several splits against the CPU's full-batch
 * gradient (the MLP preset, and a small GPT), every execution mode against
 * async, and the memory probe. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_kind.h"
#include "dataset.h"
#include "dispatch.h"
#include "gpu_check.h"
#include "plural.h"
#include "model.h"
#include "probe.h"
#include "registry.h"
#include "step.h"
#include "trace.h"

/* A preset's shape (the names here are the table's own). */
static model_spec preset(const char *name)
{
    model_spec s;
    model_spec_parse(name, &s, NULL, 0);
    return s;
}

/* A model with its data on one backend. */
typedef struct bench {
    model m;
    dataset d;
    int ready;
} bench;

static int bench_open_model(backend *b, const char *model_name, int effective,
                            optimizer_kind opt, int buffers, bench *x)
{
    memset(x, 0, sizeof *x);
    optimizer_config oc = {.kind = opt, .lr = opt == OPT_SGD ? 0.05f : 1e-3f, .beta1 = 0.9f,
                           .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    model_spec spec = preset(model_name);
    input_spec in;
    model_input(&spec, &in);
    int rc = model_create(b, &spec, &oc, MODEL_SEED, &x->m);
    if (rc)
        return rc;
    rc = dataset_create(b, &in, effective, buffers, MODEL_SEED, &x->d);
    if (rc) {
        model_destroy(&x->m);
        return rc;
    }
    x->ready = 1;
    return BK_OK;
}

static int bench_open(backend *b, optimizer_kind opt, int buffers, bench *x)
{
    return bench_open_model(b, MODEL_PRESET, MODEL_EFFECTIVE, opt, buffers, x);
}

static void bench_close(bench *x)
{
    if (!x->ready)
        return;
    dataset_destroy(&x->d);
    model_destroy(&x->m);
    x->ready = 0;
}

/* The window's gradient and loss at one split, from the starting weights. */
static int window_gradient(bench *x, int micro, float *grads, float *loss)
{
    backend *b = x->m.b;
    split sp;
    char why[200];
    if (split_make(x->d.effective_batch, micro, 1, &sp, why, sizeof why)) {
        snprintf(b->error, sizeof b->error, "%s", why);
        return BK_ERROR;
    }
    step_runner s;
    int rc = model_reset(&x->m);
    if (!rc)
        rc = step_runner_init(&s, &x->m, &x->d, &sp, MODE_ASYNC, REDUCTION_SUM);
    if (rc)
        return rc;
    rc = step_window(&s, 0);
    if (!rc)
        rc = bk_download(b, grads, x->m.grads, x->m.n_params * sizeof(float));
    if (!rc)
        rc = bk_download(b, loss, s.loss_sum, sizeof *loss);
    step_runner_free(&s);
    return rc;
}

/* The gradient judged tensor by tensor: the worst tensor's relative error
 * (each on its own scale), named in `note` beside the whole vector's. A
 * wrong bias or LayerNorm vector is a few hundred floats among millions:
 * one error over the whole vector would pass it at the bf16 tolerance. */
static double tensor_err(const model_spec *s, const float *got, const float *want, size_t n,
                         char *note, size_t len)
{
    double whole = rel_err(got, want, n);
    int count = s->kind->tensors(s, NULL, 0);
    model_tensor *t = count > 0 ? malloc((size_t)count * sizeof *t) : NULL;
    if (!t) {
        snprintf(note, len, "whole vector only (no tensor list)");
        return whole;
    }
    s->kind->tensors(s, t, count);
    double worst = 0;
    const char *name = "(none: all exact)";
    for (int i = 0; i < count; i++) {
        size_t size = (size_t)(t[i].rows * t[i].cols);
        double e = t[i].offset + size <= n ? rel_err(got + t[i].offset, want + t[i].offset, size)
                                           : NAN;
        if (!(e <= worst) && !isnan(worst)) { /* a NaN is the worst there is */
            worst = e;
            name = t[i].name;
        }
    }
    snprintf(note, len, "worst tensor %s; whole vector %.2e", name, whole);
    free(t);
    return isnan(whole) ? whole : worst;
}

/* One forward and backward (E x 1) and accumulated windows at several
 * splits, the last uneven, each against the CPU's full-batch gradient. */
void check_model(backend *dev, dtype dt, const float *ref_grads, float ref_loss,
                        size_t n_params)
{
    static const int micros[] = {MODEL_EFFECTIVE, 16, 8, 5, 1};
    float *g = malloc(n_params * sizeof *g);
    bench x;
    if (!g) {
        record("model", dt, "", NAN, 0, "out of host memory");
        return;
    }
    if (bench_open(dev, OPT_ADAMW, 1, &x)) {
        record_failure("model", dt, "", dev);
        free(g);
        return;
    }
    for (size_t i = 0; i < sizeof micros / sizeof micros[0]; i++) {
        char split[24];
        int accum = (MODEL_EFFECTIVE + micros[i] - 1) / micros[i];
        snprintf(split, sizeof split, "%dx%d", micros[i], accum);
        const char *check = micros[i] == MODEL_EFFECTIVE ? "forward+backward" : "window";
        float loss;
        if (window_gradient(&x, micros[i], g, &loss)) {
            record_failure(check, dt, split, dev);
            continue;
        }
        char note[160];
        model_spec spec = preset(MODEL_PRESET);
        record(check, dt, split, tensor_err(&spec, g, ref_grads, n_params, note, sizeof note),
               model_tolerance(dt), note);
        if (micros[i] == MODEL_EFFECTIVE)
            record("loss", dt, split, rel_err(&loss, &ref_loss, 1), model_tolerance(dt), NULL);
    }
    bench_close(&x);
    free(g);
}

/* A decoder's windows (the GPT's, the Llama's) of one shape against the
 * CPU's full-batch gradient of the same shape (computed again for each
 * dtype), at the splits `micros` of `effective`; the first is the whole
 * batch (rows "<prefix>forward+backward" and "<prefix>loss"), the rest
 * "<prefix>window". */
static void decoder_windows(backend *cpu, backend *dev, dtype dt, const char *shape,
                            int effective, const int *micros, int n_micros, const char *prefix,
                            recompute r)
{
    bench ref, x;
    float *want = NULL, *g = NULL, want_loss = 0;
    char check[48];
    snprintf(check, sizeof check, "%scpu reference", prefix);
    if (bench_open_model(cpu, shape, effective, OPT_ADAMW, 1, &ref)) {
        record_failure(check, dt, "", cpu);
        return;
    }
    size_t n = ref.m.n_params;
    want = malloc(n * sizeof *want);
    g = malloc(n * sizeof *g);
    if (!want || !g) {
        record(check, dt, "", NAN, 0, "out of host memory");
        goto done;
    }
    if (window_gradient(&ref, effective, want, &want_loss)) {
        record_failure(check, dt, "", cpu);
        goto done;
    }
    if (bench_open_model(dev, shape, effective, OPT_ADAMW, 1, &x)) {
        snprintf(check, sizeof check, "%smodel", prefix);
        record_failure(check, dt, "", dev);
        goto done;
    }
    x.m.spec.recompute = r; /* the device recomputes; the reference keeps everything */
    for (int i = 0; i < n_micros; i++) {
        char split[24], note[160];
        int accum = (effective + micros[i] - 1) / micros[i];
        snprintf(split, sizeof split, "%dx%d", micros[i], accum);
        int whole = micros[i] == effective;
        snprintf(check, sizeof check, "%s%s", prefix, whole ? "forward+backward" : "window");
        float loss;
        if (window_gradient(&x, micros[i], g, &loss)) {
            record_failure(check, dt, split, dev);
            continue;
        }
        record(check, dt, split, tensor_err(&x.m.spec, g, want, n, note, sizeof note),
               model_tolerance(dt), note);
        if (whole) {
            snprintf(check, sizeof check, "%sloss", prefix);
            record(check, dt, split, rel_err(&loss, &want_loss, 1), model_tolerance(dt), NULL);
        }
    }
    bench_close(&x);
done:
    bench_close(&ref);
    free(want);
    free(g);
}

/* Where the device fuses attention (the windows above ran its fused op),
 * the whole batch and one split again on its unfused path (the ops table
 * without the fused entries, as ACCUBENCH_CUDA_ATTENTION=unfused gives
 * it): rows "<model>unfused forward+backward", "... loss", "... window",
 * the word the attention table's. */
static void unfused_windows(backend *cpu, backend *dev, dtype dt, const char *shape,
                            int effective, const int *micros, const char *model)
{
    if (!dev->ops->attention_forward)
        return;
    char prefix[40];
    snprintf(prefix, sizeof prefix, "%s%s ", model, attention_name(ATTENTION_UNFUSED));
    const backend_ops *ops = dev->ops;
    backend_ops unfused = *ops;
    unfused.attention_forward = NULL;
    unfused.attention_backward = NULL;
    dev->ops = &unfused;
    decoder_windows(cpu, dev, dt, shape, effective, micros, 2, prefix, RECOMPUTE_NONE);
    dev->ops = ops;
}

/* A small GPT per dtype: rows "gpt forward+backward", "gpt window",
 * "gpt loss"; and the same on the device under each recompute value
 * ("gpt recompute gelu window", ...) against the CPU's gradient without. */
void check_gpt_model(backend *cpu, backend *dev, dtype dt)
{
    static const int micros[] = {GPT_CHECK_EFFECTIVE, 4, 3, 1};
    decoder_windows(cpu, dev, dt, GPT_CHECK_SHAPE, GPT_CHECK_EFFECTIVE, micros, 4, "gpt ",
                    RECOMPUTE_NONE);
    for (recompute r = RECOMPUTE_NONE + 1; r < RECOMPUTE_ROWS; r++) {
        char prefix[40];
        snprintf(prefix, sizeof prefix, "gpt recompute %s ", recompute_name(r));
        decoder_windows(cpu, dev, dt, GPT_CHECK_SHAPE, GPT_CHECK_EFFECTIVE, micros + 1, 2, prefix,
                        r);
    }
    unfused_windows(cpu, dev, dt, GPT_CHECK_SHAPE, GPT_CHECK_EFFECTIVE, micros, "gpt ");
}

/* A small Llama per dtype: rows "llama forward+backward", "llama window",
 * "llama loss", and "llama recompute block window" (its one recompute
 * value besides none). */
void check_llama_model(backend *cpu, backend *dev, dtype dt)
{
    static const int micros[] = {LLAMA_CHECK_EFFECTIVE, 4, 3, 1};
    decoder_windows(cpu, dev, dt, LLAMA_CHECK_SHAPE, LLAMA_CHECK_EFFECTIVE, micros, 4, "llama ",
                    RECOMPUTE_NONE);
    decoder_windows(cpu, dev, dt, LLAMA_CHECK_SHAPE, LLAMA_CHECK_EFFECTIVE, micros + 1, 2,
                    "llama recompute block ", RECOMPUTE_BLOCK);
    unfused_windows(cpu, dev, dt, LLAMA_CHECK_SHAPE, LLAMA_CHECK_EFFECTIVE, micros, "llama ");
}

/* GPT-2 small itself, one sequence of 1024 (its causal softmax at T = 1024,
 * its 50304 classes, its 768-wide LayerNorms), and a 12-layer GPT for how
 * far the error grows with depth (bf16 rounds every layer's activations). */
void check_gpt_real(backend *cpu, backend *dev, dtype dt)
{
    static const int one[] = {1}, deep[] = {GPT_DEEP_EFFECTIVE, 2};
    decoder_windows(cpu, dev, dt, "gpt-small", 1, one, 1, "gpt-small ", RECOMPUTE_NONE);
    decoder_windows(cpu, dev, dt, GPT_DEEP_SHAPE, GPT_DEEP_EFFECTIVE, deep, 2, "gpt 12 layers ",
                    RECOMPUTE_NONE);
}

/* Weights after a few steps of `opt` (rotating two input buffers) in
 * `mode`, the update run where `at` says (step_runner_init reads it). */
static int steps_in_mode(backend *dev, const char *model_name, int effective,
                         optimizer_kind opt, exec_mode mode, optimizer_at at, int micro,
                         int steps, float *w0, float *w)
{
    bench x;
    int rc = bench_open_model(dev, model_name, effective, opt, 2, &x);
    if (rc)
        return rc;
    x.m.opt.at = at;
    split sp;
    char why[200];
    step_runner s;
    split_make(effective, micro, 1, &sp, why, sizeof why);
    size_t bytes = x.m.n_params * sizeof(float);
    rc = step_runner_init(&s, &x.m, &x.d, &sp, mode, REDUCTION_SUM);
    if (!rc) {
        rc = bk_download(dev, w0, x.m.params, bytes);
        for (int i = 0; i < steps && !rc; i++)
            rc = step_run(&s);
        if (!rc)
            rc = bk_download(dev, w, x.m.params, bytes);
        step_runner_free(&s);
    }
    bench_close(&x);
    return rc;
}

/* Every execution mode, and the optimizer in the backward, computes what
 * async computes: compared by the weights' change over three steps of
 * `opt`, on the device itself. AdamW too, since its bias correction is
 * uploaded before each step (a graph replays it; in the backward each layer
 * reads it): exactly what SGD never exercises. `prefix` names the model and
 * the optimizer in the check's name ("", "gpt ", "adamw ", "gpt adamw "). */
static void modes_of(backend *dev, dtype dt, const char *model_name, int effective, int micro,
                     optimizer_kind opt, const char *prefix)
{
    const int steps = 3;
    model_spec spec = preset(model_name);
    size_t n_params = model_param_count(&spec);
    float *w0 = malloc(n_params * sizeof(float)), *ref = malloc(n_params * sizeof(float));
    float *w = malloc(n_params * sizeof(float));
    char split[24], check[48];
    snprintf(split, sizeof split, "%dx%d", micro, (effective + micro - 1) / micro);
    if (!w0 || !ref || !w) {
        snprintf(check, sizeof check, "%smode", prefix);
        record(check, dt, split, NAN, 0, "out of host memory");
        goto done;
    }
    if (steps_in_mode(dev, model_name, effective, opt, MODE_ASYNC, OPT_AT_STEP, micro, steps, w0,
                      ref)) {
        snprintf(check, sizeof check, "%smode async", prefix);
        record_failure(check, dt, split, dev);
        goto done;
    }
    for (size_t i = 0; i < n_params; i++)
        ref[i] -= w0[i];
    for (int k = 0; k < MODE_COUNT; k++) {
        exec_mode mode = (exec_mode)k;
        if (mode == MODE_ASYNC)
            continue; /* the reference */
        snprintf(check, sizeof check, "%smode %s vs async", prefix, mode_name(mode));
        if (mode_info_of(mode)->graph && !dev->ops->graph_begin) {
            printf("skip %-26s %-5s (the %s backend has no graphs)\n", check, dtype_name(dt),
                   dev->name);
            continue;
        }
        if (steps_in_mode(dev, model_name, effective, opt, mode, OPT_AT_STEP, micro, steps, w0,
                          w)) {
            record_failure(check, dt, split, dev);
            continue;
        }
        for (size_t i = 0; i < n_params; i++)
            w[i] -= w0[i];
        record(check, dt, split, rel_err(w, ref, n_params), op_tolerance(DTYPE_FP32), NULL);
    }
    /* The update inside the last backward, layer by layer (--optimizer-at
     * backward): the same arithmetic as after the window. */
    snprintf(check, sizeof check, "%soptimizer in backward", prefix);
    if (steps_in_mode(dev, model_name, effective, opt, MODE_ASYNC, OPT_AT_BACKWARD, micro, steps,
                      w0,
                      w)) {
        record_failure(check, dt, split, dev);
    } else {
        for (size_t i = 0; i < n_params; i++)
            w[i] -= w0[i];
        record(check, dt, split, rel_err(w, ref, n_params), op_tolerance(DTYPE_FP32), NULL);
    }
done:
    free(w0);
    free(ref);
    free(w);
}

void check_modes(backend *dev, dtype dt)
{
    modes_of(dev, dt, MODEL_PRESET, MODEL_EFFECTIVE, 8, OPT_SGD, "");
    modes_of(dev, dt, GPT_CHECK_SHAPE, GPT_CHECK_EFFECTIVE, 4, OPT_SGD, "gpt ");
    modes_of(dev, dt, MODEL_PRESET, MODEL_EFFECTIVE, 8, OPT_ADAMW, "adamw ");
    modes_of(dev, dt, GPT_CHECK_SHAPE, GPT_CHECK_EFFECTIVE, 4, OPT_ADAMW, "gpt adamw ");
}

/* The device's timer against the host's clock: 20 steps of the small GPT
 * between two timer records, the host clock read after a sync before and
 * after. The device's interval lies inside the host's, short of it only by
 * the first launch and the last sync (tens of microseconds against
 * milliseconds), so their ratio must lie in [0.9, 1.001]: a timer on the
 * wrong stream, or one that stops early, reads far below. */
void check_timing(backend *dev, dtype dt)
{
    const char *check = "timer vs host clock";
    /* A backend whose dispatches are its device work times with the host's
     * clock itself: a few steps show the check runs. */
    const int steps = dev->caps & BK_CAP_DISPATCH_IS_DEVICE_WORK ? 2 : 20;
    char shape[24], note[160];
    snprintf(shape, sizeof shape, "4x4 x %d", steps);
    bench x;
    bk_timer *t0 = NULL, *t1 = NULL;
    step_runner s;
    split sp;
    int rc, runner = 0;
    double dev_ms = 0;
    if ((rc = bench_open_model(dev, GPT_CHECK_SHAPE, GPT_CHECK_EFFECTIVE, OPT_ADAMW, 2, &x))) {
        record_failure(check, dt, shape, dev);
        return;
    }
    split_make(GPT_CHECK_EFFECTIVE, 4, 1, &sp, note, sizeof note);
    if (!(rc = step_runner_init(&s, &x.m, &x.d, &sp, MODE_ASYNC, REDUCTION_SUM)))
        runner = 1;
    if (!rc && !(rc = dev->ops->timer_create(dev, &t0)))
        rc = dev->ops->timer_create(dev, &t1);
    if (!rc)
        rc = step_run(&s); /* warm: plans made, memory touched */
    if (!rc)
        rc = dev->ops->sync(dev);
    uint64_t h0 = trace_now_ns();
    if (!rc)
        rc = dev->ops->timer_record(dev, t0);
    for (int i = 0; i < steps && !rc; i++)
        rc = step_run(&s);
    if (!rc)
        rc = dev->ops->timer_record(dev, t1);
    if (!rc)
        rc = dev->ops->sync(dev);
    double host_ms = (double)(trace_now_ns() - h0) / 1e6;
    if (!rc)
        rc = dev->ops->timer_elapsed_ms(dev, t0, t1, &dev_ms);
    if (rc) {
        record_failure(check, dt, shape, dev);
    } else {
        double ratio = dev_ms / host_ms;
        snprintf(note, sizeof note, "device %.3f ms, host %.3f ms: ratio %.3f (in [0.9, 1.001])",
                 dev_ms, host_ms, ratio);
        record(check, dt, shape, ratio >= 0.9 && ratio <= 1.001 ? 0 : 1, 0, note);
    }
    if (t0)
        dev->ops->timer_destroy(dev, t0);
    if (t1)
        dev->ops->timer_destroy(dev, t1);
    if (runner)
        step_runner_free(&s);
    bench_close(&x);
}

/* The probe on the real device: with no cap and a bound far past what the
 * device holds, the search goes through real allocation failures and must
 * come back with an answer, the device still usable afterwards; with a cap,
 * the answer is the arithmetic's. */
void check_probe(backend *dev, dtype dt)
{
    model_spec spec = preset("XL");
    probe_request req = {.model = &spec, .dtype = dt, .optimizer = OPT_ADAMW,
                         .effective = 0, .input_buffers = 2, .max_micro = 1 << 22};
    probe_result r;
    int rc = probe_find_max_micro(dev, &req, &r);
    char note[200];
    void *p = NULL;
    if (rc == BK_OK)
        rc = bk_alloc(dev, 1 << 20, &p);
    if (rc == BK_OK)
        rc = bk_zero(dev, p, 1 << 20);
    if (rc == BK_OK)
        rc = dev->ops->sync(dev);
    bk_free(dev, p, 1 << 20);
    if (rc != BK_OK) {
        record_failure("probe device limit", dt, "XL", dev);
    } else {
        snprintf(note, sizeof note, "XL fits micro %d of %d considered; %zu bytes; %d %s",
                 r.micro, r.bound, r.need.total, r.probes, plural(r.probes, "probe", "probes"));
        record("probe device limit", dt, "XL", r.micro > 0 && r.micro < r.bound ? 0 : 1, 0,
               note);
    }

    /* Under a 16 GiB cap, unaccumulated: L's weights and state take about
     * 10 GB, each example about 0.35 MB, so the cap binds near 20000. */
    spec = preset("L");
    req.max_micro = 0;
    size_t cap = (size_t)16 << 30;
    int want = 0;
    for (int micro = 1; micro <= PROBE_DEFAULT_MAX_MICRO; micro++) {
        memory_need n;
        model_memory_need(&spec, dt, OPT_ADAMW, micro, micro, 2, &n);
        if (n.total + dev->mem_in_use > cap)
            break;
        want = micro;
    }
    dev->mem_cap = cap;
    rc = probe_find_max_micro(dev, &req, &r);
    dev->mem_cap = 0;
    if (rc != BK_OK) {
        record_failure("probe 16G cap", dt, "L", dev);
        return;
    }
    snprintf(note, sizeof note, "micro %d (the arithmetic says %d) in %d %s", r.micro, want,
             r.probes, plural(r.probes, "probe", "probes"));
    record("probe 16G cap", dt, "L", r.micro == want ? 0 : 1, 0, note);
}

int cpu_reference(backend *cpu, float **grads, float *loss, size_t *n_params)
{
    model_spec spec = preset(MODEL_PRESET);
    *n_params = model_param_count(&spec);
    *grads = malloc(*n_params * sizeof **grads);
    if (!*grads) {
        snprintf(cpu->error, sizeof cpu->error, "out of host memory");
        return BK_OOM;
    }
    bench x;
    int rc = bench_open(cpu, OPT_ADAMW, 1, &x);
    if (!rc)
        rc = window_gradient(&x, MODEL_EFFECTIVE, *grads, loss);
    bench_close(&x);
    return rc;
}
