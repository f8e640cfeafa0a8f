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
#include "model.h"
#include "shard_modes.h"
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
    CHECK(n.weights == 20992008 && n.gradients == 20992008);
    CHECK(n.optimizer_state == 2 * 1749334 * 4 + 28);
    n = whole;
    shard_memory_need(&n, SHARD_OPTIMIZER, 3, &s, OPT_SGD);
    CHECK(n.optimizer_state == 0 && n.weights == 20992008);
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

/* What rank `rank` of `ranks` allocates (model, data, one micro-batch) is
 * its need, and shrinking back to one rank gives the unsharded need. */
static void test_need_matches_allocations(optimizer_kind kind, int ranks, int rank)
{
    backend *b = cpu();
    if (!b)
        return;
    model_spec p = test_spec(SHAPE);
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
    CHECK(model_shard(&m, rank, ranks) == BK_OK);
    memory_need n;
    model_memory_need(&p, DTYPE_FP32, kind, 4, 12, 3, &n);
    shard_memory_need(&n, SHARD_OPTIMIZER, ranks, &p, kind);
    CHECK(b->mem_in_use == n.total);
    CHECK(m.slice.ranks == ranks && m.slice.first == m.slice.len * (size_t)rank);
    CHECK(model_shard(&m, 0, 1) == BK_OK);
    model_memory_need(&p, DTYPE_FP32, kind, 4, 12, 3, &n);
    CHECK(b->mem_in_use == n.total);
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

int main(void)
{
    test_need_by_hand();
    test_need_matches_allocations(OPT_ADAMW, 3, 2);
    test_need_matches_allocations(OPT_ADAMW, 2, 0);
    test_need_matches_allocations(OPT_SGD, 3, 1);
    test_slice_update();
    test_schedule();
    return check_finish("test_shard");
}
