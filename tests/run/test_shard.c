/* Sharded data parallel's state on one rank (shard_modes.h, model_shard):
 * the memory need of a rank worked out by hand and against what the CPU
 * backend is asked for, to the byte, with a parameter count no rank count
 * divides (the padding); the update of a rank's slice equal, to the bit,
 * to the whole vector's update on those parameters and nothing outside
 * it touched; and each row's schedule of reduce-scatters. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu_backend.h"
#include "dataset.h"
#include "dispatch.h"
#include "grad_ring.h"
#include "gradcheck.h"
#include "model.h"
#include "registry.h"
#include "shard_modes.h"
#include "step.h"
#include "sync_modes.h"
#include "test_spec.h"

/* S has 5,248,000 parameters. Over 2 ranks: slices of 2,624,000, no
 * padding; the AdamW moments 2 x 2,624,000 x 4 + the 28 bytes of its
 * numbers. Over 3: slices of 1,749,334, padded to 5,248,002 floats. */
static void test_need_by_hand(void)
{
    model_spec s = test_spec("S");
    memory_need whole, n;
    model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 64, 256, 2, &whole);
    n = whole;
    shard_memory_need(&n, SHARD_NONE, 2, &s, OPT_ADAMW);
    CHECK(memcmp(&n, &whole, sizeof n) == 0);
    n = whole;
    shard_memory_need(&n, SHARD_OPTIMIZER, 2, &s, OPT_ADAMW);
    CHECK(n.weights == 20992000 && n.gradients == 20992000);
    CHECK(n.optimizer_state == 20992028);
    CHECK(n.total == whole.total - 20992000);
    n = whole;
    shard_memory_need(&n, SHARD_GRADIENTS, 3, &s, OPT_ADAMW);
    CHECK(n.weights == 20992008);
    CHECK(n.gradients == (1749334 + 2 * 1049600) * 4); /* the slice, two buckets */
    CHECK(n.optimizer_state == 2 * 1749334 * 4 + 28);
    n = whole;
    shard_memory_need(&n, SHARD_OPTIMIZER, 3, &s, OPT_SGD);
    CHECK(n.optimizer_state == 0 && n.weights == 20992008);
}

/* ZeRO-2 by hand. S's tensors, from the end down: each layer's bias
 * (1,024) and weight (1,048,576, the largest) make one bucket of
 * 1,049,600 floats; the ring holds two. Over 2 ranks a rank keeps its
 * slice (2,624,000) and the ring: 4,723,200 floats against ZeRO-1's
 * whole 5,248,000, 2,099,200 bytes less. The gpt-cpu shape (d 128, 4
 * layers, seq 64, vocab 2048: 1,063,680 parameters): the tied token
 * embedding (262,144) has its own place; the rest, from the end down,
 * goes in buckets of at least an MLP weight (65,536): the final
 * LayerNorm with the last block's MLP projection (65,920), the MLP's
 * first layer (66,048), the second LayerNorm, the attention projection
 * and QKV (66,304, the largest), ...; a rank keeps its slice (531,840),
 * two buckets of 66,304 and the embedding: 926,592 floats against
 * 1,063,680, 548,352 bytes less. */
static void test_gradients_need_by_hand(void)
{
    const struct {
        const char *model;
        size_t optimizer, gradients;
    } rows[] = {
        {"S", 5248000 * 4, 4723200 * 4},
        {"gpt:d=128,layers=4,heads=4,seq=64,vocab=2048", 1063680 * 4, 926592 * 4},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        model_spec s = test_spec(rows[i].model);
        memory_need whole, opt, grad;
        model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 8, 64, 2, &whole);
        opt = grad = whole;
        shard_memory_need(&opt, SHARD_OPTIMIZER, 2, &s, OPT_ADAMW);
        shard_memory_need(&grad, SHARD_GRADIENTS, 2, &s, OPT_ADAMW);
        CHECK(opt.gradients == rows[i].optimizer);
        CHECK(grad.gradients == rows[i].gradients);
        CHECK(opt.total - grad.total == rows[i].optimizer - rows[i].gradients);
        CHECK(grad.weights == opt.weights && grad.optimizer_state == opt.optimizer_state);
    }
    /* An untied Llama: the head (the largest tensor) a bucket, then the
     * blocks' remainder, then the embedding as large as the head. The
     * remainder and the embedding once shared a bucket of 1.7 heads, and
     * ZeRO-2's two slots of it outgrew ZeRO-1's whole gradient; no bucket
     * now passes 1.5 x the largest, and ZeRO-2 holds less. */
    const char *llamas[] = {"llama-tiny", "llama-cpu"};
    for (size_t i = 0; i < sizeof llamas / sizeof *llamas; i++) {
        model_spec s = test_spec(llamas[i]);
        memory_need whole, opt, grad;
        model_memory_need(&s, DTYPE_FP32, OPT_ADAMW, 1, 2, 2, &whole);
        opt = grad = whole;
        shard_memory_need(&opt, SHARD_OPTIMIZER, 2, &s, OPT_ADAMW);
        shard_memory_need(&grad, SHARD_GRADIENTS, 2, &s, OPT_ADAMW);
        CHECK(grad.gradients < opt.gradients && grad.total < opt.total);
    }
}

/* mlp:hidden=4,layers=2,classes=3: 55 parameters, which neither 2 nor 3
 * ranks divide (their slices are padded). */
#define SHAPE "mlp:hidden=4,layers=2,classes=3"

static backend *cpu(void)
{
    backend *b = NULL;
    char why[320];
    CHECK(cpu_backend_create(DTYPE_FP32, &b, why, sizeof why) == BK_OK);
    return b;
}

static optimizer_config adamw_or(optimizer_kind kind)
{
    return (optimizer_config){.kind = kind, .lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f,
                              .eps = 1e-8f, .weight_decay = 0.1f};
}

/* What rank `rank` of `ranks` allocates (model, data, one micro-batch)
 * under shard mode `sh` is its need, and shrinking back to one rank gives
 * the unsharded need. */
static void test_need_matches_allocations(const char *shape, shard_mode sh,
                                          optimizer_kind kind, int ranks, int rank)
{
    backend *b = cpu();
    if (!b)
        return;
    model_spec p = test_spec(shape);
    CHECK(model_param_count(&p) % (size_t)ranks != 0);
    optimizer_config opt = adamw_or(kind);
    model m;
    dataset d;
    activations a;
    input_spec in;
    model_input(&p, &in);
    CHECK(model_create(b, &p, &opt, 1, &m) == BK_OK);
    CHECK(dataset_create(b, &in, 12, 3, 2, &d) == BK_OK);
    CHECK(activations_create(&m, 4, BK_ALLOC_HELD, &a) == BK_OK);
    CHECK(model_shard_state(&m, rank, ranks, shard_info_of(sh)->gradient_slice) == BK_OK);
    memory_need n;
    model_memory_need(&m.spec, DTYPE_FP32, kind, 4, 12, 3, &n); /* as it runs on b */
    shard_memory_need(&n, sh, ranks, &m.spec, kind);
    CHECK(b->mem_in_use == n.total - n.loss_sum); /* the loss sum is the step runner's */
    /* The check's whole gradient is outside the need and the peak. */
    size_t peak = b->mem_peak;
    CHECK(model_grads_whole(&m) == BK_OK);
    model_grads_sliced(&m);
    CHECK(b->mem_in_use == n.total - n.loss_sum && b->mem_peak == peak);
    CHECK(m.slice.ranks == ranks && m.slice.first == m.slice.len * (size_t)rank);
    CHECK(model_shard(&m, 0, 1) == BK_OK);
    model_memory_need(&m.spec, DTYPE_FP32, kind, 4, 12, 3, &n);
    CHECK(b->mem_in_use == n.total - n.loss_sum);
    activations_destroy(&m, &a, BK_ALLOC_HELD);
    dataset_destroy(&d);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

/* Two AdamW steps on the same gradient: the whole model's weights, or
 * (rank >= 0) rank `rank` of 3's, into w (n floats). */
static void two_steps(int rank, const float *grad, float *w, size_t n)
{
    backend *b = cpu();
    if (!b)
        return;
    model_spec p = test_spec(SHAPE);
    optimizer_config opt = adamw_or(OPT_ADAMW);
    model m;
    CHECK(model_create(b, &p, &opt, 7, &m) == BK_OK);
    if (rank >= 0)
        CHECK(model_shard(&m, rank, 3) == BK_OK);
    for (int step = 0; step < 2; step++) {
        CHECK(bk_upload(b, m.grads, grad, n * sizeof(float)) == BK_OK);
        CHECK(model_optimizer_step(&m, 0) == BK_OK);
    }
    CHECK(bk_download(b, w, m.params, n * sizeof(float)) == BK_OK);
    model_destroy(&m);
    b->ops->destroy(b);
}

static void test_slice_update(void)
{
    model_spec p = test_spec(SHAPE);
    size_t n = model_param_count(&p);
    float *grad = malloc(n * sizeof *grad), *whole = malloc(n * sizeof *whole),
          *start = malloc(n * sizeof *start), *mine = malloc(n * sizeof *mine);
    CHECK(grad && whole && start && mine);
    if (!grad || !whole || !start || !mine)
        return;
    for (size_t i = 0; i < n; i++)
        grad[i] = (float)((i * 37 % 11) - 5) * 0.1f;
    two_steps(-1, grad, whole, n);
    p.kind->init_weights(&p, 7, start);
    for (int r = 0; r < 3; r++) {
        two_steps(r, grad, mine, n);
        shard_slice sl = shard_slice_of(n, 3, r);
        int same = 1, untouched = 1;
        for (size_t i = 0; i < n; i++) {
            int in = i >= sl.first && i < sl.first + sl.count;
            if (in && memcmp(&mine[i], &whole[i], sizeof(float)) != 0)
                same = 0;
            if (!in && memcmp(&mine[i], &start[i], sizeof(float)) != 0)
                untouched = 0;
        }
        CHECK(same && untouched);
        CHECK(memcmp(whole, start, n * sizeof(float)) != 0); /* the step did something */
    }
    free(grad);
    free(whole);
    free(start);
    free(mine);
}

/* optimizer: a reduce-scatter where the sync mode would all-reduce;
 * gradients: after every micro-batch whatever the sync mode. */
static void test_schedule(void)
{
    for (int sync = 0; sync < SYNC_COUNT; sync++)
        for (int k = 0; k < 4; k++) {
            CHECK(shard_reduces_after(SHARD_OPTIMIZER, sync, k, 4) ==
                  sync_reduces_after(sync, k, 4));
            CHECK(shard_reduces_after(SHARD_NONE, sync, k, 4) == sync_reduces_after(sync, k, 4));
            CHECK(shard_reduces_after(SHARD_GRADIENTS, sync, k, 4) == 1);
            CHECK(shard_reduced_before(SHARD_GRADIENTS, sync, k) == (k > 0));
            CHECK(shard_reduced_before(SHARD_OPTIMIZER, sync, k) == sync_reduced_before(sync, k));
        }
    CHECK(!shard_info_of(SHARD_NONE)->slices_state);
    CHECK(shard_info_of(SHARD_OPTIMIZER)->slices_state &&
          !shard_info_of(SHARD_OPTIMIZER)->gradient_slice);
    CHECK(shard_info_of(SHARD_GRADIENTS)->slices_state &&
          shard_info_of(SHARD_GRADIENTS)->gradient_slice);
}

/* ZeRO-2's ring on every kind of the registry (and on each as if it
 * reported no ranges), a window of 5 = 2 + 2 + 1 at its test shape, as rank r of 2 and of 3 where the other ranks add
 * zeros (the reduction of a bucket leaves this rank's own numbers): the
 * slice holds the window's gradient of the unsharded model on the slice's
 * parameters (the same sums in another order: within 1e-6), its padding
 * zero, with reductions issued and every pass of the ring well ordered;
 * a second window gives the same slice to the bit (the slice starts at
 * zero, the buckets are written fresh). */
#define GPT_SHAPE "gpt:d=8,layers=2,heads=2,seq=5,vocab=13"

static int reductions;
static int count_reduce(void *ctx, float *buf, size_t a, size_t b)
{
    (void)ctx, (void)buf;
    reductions++;
    return a < b ? BK_OK : BK_ERROR;
}
static int no_wait(void *ctx) { return (void)ctx, BK_OK; }

/* The window's gradient of s (rank of ranks with the ring; ranks 0:
 * whole), n floats into out. */
static int window_of(backend *b, const model_spec *s, int ranks, int rank, float *out, size_t n)
{
    optimizer_config opt = adamw_or(OPT_ADAMW);
    char why[200];
    split sp;
    input_spec in;
    model m;
    dataset d;
    step_runner run;
    model_input(s, &in);
    CHECK(split_make(5, 2, 1, &sp, why, sizeof why) == 0);
    CHECK(model_create(b, s, &opt, 3, &m) == BK_OK);
    CHECK(dataset_create(b, &in, 5, 1, 11, &d) == BK_OK);
    if (ranks)
        CHECK(model_shard_state(&m, rank, ranks, 1) == BK_OK);
    grad_ring_hooks h = {.reduce = count_reduce, .wait = no_wait};
    if (ranks)
        grad_ring_set_hooks(&m, &h);
    int rc = step_runner_init(&run, &m, &d, &sp, MODE_ASYNC, REDUCTION_SUM);
    size_t len = ranks ? m.slice.len : n;
    float *again = malloc(len * sizeof *again);
    CHECK(again != NULL);
    for (int w = 0; w < 2 && !rc && again; w++)
        if (!(rc = step_window(&run, 0)))
            rc = bk_download(b, w ? again : out, m.grads, len * sizeof(float));
    CHECK(rc == BK_OK);
    if (!rc && again)
        CHECK(memcmp(again, out, len * sizeof(float)) == 0);
    free(again);
    if (!rc)
        step_runner_free(&run);
    dataset_destroy(&d);
    model_destroy(&m);
    return rc;
}

static void test_ring_windows(void)
{
    backend *b = cpu();
    if (!b)
        return;
    int kinds;
    const model_kind *const *k = model_kinds(&kinds);
    /* Each kind, and each as a kind that reported no ranges would run:
     * one bucket of the whole vector, reduced after the backward. */
    for (int i = 0; i < 2 * kinds; i++) {
        model_spec s = test_spec(k[i / 2]->test_shape);
        model_kind quiet = *s.kind;
        quiet.reports_grad_ready = 0;
        if (i % 2)
            s.kind = &quiet;
        size_t n = model_param_count(&s);
        if (i % 2)
            CHECK(grad_ring_floats(&s) == n); /* one slot, the whole vector */
        float *whole = calloc(n, sizeof *whole), *mine = calloc(n + 3, sizeof *mine);
        CHECK(whole && mine && window_of(b, &s, 0, 0, whole, n) == BK_OK);
        for (int ranks = 2; ranks <= 3 && whole && mine; ranks++)
            for (int r = 0; r < ranks; r++) {
                reductions = 0;
                shard_slice sl = shard_slice_of(n, ranks, r);
                CHECK(window_of(b, &s, ranks, r, mine, n + 3) == BK_OK);
                /* Two windows of 3 micro-batches: one bucket, or more, each. */
                CHECK(i % 2 ? reductions == 6 : reductions >= 6);
                CHECK(relative_error(mine, whole + sl.first, sl.count) < 1e-6);
                for (size_t j = sl.count; j < sl.len; j++)
                    CHECK(mine[j] == 0.0f);
            }
        free(whole);
        free(mine);
    }
    CHECK(b->mem_in_use == 0);
    b->ops->destroy(b);
}

static int fail_zero(backend *b, void *dst, size_t bytes)
{
    (void)dst;
    (void)bytes;
    snprintf(b->error, sizeof b->error, "zero refused (the test's)");
    return BK_ERROR;
}

/* The check's whole gradient, where its zeroing fails: nothing kept, so a
 * second call does not make another over the first (lost, its bytes in
 * use for good), and the accounting and the peak are as they were. */
static void test_whole_fails(void)
{
    backend *b = cpu();
    if (!b)
        return;
    model_spec p = test_spec(SHAPE);
    optimizer_config opt = adamw_or(OPT_ADAMW);
    model m;
    CHECK(model_create(b, &p, &opt, 1, &m) == BK_OK);
    CHECK(model_shard_state(&m, 1, 3, shard_info_of(SHARD_GRADIENTS)->gradient_slice) == BK_OK);
    size_t in_use = b->mem_in_use, peak = b->mem_peak;
    const backend_ops *ops = b->ops;
    backend_ops failing = *ops;
    failing.zero = fail_zero;
    b->ops = &failing;
    CHECK(model_grads_whole(&m) == BK_ERROR);
    CHECK(model_grads_whole(&m) == BK_ERROR);
    b->ops = ops;
    CHECK(!m.grads_whole && b->mem_in_use == in_use && b->mem_apart == 0 &&
          b->mem_peak == peak);
    CHECK(model_grads_whole(&m) == BK_OK);
    model_grads_sliced(&m);
    model_destroy(&m);
    CHECK(b->mem_in_use == 0 && b->mem_apart == 0);
    b->ops->destroy(b);
}

int main(void)
{
    test_need_by_hand();
    test_gradients_need_by_hand();
    for (shard_mode sh = SHARD_OPTIMIZER; sh <= SHARD_GRADIENTS; sh++) {
        test_need_matches_allocations(SHAPE, sh, OPT_ADAMW, 3, 2);
        test_need_matches_allocations(SHAPE, sh, OPT_ADAMW, 2, 0);
        test_need_matches_allocations(SHAPE, sh, OPT_SGD, 3, 1);
        test_need_matches_allocations(GPT_SHAPE, sh, OPT_ADAMW, 3, 1);
    }
    test_ring_windows();
    test_slice_update();
    test_schedule();
    test_whole_fails();
    return check_finish("test_shard");
}
